/**
 * The memory of answers in flight: the bytes of every answer held whole and not yet sent (a slow reader pins its answer
 * until the last byte leaves), bounded per key (its cache partition) and per instance, and counted while the answer is
 * built — an item at a time, before the next is serialised — never measured once it is whole.
 *
 * An answer that would pass either bound is never refused: its holder is told so (`add` answers false) and sends the rest
 * as a stream, each item built as the client reads it; what it had built is given back once written. What is built
 * already is carried (`carry`), even past a bound: one item sent whole, a streamed chunk handed to its socket and not yet
 * sent (src/http/paced-body.ts). Past a bound (`over`), no more render data is built for that key (or for any key, past
 * the instance's: src/read/data-room.ts waits) until some is sent or its client gone — readers that stopped reading pin
 * about the bound, not an item each (attack pass 8: 130 stalled readers of 16 MB items held 3.3 GB).
 */
/** A key's answers of render data that may each hold their whole share of its room at once (`reserve`'s `shared`). */
export const ANSWERS_A_KEY_HOLDS = 4;

export class AnswerMemory {
  private readonly byKey = new Map<string, number>();
  private total = 0;
  private readonly freed: (() => void)[] = [];

  constructor(private readonly perKeyBytes: number, private readonly totalBytes: number) {}

  /** The most one answer may hold whole. */
  get most(): number {
    return Math.min(this.perKeyBytes, this.totalBytes);
  }

  /**
   * A hold for one answer of `key`, empty until bytes are added; given back with `release` (idempotent). `shared`: the
   * answer holds at most a share of its key's room whole (ANSWERS_A_KEY_HOLDS), or its first item — a page, which a reader
   * that stops reading pins: a few of one key's such readers leave room for its next answer. (Whole up to the key's room,
   * the first stalled reader of a page larger than it pinned all of it, and the key's next read of render data waited
   * DATA_WAIT_MS for a 503 — on some machines, as the kernel's socket buffers took less of the first answers.)
   */
  reserve(key: string, shared = false): AnswerHold {
    return new AnswerHold(this, key, shared ? this.most / ANSWERS_A_KEY_HOLDS : this.most);
  }

  /** Bytes held for `key`, or for the whole instance. */
  held(key?: string): number {
    return key === undefined ? this.total : this.byKey.get(key) ?? 0;
  }

  /**
   * Whether `key` holds more than its bound, or — holding something itself — the instance more than its own (only what was
   * carried passes them). A key that holds nothing is never over: past the instance's bound each key still builds an
   * answer at a time (stalled readers of a few keys held every other key's reads of render data: a reading check).
   */
  over(key: string): boolean {
    const ofKey = this.byKey.get(key) ?? 0;
    return ofKey > this.perKeyBytes || (ofKey > 0 && this.total > this.totalBytes);
  }

  /** `listener` is told each time bytes are given back. */
  onFree(listener: () => void): void {
    this.freed.push(listener);
  }

  /** @internal (AnswerHold) */
  force(key: string, bytes: number): void {
    this.byKey.set(key, (this.byKey.get(key) ?? 0) + bytes);
    this.total += bytes;
  }

  /** @internal (AnswerHold) */
  grow(key: string, mine: number, bytes: number, most = this.most): boolean {
    // (an answer's first item may take the whole of what one answer holds, whatever its share)
    if (mine + bytes > (mine === 0 ? this.most : most)) return false;
    const ofKey = this.byKey.get(key) ?? 0;
    if (ofKey + bytes > this.perKeyBytes || this.total + bytes > this.totalBytes) return false;
    this.byKey.set(key, ofKey + bytes);
    this.total += bytes;
    return true;
  }

  /** @internal (AnswerHold) */
  shrink(key: string, bytes: number): void {
    const left = (this.byKey.get(key) ?? bytes) - bytes;
    if (left > 0) this.byKey.set(key, left);
    else this.byKey.delete(key);
    this.total -= bytes;
    if (bytes > 0) for (const f of this.freed) f();
  }
}

/** The bytes one answer holds in the answer memory. */
export class AnswerHold {
  private bytes = 0;
  private done = false;

  constructor(private readonly memory: AnswerMemory, private readonly key: string, private readonly most: number) {}

  /**
   * Adds `bytes` to the answer: true when held; false when the key's or the instance's bound leaves no room for them
   * (nothing added: its holder streams the rest).
   */
  add(bytes: number): boolean {
    if (this.done || !this.memory.grow(this.key, this.bytes, bytes, this.most)) return false;
    this.bytes += bytes;
    return true;
  }

  /** Adds bytes built already (an item sent whole, a chunk handed to the socket), even past a bound. */
  carry(bytes: number): void {
    if (this.done || bytes <= 0) return;
    this.memory.force(this.key, bytes);
    this.bytes += bytes;
  }

  /** What the answer holds is now `bytes` (a stream's bytes not yet sent): the rest is given back. */
  settle(bytes: number): void {
    if (this.done) return;
    if (bytes > this.bytes) this.carry(bytes - this.bytes);
    else if (bytes < this.bytes) {
      const given = this.bytes - bytes;
      this.bytes = bytes;
      this.memory.shrink(this.key, given);
    }
  }

  get held(): number { return this.bytes; }

  release(): void {
    if (this.done) return;
    this.done = true;
    this.memory.shrink(this.key, this.bytes);
    this.bytes = 0;
  }
}
