import { errors } from '../errors/catalog.js';

/**
 * The memory of answers in flight: the bytes of every answer held whole and not yet sent (a slow reader pins its answer
 * until the last byte leaves), bounded per key (its cache partition) and per instance, and counted while the answer is
 * built — an item at a time, before the next is serialised — never measured once it is whole.
 *
 * An answer that would pass either bound while another answer holds memory there is refused with 503 and Retry-After
 * (the client retries once others have been sent); an answer alone — its key, or the instance, holding nothing else —
 * is let through. An answer that outgrows what one answer may hold (the smaller of the two bounds) is not refused: its
 * holder is told so (`add` answers false) and sends the rest as a stream, each item built as the client reads it; so one
 * key never holds more than its bound and a slow reader of one key cannot turn every other key's reads into 503s.
 */
export class AnswerMemory {
  private readonly byKey = new Map<string, number>();
  private total = 0;

  constructor(private readonly perKeyBytes: number, private readonly totalBytes: number, private readonly retryAfterSeconds = 1) {}

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
    if (ofKey > mine && ofKey + bytes > this.perKeyBytes) {
      throw errors.gatewayBusy('Too many large answers of this key are being sent at once; retry shortly.', this.retryAfterSeconds);
    }
    if (this.total > mine && this.total + bytes > this.totalBytes) {
      throw errors.gatewayBusy('Too many large answers are being sent at once; retry shortly.', this.retryAfterSeconds);
    }
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
   * Adds `bytes` to the answer: true when held; false when the answer would outgrow what one answer may hold (nothing
   * added: its holder streams the rest); throws the 503 when another answer's memory leaves no room.
   */
  add(bytes: number): boolean {
    if (this.done) return false;
    try {
      if (!this.memory.grow(this.key, this.bytes, bytes)) return false;
    } catch (e) {
      this.release();
      throw e;
    }
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
