import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { percentDecoded } from '../lib/percent.js';

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

/**
 * A JWT (the gateway's access tokens, wherever they stand): `eyJ` and at least four characters, a dot, four more, a dot
 * and its last part, found in one pass over each run of JWT characters — a pattern tried at every `eyJ` of a 15 KB path
 * of `eyJeyJ…` looked to the run's end from each (373–406 ms a request, 16 anonymous connections held others' reads
 * 16 s: attack pass 32, H-1).
 */
function redactJwts(text: string): string {
  if (!text.includes('eyJ')) return text;
  return text.replace(/[A-Za-z0-9_.-]+/g, (run) => {
    const parts = run.split('.');
    let out = '';
    for (let k = 0; k < parts.length; k++) {
      const head = parts[k]!;
      const at = head.indexOf('eyJ');
      // (the earliest eyJ has the longest head; a JWT needs a head of 4 after it, a body of 4 and a last part)
      if (at >= 0 && head.length - at - 3 >= 4 && k + 2 < parts.length && parts[k + 1]!.length >= 4) {
        out += `${k > 0 ? '.' : ''}${head.slice(0, at)}[Redacted]`;
        k += 2; // (the body and the last part)
        continue;
      }
      out += `${k > 0 ? '.' : ''}${head}`;
    }
    return out;
  });
}

/** Query parameters whose values are credentials, by their name *after* decoding (as the gateway reads them). */
const SECRET_PARAMS = new Set(['access_token', 'refresh_token', 'password', 'token', 'api_key', 'key', 'secret', 'link']);

function decodedName(raw: string): string {
  const plus = raw.replaceAll('+', ' ');
  const name = percentDecoded(plus) ?? plus;
  const bracket = name.indexOf('[');
  return (bracket > 0 ? name.slice(0, bracket) : name).trim().toLowerCase();
}

/** True when a parameter or field of this name holds a credential (`access_token`, `%61ccess_token`, `token[]` …). */
export function isSecretName(raw: string): boolean {
  return SECRET_PARAMS.has(decodedName(raw));
}

/**
 * The most of a query (or fragment) the log scrubs and writes: SCRUB_CHARS characters in at most SCRUB_PAIRS name=value
 * pairs; a longer one is not written, only its length (no line to read, and each pair and escape is work: a 15 KB query of
 * 5 000 `%=` pairs held the event loop 35–47 ms a request, 16 anonymous connections stalled other tenants for seconds —
 * attack pass 30, H-1).
 */
export const SCRUB_CHARS = 4096;
export const SCRUB_PAIRS = 256;

/** Redacts the values of credential parameters in a query string, whatever the spelling of their names. */
function scrubQuery(query: string): string {
  const pairs = query.length > SCRUB_CHARS ? [] : query.split('&', SCRUB_PAIRS + 1);
  if (pairs.length === 0 || pairs.length > SCRUB_PAIRS) return `[Redacted: ${query.length} characters]`;
  return pairs.map((pair) => {
    const eq = pair.indexOf('=');
    if (eq < 0) return pair;
    return SECRET_PARAMS.has(decodedName(pair.slice(0, eq))) ? `${pair.slice(0, eq)}=${OWN_MARK}` : pair;
  }).join('&');
}

/**
 * What a text must contain for any rule below to change it: a secret parameter's name (each contains one of these
 * words: token, password, key, secret, link), a key prefix, a bearer, a JWT's head, or an encoding or a character
 * beyond ASCII that could spell one.
 */
const PLAIN_SUSPECT = /token|password|key|secret|link|sk_|bearer|eyj|[%+]|[^\x00-\x7f]/i;

/** The longest of SECRET_PARAMS (a longer run of letters is no credential's name). */
const NAME_MOST = Math.max(...[...SECRET_PARAMS].map((n) => n.length));
/**
 * A credential's long name anywhere, whatever stands around it (`idaccess_token=`, `access_token1=`, `access_token&#61;`,
 * `access_token:`): a client's mangled URL carries no such name but to carry a credential — attack pass 32, M-2.
 */
const LONG_NAME = /access_token|refresh_token|api_key/gi;

/** Brackets (`[]`, `[0]`, each short) then `=`. */
const BRACKETS_EQ = /(?:\[[^\]]{0,32}\])*=/y;

/** Whether a long name stands anywhere but as a pair the rules redacted (`access_token=` and `OWN_MARK`). */
function longNameLeft(t: string): boolean {
  LONG_NAME.lastIndex = 0;
  for (let m = LONG_NAME.exec(t); m !== null; m = LONG_NAME.exec(t)) {
    BRACKETS_EQ.lastIndex = m.index + m[0].length;
    if (!BRACKETS_EQ.test(t)) return true; // (no `=` after it, past `[]` or `[0]`)
    REDACTED_VALUE.lastIndex = BRACKETS_EQ.lastIndex;
    if (!REDACTED_VALUE.test(t)) return true;
  }
  return false;
}
/**
 * What the rules here write in place of a value while the text is checked — a lone surrogate, which no request line holds
 * (its bytes are read one to a character, and percent-decoding never makes one) — turned into `[Redacted]` once it is: a client that wrote the mark itself
 * (`x.access_token=[Redacted]%26<token>`, the re-check of attack pass 30) is no redacted pair, and the text needs no second
 * decoding to tell (it had one, for every URL holding a `%`).
 */
