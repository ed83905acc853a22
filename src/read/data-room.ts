import { errors } from '../errors/catalog.js';

/** Retry-After of a wait that ran out: the answers holding the room are sent (or dropped) within seconds of being read. */
const WAITED_RETRY_SECONDS = 5;

/** An evaluation waiting for room. */
interface Waiter { readonly key: string; readonly bytes: number; readonly go: () => void }

/**
 * The evaluations that may wait for room at once, per key and per instance; past either the next is a 503 with
 * Retry-After at once (attack pass 23, N1: one user's 6 000 pipelined reads of a large item waited, and their waits
 * ending together held every request of the instance 25 s to 3 min — each drop rescanned the line).
 */
export const DATA_WAITERS_PER_KEY = 256;
export const DATA_WAITERS = 4096;

/**
 * The render data being built into answers — read from the store, parsed and projected, an evaluation at a time — by
 * its stored size, bounded per key (its cache partition) and per instance. An evaluation takes room before it reads the
 * data it missed and gives it back when it ends; one for which there is no room waits, in order, so one key's many
 * parallel reads of large data are built one after another, not all at once (100 parallel reads of 16 MB items took an
 * instance past 2 GB and held other keys' reads for seconds: attack pass 7, N1). Items once built are the answer
 * memory's (src/read/in-flight.ts).
 *
 * While a key's answers not yet sent hold more than the answer memory's bound for it (or the instance's answers more than
 * the instance's: `sending.over`), its evaluations wait too: readers that stopped reading hold back the building of more
 * (`recheck` when some is sent).
 *
 * Never a deadlock: an evaluation that holds room already is never made to wait for more (it grows past the bound by
 * what it still reads, itself bounded by HAND_BYTES or MAX_ITEM_MB); one larger than a bound waits until nothing else
 * of its key (or of the instance) is built. (Answers held whole never pass the answer memory's bounds: only what was
 * built and handed to a socket does, and that is given back as it is sent or its client leaves.)
 */
export class DataRoom {
  private readonly byKey = new Map<string, number>();
  private total = 0;
  private waiting: Waiter[] = [];
  private readonly waitingOf = new Map<string, number>();
  /** A wake asked for by waiters leaving: one for all that leave in a turn of the event loop. */
  private wakeSoon = false;

  constructor(
    private readonly perKeyBytes: number,
    private readonly totalBytes: number,
    private readonly sending: { over(key: string): boolean } = { over: () => false },
    /** The longest an evaluation waits for room (DATA_WAIT_MS); past it a 503 with Retry-After. 0: no bound. */
    private readonly waitMs = 0,
  ) {}

