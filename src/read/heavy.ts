import { errors } from '../errors/catalog.js';
import type { Plan } from '../plan/plan.js';
import type { QueryNode } from '../query/ast.js';

/** Retry-After of a 503 for a full line (a heavy read takes seconds). */
const BUSY_RETRY_SECONDS = 5;

/**
 * A heavy read: one whose answer is large by its expected size — `expected` items (src/read/cost.ts: rows × the related
 * items each brings, whatever parameter asked) more than `maxItems` (HEAVY_READ_ITEMS), an export, `limit=-1` — or one
 * that walks a whole scope: an aggregate over every project in reach (narrowed to projects, or by id, it is light).
 */
export function isHeavy(q: QueryNode, plan: Plan, exporting: boolean, expected: number, maxItems: number): boolean {
  if (exporting || q.limit === -1 || expected > maxItems) return true;
  return (q.aggregate.length > 0 || q.groupBy.length > 0) && plan.ids === null && plan.scope.projects === null;
}

interface Waiter { readonly go: (release: () => void) => void; readonly cancel: () => void }

/**
 * No key starves another: per key (its cache partition), at most `perKey` heavy reads run at once on this instance; the
 * rest wait their turn in order, at most `queue` of them (legacy integrations never saw a 429: past the queue, a 503,
 * which they treat as v1 being busy). Light reads never wait here. A place given back goes straight to the next in line
 * (no newcomer can slip in between); a waiter whose client has gone leaves the line.
 */
export class HeavyReadGate {
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, Waiter[]>();
  /** The most heavy reads one key had running at once (tests). */
  peak = 0;

  constructor(private readonly perKey: number, private readonly queue: number) {}

  /**
   * Waits for a place; resolves to the function that gives it back (idempotent: call it when the answer has closed —
   * sent, or its client gone — or the read failed). `gone` aborts the wait (the client left).
   */
  async enter(key: string, gone?: AbortSignal): Promise<() => void> {
    const n = this.running.get(key) ?? 0;
    if (n < this.perKey) {
      this.running.set(key, n + 1);
      this.peak = Math.max(this.peak, n + 1);
      return this.releaser(key);
    }
    const line = this.waiting.get(key) ?? [];
    if (line.length >= this.queue) throw errors.busy('Too many exports and whole-scope reads of this key at once; retry shortly.', BUSY_RETRY_SECONDS);
    if (gone?.aborted) throw errors.serviceUnavailable('The client has gone.', 'gateway');
    return new Promise<() => void>((resolve, reject) => {
      const waiter: Waiter = {
        go: resolve,
        cancel: () => reject(errors.serviceUnavailable('The client has gone.', 'gateway')),
      };
      line.push(waiter);
      this.waiting.set(key, line);
      gone?.addEventListener('abort', () => {
        const i = line.indexOf(waiter);
        if (i < 0) return; // already let in: its release gives the place back
        line.splice(i, 1);
        if (line.length === 0) this.waiting.delete(key);
        waiter.cancel();
      }, { once: true });
    });
  }

  /** Heavy reads of this key running, and waiting. */
  load(key: string): { running: number; waiting: number } {
    return { running: this.running.get(key) ?? 0, waiting: this.waiting.get(key)?.length ?? 0 };
  }

  private releaser(key: string): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const line = this.waiting.get(key);
      const next = line?.shift();
      if (line && line.length === 0) this.waiting.delete(key);
      if (next) { next.go(this.releaser(key)); return; } // the place passes on: running stays
      const left = (this.running.get(key) ?? 1) - 1;
      if (left > 0) this.running.set(key, left);
      else this.running.delete(key);
    };
  }
}
