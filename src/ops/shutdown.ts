/** What a graceful shutdown needs; timers are injected so the deadline can be tested without waiting. */
export interface ShutdownParts {
  /** Readiness goes 503 at once: load balancers stop sending new requests. */
  drain(): void;
  /** Stops accepting, lets in-flight requests finish, releases resources. */
  close(): Promise<void>;
  readonly graceMs: number;
  exit(code: number): void;
  log(message: string, fields?: Record<string, unknown>): void;
  readonly setTimer?: (fn: () => void, ms: number) => { cancel(): void };
}

const realTimer = (fn: () => void, ms: number) => { const t = setTimeout(fn, ms); t.unref(); return { cancel: () => clearTimeout(t) }; };

/**
 * Drain, then close within SHUTDOWN_GRACE_MS: exit 0 when everything closed in time, exit 1 at the deadline with
 * whatever is still running cut off.
 */
export async function shutdown(p: ShutdownParts, signal: string): Promise<void> {
  p.log('shutting down: draining', { signal, graceMs: p.graceMs });
  p.drain();
  let done = false;
  const timer = (p.setTimer ?? realTimer)(() => {
    if (done) return;
    done = true;
    p.log('shutdown deadline passed: exiting with requests still in flight', { graceMs: p.graceMs });
    p.exit(1);
  }, p.graceMs);
  try {
    await p.close();
  } catch (e) {
    p.log('error while closing', { error: (e as Error).message });
  }
  if (done) return;
  done = true;
  timer.cancel();
  p.exit(0);
}
