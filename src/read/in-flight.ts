/**
 * The memory of answers in flight: the bytes of every answer held whole and not yet sent (a slow reader pins its answer
 * until the last byte leaves), bounded per key (its cache partition) and per instance, and counted while the answer is
 * built — an item at a time, before the next is serialised — never measured once it is whole.
 *
 * An answer that would pass either bound is never refused: its holder is told so (`add` answers false) and sends the rest
 * as a stream, each item built as the client reads it (a stream holds at most 64 KB waiting for its reader, and one item);
 * what it had built is given back once written. So one key never holds more than its bound, the instance never more
 * than its own, and readers that never read pin at most those bounds — they turn no other reader away.
 */
export class AnswerMemory {
  private readonly byKey = new Map<string, number>();
  private total = 0;

  constructor(private readonly perKeyBytes: number, private readonly totalBytes: number) {}

  /** The most one answer may hold whole. */
  get most(): number {
    return Math.min(this.perKeyBytes, this.totalBytes);
  }

  /** A hold for one answer of `key`, empty until bytes are added; given back with `release` (idempotent). */
  reserve(key: string): AnswerHold {
    return new AnswerHold(this, key);
  }

  /** Bytes held for `key`, or for the whole instance. */
  held(key?: string): number {
    return key === undefined ? this.total : this.byKey.get(key) ?? 0;
  }

  /** @internal (AnswerHold) */
  grow(key: string, mine: number, bytes: number): boolean {
    if (mine + bytes > this.most) return false;
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
  }
}

/** The bytes one answer holds in the answer memory. */
export class AnswerHold {
  private bytes = 0;
  private done = false;

  constructor(private readonly memory: AnswerMemory, private readonly key: string) {}

  /**
   * Adds `bytes` to the answer: true when held; false when the key's or the instance's bound leaves no room for them
   * (nothing added: its holder streams the rest).
   */
  add(bytes: number): boolean {
    if (this.done || !this.memory.grow(this.key, this.bytes, bytes)) return false;
    this.bytes += bytes;
    return true;
  }

  get held(): number { return this.bytes; }

  release(): void {
    if (this.done) return;
    this.done = true;
    this.memory.shrink(this.key, this.bytes);
    this.bytes = 0;
  }
}
