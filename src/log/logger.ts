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
  /(access_token|refresh_token|password)=[^&\s"]*/gi,
  /Bearer\s+[A-Za-z0-9._~+/=-]+/gi,
];

/** Removes secrets from free text (URLs in request logs, error messages). */
export function scrubText(s: string): string {
  let out = s;
  for (const re of SECRET_IN_TEXT) out = out.replace(re, (m) => (m.includes('=') ? `${m.split('=')[0]}=[Redacted]` : m.startsWith('sk_') ? 'sk_[Redacted]' : 'Bearer [Redacted]'));
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

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return destination ? pino(loggerOptions(level), destination) : pino(loggerOptions(level));
}