  /**
   * Room for `bytes` of `key`'s data; `holding`: the evaluation holds room already (it does not wait). The release is
   * idempotent. `gone` (the client left) ends the wait: a 503, nothing built for nobody. A wait longer than `waitMs` ends
   * too, in a 503 with Retry-After: the room it waits for is held by answers whose readers are not reading — possibly
   * its own client's, which reads no answer before every one has begun (its answers would wait for each other until the
   * connection's idle timeout: attack pass 10). `afterWrite`: the answer of a write already made — its wait ends by
   * going in past the bound instead (a write's own answer is never turned into a retryable 503: attack pass 11, M — a
   * client obeying Retry-After made the render twice).
   */
  async take(key: string, bytes: number, holding = false, gone?: AbortSignal, afterWrite = false): Promise<() => void> {
    if (gone?.aborted) throw errors.serviceUnavailable('The client has gone.', 'gateway');
    // (a key's own waiters keep their order: none passes an earlier one of its key)
    if (!holding && ((this.waitingOf.get(key) ?? 0) > 0 || !this.fits(key, bytes))) {
      // (never the answer of a write already made: a client obeying Retry-After would make it twice — attack pass 11)
      if (!afterWrite && ((this.waitingOf.get(key) ?? 0) >= DATA_WAITERS_PER_KEY || this.waiting.length >= DATA_WAITERS)) {
        const whose = this.waiting.length >= DATA_WAITERS ? 'on this instance' : 'of this key';
        throw errors.busy(`Too many reads ${whose} wait for the memory their answers need; retry shortly.`, WAITED_RETRY_SECONDS);
      }
      await new Promise<void>((go, fail) => {
        const drop = (why: Error) => {
          if (!this.unqueue(w)) return; // (let in already: its release gives the room back)
          gone?.removeEventListener('abort', left);
          clearTimeout(timer);
          fail(why);
          this.wakeLater(); // (it may have held back later waiters of its key)
        };
        const left = () => drop(errors.serviceUnavailable('The client has gone.', 'gateway'));
        const waited = afterWrite
          ? () => { if (this.unqueue(w)) { this.add(key, bytes); w.go(); } }
          : () => drop(errors.busy('Answers of this key not yet read hold the memory its answer needs; retry shortly.', WAITED_RETRY_SECONDS));
        const timer = this.waitMs > 0 ? setTimeout(waited, this.waitMs) : undefined;
        timer?.unref();
        const w: Waiter = { key, bytes, go: () => { gone?.removeEventListener('abort', left); clearTimeout(timer); go(); } };
        this.waiting.push(w);
        this.counted(key, 1);
        gone?.addEventListener('abort', left, { once: true });
      });
    } else {
      this.add(key, bytes);
    }
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.add(key, -bytes);
      this.wake();
    };
  }

  /**
   * `take` for one answer of `key`: a wait ends when `gone` aborts (its reply closed: sent, or its client gone), and so
   * does any room the answer still holds then — whatever path its items took (a stream dropped half-way, a source left
   * suspended), the room never outlives the reply (attack pass 9: a client leaving a stream left its key's room held).
   * `afterWrite`: as `take`'s.
   */
  forAnswer(key: string, gone?: AbortSignal, afterWrite = false): (bytes: number, holding: boolean) => Promise<() => void> {
    if (!gone) return (bytes, holding) => this.take(key, bytes, holding, undefined, afterWrite);
    const held = new Set<() => void>();
    gone.addEventListener('abort', () => {
      for (const r of [...held]) r();
    }, { once: true });
    return async (bytes, holding) => {
      const release = await this.take(key, bytes, holding, gone, afterWrite);
      const once = () => {
        held.delete(once);
        release();
      };
      if (gone.aborted) {
        release();
        throw errors.serviceUnavailable('The client has gone.', 'gateway');
      }
      held.add(once);
      return once;
    };
  }

  /** Bytes being built for `key`, or in the whole instance; evaluations waiting. */
  held(key?: string): number {
    return key === undefined ? this.total : this.byKey.get(key) ?? 0;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Lets in the waiters that fit now (some of the answers' memory was given back). */
  recheck(): void {
    if (this.waiting.length > 0) this.wake();
  }

  private fits(key: string, bytes: number): boolean {
    if (this.sending.over(key)) return false;
    const ofKey = this.byKey.get(key) ?? 0;
    return (ofKey === 0 || ofKey + bytes <= this.perKeyBytes) && (this.total === 0 || this.total + bytes <= this.totalBytes);
  }

  private add(key: string, bytes: number): void {
    const left = (this.byKey.get(key) ?? 0) + bytes;
    if (left > 0) this.byKey.set(key, left);
    else this.byKey.delete(key);
    this.total += bytes;
  }

  /** `w` taken out of the line (false: it was not in it — let in already). */
  private unqueue(w: Waiter): boolean {
    const i = this.waiting.indexOf(w);
    if (i < 0) return false;
    this.waiting.splice(i, 1);
    this.counted(w.key, -1);
    return true;
  }

  /** The count of `key`'s waiters moved by `by`. */
  private counted(key: string, by: number): void {
    const n = (this.waitingOf.get(key) ?? 0) + by;
    if (n > 0) this.waitingOf.set(key, n);
    else this.waitingOf.delete(key);
  }

  /** One wake for every waiter leaving in this turn (thousands leaving together woke the line once each). */
  private wakeLater(): void {
    if (this.wakeSoon) return;
    this.wakeSoon = true;
    setImmediate(() => {
      this.wakeSoon = false;
      this.wake();
    });
  }

  /**
   * Waiters that fit now are let in, in order (one that does not fit holds none of the others of other keys back, and
   * every later one of its own key): one pass over the line.
   */
  private wake(): void {
    if (this.waiting.length === 0) return; // (every release asks: most find no one waiting)
    const blocked = new Set<string>();
    const left: Waiter[] = [];
    const going: Waiter[] = [];
    for (const w of this.waiting) {
      if (!blocked.has(w.key) && this.fits(w.key, w.bytes)) {
        this.add(w.key, w.bytes);
        this.counted(w.key, -1);
        going.push(w);
      } else {
        blocked.add(w.key);
        left.push(w);
      }
    }
    this.waiting = left;
    for (const w of going) w.go();
  }
}

/**
 * Rooms an answer's evaluations handed over (`settle`'s `kept`), given back together once the answer is counted in the
 * answer memory (or it failed): the room passes from the data room to the answer memory with no moment between.
 */
export class KeptRoom {
  private readonly drops: (() => void)[] = [];
  readonly keep = (drop: () => void): void => { this.drops.push(drop); };
  release(): void {
    for (const d of this.drops.splice(0)) d();
  }
}
