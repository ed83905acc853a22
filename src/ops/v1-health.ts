import type { Clock } from '../lib/clock.js';
import type { V1CallInfo } from '../v1/client.js';

export type HealthStatus = 'ok' | 'warn' | 'error';

/** A call v1 answered (any HTTP status below 500, 429 aside) shows it reachable; none or a 5xx/429 does not. */
const reached = (c: V1CallInfo): boolean => c.status !== null && c.status < 500 && c.status !== 429;

/**
 * v1 reachability from the gateway's recent calls (no probe of its own: a probe would need a key): `error` when
 * every call of the window failed (at least `minFailures`), `warn` when some did, `ok` otherwise or with no calls.
 */
export class V1Health {
  private calls: { at: number; ok: boolean }[] = [];
  constructor(private readonly clock: Clock, private readonly windowMs = 60_000, private readonly minFailures = 3) {}

  record(info: V1CallInfo): void {
    const now = this.clock.now();
    this.calls.push({ at: now, ok: reached(info) });
    if (this.calls.length > 500) this.calls = this.calls.slice(-250);
  }

  check(): { status: HealthStatus; calls: number; failures: number; lastOkAt: number | null } {
    const since = this.clock.now() - this.windowMs;
    const recent = this.calls.filter((c) => c.at >= since);
    const failures = recent.filter((c) => !c.ok).length;
    const lastOk = [...this.calls].reverse().find((c) => c.ok);
    const status: HealthStatus = failures === 0 ? 'ok' : failures === recent.length && failures >= this.minFailures ? 'error' : 'warn';
    return { status, calls: recent.length, failures, lastOkAt: lastOk?.at ?? null };
  }
}

/** Whether the process is taking new work: readiness goes 503 as soon as a shutdown begins. */
export class Lifecycle {
  private drainingSince: number | null = null;
  get draining(): boolean { return this.drainingSince !== null; }
  drain(now: number): void { this.drainingSince ??= now; }
}
