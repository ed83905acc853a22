import { LRUCache } from 'lru-cache';

/**
 * Counts failed logins per account and per client address in a sliding window; past the limit, further
 * attempts are refused (429) until the window has moved on. A success clears the account's count.
 */
export class LoginLimiter {
  private readonly failures: LRUCache<string, number[]>;

  constructor(private readonly maxPerAccount: number, private readonly maxPerAddress: number, private readonly windowMs: number, private readonly now: () => number = Date.now) {
    this.failures = new LRUCache({ max: 100_000, ttl: windowMs });
  }

  /** Seconds to wait, or 0 when an attempt is allowed. */
  retryAfter(account: string, address: string): number {
    return Math.max(this.wait(`a:${account}`, this.maxPerAccount), this.wait(`ip:${address}`, this.maxPerAddress));
  }

  fail(account: string, address: string): void {
    for (const k of [`a:${account}`, `ip:${address}`]) this.failures.set(k, [...this.recent(k), this.now()]);
  }

  succeed(account: string): void {
    this.failures.delete(`a:${account}`);
  }

  private recent(k: string): number[] {
    const t = this.now() - this.windowMs;
    return (this.failures.get(k) ?? []).filter((x) => x > t);
  }

  private wait(k: string, max: number): number {
    const r = this.recent(k);
    if (r.length < max) return 0;
    const oldest = r[r.length - max] as number;
    return Math.max(1, Math.ceil((oldest + this.windowMs - this.now()) / 1000));
  }
}
