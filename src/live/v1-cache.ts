import { LRUCache } from 'lru-cache';
import { FINAL_STATUSES, type RenderStatus } from '../v1/schemas.js';

/**
 * One cache for v1 answers, partitioned per v1 key: every entry's key starts with the key's partition
 * id, so two keys never share an entry. Final renders live longer than moving ones, but never past
 * the signed URLs they carry.
 */
export class V1Cache {
  private readonly lru: LRUCache<string, { value: unknown }>;
  /** Look-ups that found a live entry / found none (metrics). */
  hits = 0;
  misses = 0;
  constructor(readonly ttl: { metadataMs: number; renderActiveMs: number; renderFinalMs: number; signedUrlMs: number }, max = 10_000) {
    this.lru = new LRUCache({ max, ttlAutopurge: false, allowStale: false });
  }

  get<T>(partition: string, key: string): T | undefined {
    const e = this.lru.get(`${partition}|${key}`);
    if (e) this.hits++;
    else this.misses++;
    return e?.value as T | undefined;
  }

  set(partition: string, key: string, value: unknown, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.lru.set(`${partition}|${key}`, { value }, { ttl: ttlMs });
  }

  /** TTL of a render by its status: final ones longer, capped by the signed URL lifetime. */
  renderTtl(r: { readonly status: RenderStatus }): number {
    return FINAL_STATUSES.has(r.status) ? Math.min(this.ttl.renderFinalMs, this.ttl.signedUrlMs) : this.ttl.renderActiveMs;
  }

  /** Updates an entry in every partition that holds it (a webhook carries a fresher render). */
  replaceEverywhere(key: string, value: unknown, ttlMs: number): number {
    let n = 0;
    for (const k of [...this.lru.keys()]) {
      if (k.slice(k.indexOf('|') + 1) === key) { this.lru.set(k, { value }, { ttl: ttlMs }); n++; }
    }
    return n;
  }

  /** Drops an entry from every partition (another instance applied a fresher copy). */
  deleteEverywhere(key: string): number {
    let n = 0;
    for (const k of [...this.lru.keys()]) if (k.slice(k.indexOf('|') + 1) === key) { this.lru.delete(k); n++; }
    return n;
  }

  clear(): void {
    this.lru.clear();
  }
}
