import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { scrubText, scrubUrl } from './scrub.js';

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
