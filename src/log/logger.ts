import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

/** Paths pino censors everywhere: credentials, tokens and v1 keys never reach a log line. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'authorization',
  'password',
  '*.password',
  'access_token',
  '*.access_token',
  'refresh_token',
  '*.refresh_token',
  'apiKey',
  '*.apiKey',
  'api_key',
  '*.api_key',
  'token',
  '*.token',
  'secret',
  '*.secret',
];

const SECRET_IN_TEXT = [
  /sk_[A-Za-z0-9]{32}/g,
  /Bearer\s+[A-Za-z0-9._~+/=-]+/gi,
];

/** Query parameters whose values are credentials, by their name *after* decoding (as the gateway reads them). */
const SECRET_PARAMS = new Set(['access_token', 'refresh_token', 'password', 'token', 'api_key', 'key', 'secret', 'link']);

function decodedName(raw: string): string {
  const plus = raw.replace(/\+/g, ' ');
  let name: string;
  try { name = decodeURIComponent(plus); } catch { name = plus; }
  const bracket = name.indexOf('[');
  return (bracket > 0 ? name.slice(0, bracket) : name).trim().toLowerCase();
}

/** Redacts the values of credential parameters in a query string, whatever the spelling of their names. */
function scrubQuery(query: string): string {
  return query.split('&').map((pair) => {
    const eq = pair.indexOf('=');
    if (eq < 0) return pair;
    return SECRET_PARAMS.has(decodedName(pair.slice(0, eq))) ? `${pair.slice(0, eq)}=[Redacted]` : pair;
  }).join('&');
}

/** Removes secrets from free text (URLs in request logs, error messages). */
export function scrubText(s: string): string {
  let out = s.replace(/\?([^\s"'#]*)/g, (_m, q: string) => `?${scrubQuery(q)}`);
  for (const re of SECRET_IN_TEXT) out = out.replace(re, (m) => (m.startsWith('sk_') ? 'sk_[Redacted]' : 'Bearer [Redacted]'));
  // name=value pairs in free text outside a query string (error messages)
  out = out.replace(/(^|[\s&,;{(])(access_token|refresh_token|password)=[^&\s"]*/gi, (_m, pre: string, k: string) => `${pre}${k}=[Redacted]`);
  return out;
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[Redacted]' },
    serializers: {
      req: (req: { method?: string; url?: string; id?: string; ip?: string }) => ({
        id: req.id,
        method: req.method,
        url: req.url ? scrubText(req.url) : req.url,
        ip: req.ip,
      }),
      err: (err: Error) => ({ type: err.name, message: scrubText(err.message ?? ''), stack: err.stack ? scrubText(err.stack) : undefined }),
    },
  };
}

/**
 * The gateway's logger. Without a destination it writes to stdout through a 4 KiB buffer (one write per few lines
 * instead of one per line: the access log is on the hot path); pino flushes it on exit.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(loggerOptions(level), destination ?? pino.destination({ dest: 1, sync: false, minLength: 4096 }));
}

/**
 * The access log: one line per request, written to the same destination as `logger` without pino's redaction pass (the
 * most expensive part of a line on the hot path) — safe because its object is built here from known-safe fields only:
 * the request id, method, scrubbed URL, client address, status and time. Never pass it anything else.
 */
export interface AccessLine { reqId: string; method: string; url: string; ip: string; statusCode: number; responseTime: number }

export function accessLogger(logger: Logger): (line: AccessLine, debug: boolean) => void {
  const access = pino({ level: logger.level, base: undefined }, (logger as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym]);
  return (l, debug) => {
    const level = debug ? 'debug' : 'info';
    if (!access.isLevelEnabled(level)) return;
    const req = { id: l.reqId, method: l.method, url: scrubText(l.url), ip: l.ip };
    access[level]({ reqId: l.reqId, req, res: { statusCode: l.statusCode }, responseTime: l.responseTime }, 'request completed');
  };
}