const OWN_MARK = '\ud800';
/** A value the rules redacted, and what may follow it: the whole value, to `&` or a space. */
const REDACTED_VALUE = /\ud800(?:$|[&\s])/y;

/**
 * Whether a credential's name is followed by a value not redacted anywhere in a decoded text, read twice: as it is (every
 * character beyond ASCII no part of a name) and folded (NFKC: a Kelvin sign, a long s, full-width letters as the letters
 * they stand for; a zero-width or other format character dropped). A name is a whole run of ASCII letters, digits and
 * `_`; before its `=` may stand only brackets with what they hold (`[]`, `[0]`, `[&]`) and characters that are not such:
 * attack pass 30, M-2 (`[]`, `.`, `%00` after a `#` or a second `?`: 16 spellings in clear) and its re-check (full-width
 * `&`, `²`, a combining accent: folded only, they hid the name).
 */
function secretLeft(decoded: string): boolean {
  if (longNameLeft(decoded) || leftIn(decoded)) return true;
  if (!/[^\x00-\x7f]/.test(decoded)) return false;
  // (combining marks dropped before folding: NFKC orders a run of them one by one — 64 000 alternating marks took 1.9 s,
  // attack pass 32, M-1 — and no mark is part of a name)
  return leftIn(decoded.replace(/[\p{M}\p{Cf}]/gu, '').normalize('NFKC').replace(/[\u0130\u0131]/g, 'i'));
}

/**
 * `secretLeft` on one reading: one pass, the text cut into pieces at `=`, and at `&`, `#` and `?` outside brackets; each
 * piece read back from its `=` once (linear: the re-check of pass 30 found a look-back past the piece quadratic —
 * `/%41]=]=…`, 15 KB, 47–82 ms).
 */
function leftIn(t: string): boolean {
  let from = 0; // where the current piece begins
  let depth = 0; // brackets open in it
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c === 91) depth++; // [
    else if (c === 93) { if (depth > 0) depth--; } // ]
    else if ((c === 38 || c === 35 || c === 63) && depth === 0) from = i + 1; // & # ?
    else if (c === 61) { // =
      if (endsWithName(t, from, i)) {
        REDACTED_VALUE.lastIndex = i + 1;
        if (!REDACTED_VALUE.test(t)) return true;
      }
      from = i + 1;
      depth = 0;
    }
  }
  return false;
}

const isWord = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;

/** Whether t[from, to) is a credential's name followed by brackets (what they hold) and non-word characters only. */
function endsWithName(t: string, from: number, to: number): boolean {
  let end = to;
  let opens = true; // (a [ may still stand in the piece before end: once none does, none will — a character looked at once)
  while (end > from) {
    const c = t.charCodeAt(end - 1);
    if (c === 93) { // ] — a bracket and what it holds, looked for within the piece only
      let open = opens ? end - 2 : from - 1;
      while (open >= from && t.charCodeAt(open) !== 91) open--;
      if (open < from) opens = false;
      end = open >= from ? open : end - 1;
    } else if (!isWord(c)) end--;
    else break;
  }
  let start = end;
  while (start > from && isWord(t.charCodeAt(start - 1))) start--;
  return end - start <= NAME_MOST && SECRET_PARAMS.has(t.slice(start, end).toLowerCase());
}

/**
 * A text percent-decoded until it no longer changes (eight times at most). (A `+` is left as it is: to `secretLeft` it
 * is, as a space, no part of a name; turning 64 000 of them into spaces took 3 ms.)
 */
