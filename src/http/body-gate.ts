import { errors } from '../errors/catalog.js';

/**
 * The request bodies one principal has in flight, bounded in bytes: past PRINCIPAL_BODY_BYTES at once, the next request
 * with a body waits its turn, its body not read (`wait`), or — where no line is kept (`enter`) — is answered 429. A body
 * held while its request runs costs several times its size (the bytes, the parsed question, its lowered text) and the
 * work of its question: one user's 1 000 parallel 900 KB SEARCH bodies took an instance with a 1 GB heap to its end in
 * 22 s (attack pass 19, F2), and 32 MB of them at once — 35 questions of 900 KB compiled in each turn of the event loop —
 * held another user's one-item read 2–5 s (attack pass 21, R1). Requests without a body pass. The bytes are given back
 * once the request has ended — its question run and its reply closed (src/http/request-end.ts) — not when its client
 * hangs up (attack pass 20, N2).
 */
export const PRINCIPAL_BODY_BYTES = 4 * 1_048_576;
/**
 * The bodies of every principal in flight at once: past it, one whose principal holds one already waits too — as many
 * as one user's (four users' 16 MiB of 900 KB SEARCH bodies held another user's reads 1.1–1.4 s, p50: attack pass 22, P3).
 */
export const BODIES_IN_FLIGHT_BYTES = 4 * 1_048_576;
/** A body this small is cheap to parse and run: it passes the all-principals bound (not its own principal's). */
export const SMALL_BODY_BYTES = 64 * 1024;
/** Requests of one principal waiting for their body's turn; past it, a 429. */
export const PRINCIPAL_BODY_LINE = 256;

/** Retry-After of a wait that ran out: a few bodies are read and answered within seconds. */
const WAITED_RETRY_SECONDS = 2;

interface Waiter { readonly key: string; readonly bytes: number; readonly go: (leave: () => void) => void }

export class BodyGate {
  private readonly inFlight = new Map<string, number>();
  private total = 0;
  private readonly waiting: Waiter[] = [];

  constructor(private readonly most = PRINCIPAL_BODY_BYTES, private readonly mostInAll = Number.POSITIVE_INFINITY, private readonly line = 0) {}

  /** Takes `bytes` for `key`: the function that gives them back (once), or undefined when they do not fit (one body always does). */
  enter(key: string, bytes: number): (() => void) | undefined {
    if (this.waiting.some((w) => w.key === key) || !this.fits(key, bytes)) return undefined;
    return this.take(key, bytes);
  }

  /**
   * `enter`, or a wait in the key's line (in order) until the bytes fit; undefined when they do not and the line is full.
   * `gone`: the client left — the wait ends in a 503 (nothing is answered to nobody).
   */
  async wait(key: string, bytes: number, gone: AbortSignal, waitMs = 0): Promise<(() => void) | undefined> {
    const now = this.enter(key, bytes);
    if (now) return now;
    if (this.waiting.filter((w) => w.key === key).length >= this.line) return undefined;
    if (gone.aborted) throw errors.serviceUnavailable('The client has gone.', 'gateway');
    return new Promise<() => void>((resolve, reject) => {
      const drop = (why: Error) => {
        const i = this.waiting.indexOf(w);
        if (i < 0) return; // (let in already: its release gives the bytes back)
        this.waiting.splice(i, 1);
        gone.removeEventListener('abort', left);
        clearTimeout(timer);
        reject(why);
        this.wake(); // (it may have held back later ones of its key)
      };
      const left = () => drop(errors.serviceUnavailable('The client has gone.', 'gateway'));
      // (a wait past `waitMs` ends in a 503 with Retry-After: its body unread, the request's own timeout would answer 408
      // to a client that sent in time, and its place stay held — a paused connection sees no close: review of P3's fix)
      const full = () => errors.busy('This user\'s request bodies in flight hold the room this one needs; retry shortly.', WAITED_RETRY_SECONDS);
      const timer = waitMs > 0 ? setTimeout(() => drop(full()), waitMs) : undefined;
      timer?.unref();
      const w: Waiter = { key, bytes, go: (leave) => { gone.removeEventListener('abort', left); clearTimeout(timer); resolve(leave); } };
      this.waiting.push(w);
      gone.addEventListener('abort', left, { once: true });
    });
  }

  /** Bytes in flight for `key`, or for every key; requests waiting. */
  held(key?: string): number {
    return key === undefined ? this.total : this.inFlight.get(key) ?? 0;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Whether `bytes` more fit `key`: one body of a key holding none always does, and a small one (SMALL_BODY_BYTES) within
   * its key's bytes whatever all keys hold — one user's trickled bodies filling the shared bytes left every other user
   * one body at a time, a 200-byte PATCH waiting behind its own upload (review of attack pass 22's fixes, M2).
   */
  private fits(key: string, bytes: number): boolean {
    const held = this.inFlight.get(key) ?? 0;
    return held === 0 || (held + bytes <= this.most && (bytes <= SMALL_BODY_BYTES || this.total + bytes <= this.mostInAll));
  }

  private take(key: string, bytes: number): () => void {
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + bytes);
    this.total += bytes;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.inFlight.get(key) ?? bytes) - bytes;
      if (left <= 0) this.inFlight.delete(key);
      else this.inFlight.set(key, left);
      this.total -= bytes;
      this.wake();
    };
  }

  /** Lets in the waiters that fit now, in order: none passes an earlier one of its key. */
  private wake(): void {
    const blocked = new Set<string>();
    for (let i = 0; i < this.waiting.length;) {
      const w = this.waiting[i]!;
      if (!blocked.has(w.key) && this.fits(w.key, w.bytes)) {
        this.waiting.splice(i, 1);
        w.go(this.take(w.key, w.bytes));
      } else {
        blocked.add(w.key);
        i++;
      }
    }
  }
}
