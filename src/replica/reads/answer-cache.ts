import { LRUCache } from 'lru-cache';
import { questionText } from '../../query/querystring.js';

/** Bytes an answer takes: a string's UTF-16 code units, a buffer's length. */
const sizeOf = (body: string | Buffer) => (typeof body === 'string' ? 2 * body.length : body.length);

/** Past this many characters an answer is kept as bytes. */
const AS_BYTES_PAST = 4096;

/** One serialised answer and what it was computed from. */
interface Entry {
  /**
   * JSON text. A short one is kept as a string (Node writes it in one piece with the headers); a long one as UTF-8
   * bytes (encoding it again on every answer would cost more than the second piece of the write).
   */
  readonly body: string | Buffer;
  /** The versions of everything the answer was read from (teams in reach, overlays): any change is a miss. */
  readonly epoch: string;
  /** The answer is not given after this moment (its signed URLs near expiry; a bounded age). */
  readonly until: number;
}

/**
 * Answers of replica reads, serialised, kept while nothing they were read from has changed: the replica moves a
 * version per team on every change an answer can show, so an entry is exact, not merely recent — a write, a webhook or
 * a sync is seen by the next read. Keys carry the v1 key's partition and the user (the cache is partitioned per key);
 * sizes are bounded in bytes. Answers whose content depends on the clock ($NOW) or on the caller beyond key and user
 * ($CURRENT_USER…) are never offered to it (see `answerCacheKey`).
 */
export class AnswerCache {
  private readonly lru: LRUCache<string, Entry> | null;
  /** Reads answered with a kept answer. */
  hits = 0;
  /** Reads computed from the replica that the cache could have answered (counted by the caller that computes them). */
  misses = 0;

  constructor(maxBytes: number, private readonly maxEntryBytes = Math.max(1, Math.floor(maxBytes / 16))) {
    this.lru = maxBytes > 0
      ? new LRUCache<string, Entry>({ maxSize: maxBytes, sizeCalculation: (e, k) => sizeOf(e.body) + 2 * (k.length + e.epoch.length) + 64 })
      : null;
  }

  get enabled(): boolean {
    return this.lru !== null;
  }

  /** Whether an answer is kept for `key`, whatever its validity. */
  holds(key: string): boolean {
    return this.lru?.has(key) ?? false;
  }

  /** The answer kept for `key` when it was read at `epoch` and may still be given at `now` (an outdated one is dropped). */
  get(key: string, epoch: string, now: number): string | Buffer | undefined {
    const e = this.lru?.get(key);
    if (e && e.epoch === epoch && now < e.until) {
      this.hits++;
      return e.body;
    }
    if (e) this.lru?.delete(key);
    return undefined;
  }

  set(key: string, epoch: string, until: number, json: string | Buffer): void {
    if (!this.lru) return;
    const long = json.length > AS_BYTES_PAST;
    const body = typeof json === 'string' ? (long ? Buffer.from(json) : json) : long ? json : json.toString('utf8');
    if (sizeOf(body) <= this.maxEntryBytes) this.lru.set(key, { body, epoch, until });
  }

  get size(): number {
    return this.lru?.size ?? 0;
  }
}

/** Query parameters whose value is a credential (never part of a key: the same query with another token is the same). */

/**
 * The cache key of a GET of an item route, or null when its answer must be computed every time: a query that names a
 * dynamic variable (`$NOW`, `$CURRENT_USER`…, also percent-encoded) or one too long to be worth keeping. (Exports and
 * explained answers are never offered: the caller checks those.)
 */
export function answerCacheKey(partition: string, userId: string, route: string, id: string, url: string): string | null {
  const query = questionText(url);
  if (query.length > 2048 || query.includes('$') || /%24/i.test(query)) return null;
  return `${partition}\n${userId}\n${route}\n${id}\n${query}`;
}