function decodedAll(text: string): string {
  let t = text;
  for (let i = 0; i < 8 && t.includes('%'); i++) {
    const next = percentDecoded(t) ?? t.replace(/%([0-9a-f]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
    if (next === t) break;
    t = next;
  }
  return t;
}

/** Removes secrets from free text (URLs in request logs, error messages). */
export function scrubText(s: string): string {
  // nothing that can name or hold a secret: as it is (most URLs; the rules below cost several passes)
  if (!PLAIN_SUSPECT.test(s)) return s;
  // the whole query, quotes included (a URL may carry a raw ' or " before a credential parameter), and a fragment after
  // it or in place of it (`?fields=id#&access_token=…`, `/users/me#access_token=…`: a client's request line may carry
  // one — attack passes 26 F-B, 27 N-2)
  let out = s.replace(/([?#])(\S*)/g, (_m, mark: string, q: string) => `${mark}${scrubQuery(q)}`);
  const mark = (m: string) => (m.startsWith('sk_') ? 'sk_[Redacted]' : 'Bearer [Redacted]');
  for (const re of SECRET_IN_TEXT) out = out.replace(re, mark);
  out = redactJwts(out);
  // name=value pairs in free text outside a query string (error messages)
  out = out.replace(/(^|[\s&,;{(])(access_token|refresh_token|password)=[^&\s"]*/gi, (_m, pre: string, k: string) => `${pre}${k}=${OWN_MARK}`);
  // (a credential's name with a value still left anywhere, decoded — a query a client mangled: a second `?`, a `#` inside
  // it, an encoded `&` or `?`, a quote before the name, one in the path; attack pass 28, M-2 and its re-check: 23
  // spellings logged a static token in clear — and the text is cut before its first `?`, `#`, `%`, `&`, `;` or `=`)
  if (secretLeft(decodedAll(out))) {
    const cut = out.search(/[?#%&;=]/);
    return `${cut < 0 ? '' : out.slice(0, cut).replaceAll(OWN_MARK, '[Redacted]')}[Redacted]`;
  }
  return out.replaceAll(OWN_MARK, '[Redacted]');
}

/**
 * A request's URL as a log line writes it: its first SCRUB_CHARS characters scrubbed, the rest as its length alone (every
 * rule above is linear; this bounds each line's work and size whatever shape a URL finds next — attack passes 30–32
 * found three, each a quadratic look in a text of no bound).
 */
export function scrubUrl(url: string): string {
  if (url.length <= SCRUB_CHARS) return scrubText(url);
  return `${scrubText(url.slice(0, SCRUB_CHARS))}[… ${url.length - SCRUB_CHARS} characters more]`;
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[Redacted]' },
    serializers: {
      req: (req: { method?: string; url?: string; id?: string; ip?: string }) => ({
        id: req.id,
        method: req.method,
        url: req.url ? scrubUrl(req.url) : req.url,
        ip: req.ip,
      }),
      err: (err: Error) => ({ type: err.name, message: scrubText(err.message ?? ''), stack: err.stack ? scrubText(err.stack) : undefined }),
    },
  };
}

/** The longest a line waits in the logger's buffer: a quiet instance's lines (a warning, a request) are out within this. */
const LOG_FLUSH_MS = 100;
/** Text waiting past this is written at once. */
const LOG_BATCH_CHARS = 4096;

/** Outputs holding text not yet written, and access loggers holding lines: written on exit and on SIGTERM/SIGINT. */
const outputs = new Set<{ flushSync?: () => void }>();
const unflushed = new Set<AccessLogger>();
let exitHook = false;
let signalHooks = false;

function writeEverything(): void {
  for (const a of [...unflushed]) a.flush();
  for (const o of outputs) {
    try { o.flushSync?.(); } catch { /* not open yet, or closed: nothing to write */ }
  }
}

/** On exit — process.exit, the end of the work, an uncaught exception (Node emits `exit` then too) — all is written. */
function hookExit(): void {
  if (exitHook) return;
  exitHook = true;
  process.on('exit', writeEverything);
}

/**
 * On SIGTERM/SIGINT all is written at once. The listener does not change what the signal does: beside the process's
 * own handler (the gateway drains, then exits) it only writes; alone (a process without one: the command line), it
 * steps aside and sends the signal again, which then ends the process as it would have.
 */
function hookSignals(): void {
  if (signalHooks) return;
  signalHooks = true;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    const onSignal = (): void => {
      writeEverything();
      if (process.listenerCount(signal) === 1) {
        process.removeListener(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

/**
 * The logger's stdout: text is gathered and written together (one write per few lines instead of one per line: the
 * access log is on the hot path) — once 4 KiB wait, else LOG_FLUSH_MS after the first of them (an unref'd timer, armed
 * only while something waits: an idle instance does nothing). Each write is synchronous (pino's sync destination), so
 * what was written is the kernel's: a SIGKILL or an OOM kill loses at most the last LOG_FLUSH_MS. Exit (a crash
 * included), SIGTERM and SIGINT write what waits at once.
 */
class BatchedOutput implements DestinationStream {
  private pending = '';
  private timer: NodeJS.Timeout | undefined;
  private readonly out: DestinationStream;

  constructor(fd: number) {
    this.out = pino.destination({ dest: fd, sync: true });
    outputs.add(this);
    hookExit();
    hookSignals();
  }

  write(text: string): void {
    this.pending += text;
    if (this.pending.length >= LOG_BATCH_CHARS) this.flushSync();
    else if (this.timer === undefined) {
      this.timer = setTimeout(this.due, LOG_FLUSH_MS);
      this.timer.unref();
    }
  }

  private readonly due = (): void => {
    this.timer = undefined;
    this.flushSync();
  };

  /** pino's `logger.flush(cb)`: what waits is written before `cb` (the demo's banner comes after the log lines). */
  flush(cb?: (err?: Error) => void): void {
    this.flushSync();
    cb?.();
  }

  flushSync(): void {
    if (this.pending === '') return;
    const text = this.pending;
    this.pending = '';
    this.out.write(text);
  }
}

/** The gateway's logger: to `destination`, or to stdout through a BatchedOutput. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(loggerOptions(level), destination ?? new BatchedOutput(1));
}

/**
 * The access log: one line per request, written to the same destination as `logger` without pino's redaction pass (the
 * most expensive part of a line on the hot path) — safe because its object is built here from known-safe fields only:
 * the request id, method, scrubbed URL, client address, status and time. Never pass it anything else.
 */
export interface AccessLine { reqId: string; method: string; url: string; ip: string; statusCode: number; responseTime: number }

export interface AccessLogger {
  (line: AccessLine, debug: boolean): void;
  /** Writes the lines gathered so far (on close; also done at the end of each turn of the event loop). */
  flush(): void;
}

export function accessLogger(logger: Logger): AccessLogger {
  const stream = (logger as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym] as DestinationStream;
  // lines are gathered and written once per turn of the event loop (or every 16 KiB): a destination write per line cost
  // more than building the line
  let pending = '';
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    unflushed.delete(access);
    if (pending === '') return;
    const text = pending;
    pending = '';
    stream.write(text);
  };
  const access = Object.assign((l: AccessLine, debug: boolean) => {
    // pino's own line format (level number, epoch ms, the fields, msg), built here: a pino call costs ~3× this
    const level = debug ? 20 : 30;
    if (level < logger.levelVal) return;
    const id = JSON.stringify(l.reqId);
    pending += `{"level":${level},"time":${Date.now()},"reqId":${id},"req":{"id":${id},"method":${JSON.stringify(l.method)},` +
      `"url":${JSON.stringify(scrubUrl(l.url))}${l.ip === undefined ? '' : `,"ip":${JSON.stringify(l.ip)}`}},` +
      `"res":{"statusCode":${l.statusCode}},"responseTime":${Number.isFinite(l.responseTime) ? l.responseTime : null},"msg":"request completed"}\n`;
    if (pending.length >= 16_384) flush();
    else if (!scheduled) {
      scheduled = true;
      unflushed.add(access);
      setImmediate(flush);
    }
  }, { flush });
  // on exit its lines are written, then a destination that can be is flushed synchronously (a test's sink cannot)
  if (typeof (stream as { flushSync?: unknown }).flushSync === 'function') outputs.add(stream as unknown as { flushSync(): void });
  hookExit();
  return access;
}

type LogFn = (...args: unknown[]) => void;

/**
 * A request's logger that becomes a real pino child (its bindings redacted, serialised) only when a line is written at
 * an enabled level: most requests write none of their own (the access line is written by `accessLogger`), and making
 * a child per request was ~4 % of a warm read. Route-level log levels are not used by the gateway; a factory call with
 * one gets a real child at once.
 */
class LazyChild {
  private real: Logger | undefined;

  constructor(private readonly parent: Logger, private readonly bindings: pino.Bindings) {}

  private get logger(): Logger {
    return (this.real ??= this.parent.child(this.bindings));
  }

  private write(level: pino.Level, args: unknown[]): void {
    if (this.real || this.parent.isLevelEnabled(level)) (this.logger[level] as LogFn)(...args);
  }

  fatal(...args: unknown[]): void { this.write('fatal', args); }
  error(...args: unknown[]): void { this.write('error', args); }
  warn(...args: unknown[]): void { this.write('warn', args); }
  info(...args: unknown[]): void { this.write('info', args); }
  debug(...args: unknown[]): void { this.write('debug', args); }
  trace(...args: unknown[]): void { this.write('trace', args); }
  silent(): void {}

  get level(): string {
    return this.real?.level ?? this.parent.level;
  }

  set level(l: string) {
    this.logger.level = l;
  }

  isLevelEnabled(level: string): boolean {
    return this.real ? this.real.isLevelEnabled(level) : this.parent.isLevelEnabled(level);
  }

  child(bindings: pino.Bindings, options?: pino.ChildLoggerOptions): Logger {
    return this.logger.child(bindings, options);
  }
}

/** Fastify's childLoggerFactory: a lazy child per request (see LazyChild). */
export function lazyChildLogger(logger: Logger, bindings: pino.Bindings, opts: pino.ChildLoggerOptions): Logger {
  if (opts && Object.keys(opts).length > 0) return logger.child(bindings, opts);
  return new LazyChild(logger, bindings) as unknown as Logger;
}
