import { errors } from '../errors/catalog.js';

/**
 * The memory of answers in flight: the bytes of every answer built whole and not yet sent (a slow reader pins its answer
 * until the last byte leaves), bounded per key (its cache partition) and per instance. An answer that would pass either
 * bound is refused with 503 and Retry-After (the client retries once others have been sent); an answer alone — its key,
 * or the instance, holding nothing else — is let through, so no answer waits forever behind others. An answer larger than
 * one key may hold is refused outright (a 400 naming the bound: no retry would fit it), so one key never holds more than
 * its bound and a slow reader of one key cannot turn every other key's reads into 503s.
 */
export class AnswerMemory {
  private readonly byKey = new Map<string, number>();
  private total = 0;

  constructor(private readonly perKeyBytes: number, private readonly totalBytes: number, private readonly retryAfterSeconds = 1) {}

  /** Holds `bytes` for `key` until the function answered is called (idempotent), or throws the 503. */
  hold(key: string, bytes: number): () => void {
    const most = Math.min(this.perKeyBytes, this.totalBytes);
    if (bytes > most) {
      const mb = (n: number) => `${Math.ceil(n / 1_048_576)} MB`;
      throw errors.invalidQuery([{
        path: 'fields',
        reason: `The answer would hold ${mb(bytes)}, more than one answer may (${mb(most)}, ANSWER_MEMORY_MB_PER_KEY). Ask for fewer items or `
          + 'fields, or page through them',
      }]);
    }
    const mine = this.byKey.get(key) ?? 0;
    if (mine > 0 && mine + bytes > this.perKeyBytes) {
      throw errors.gatewayBusy('Too many large answers of this key are being sent at once; retry shortly.', this.retryAfterSeconds);
    }
    if (this.total > 0 && this.total + bytes > this.totalBytes) {
      throw errors.gatewayBusy('Too many large answers are being sent at once; retry shortly.', this.retryAfterSeconds);
    }
    this.byKey.set(key, mine + bytes);
    this.total += bytes;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (this.byKey.get(key) ?? bytes) - bytes;
      if (left > 0) this.byKey.set(key, left);
      else this.byKey.delete(key);
      this.total -= bytes;
    };
  }

  /** Bytes held for `key`, or for the whole instance. */
  held(key?: string): number {
    return key === undefined ? this.total : this.byKey.get(key) ?? 0;
  }
}
