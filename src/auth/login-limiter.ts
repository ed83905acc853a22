import { sql, type Kysely } from 'kysely';
import { sha256 } from '../store/crypto.js';
import type { Database } from '../store/schema.js';
import { peerKey } from '../lib/peer.js';

/** A row's key: the kind and a digest of the account or address (a fixed 64 hex characters, whatever the client sent). */
export const limitKey = (kind: 'a' | 'ip', value: string): string => `${kind}:${sha256(value)}`;

/**
 * Login attempts per account and per client address (an IPv6 one by its /64, lib/peer.ts), in the store (shared by every instance, kept across restarts),
 * counted in fixed windows of LOGIN_FAILURE_WINDOW_MS. An attempt is counted *before* its password is checked, in one
 * atomic statement per key, so parallel attempts cannot outrun the limit; a success clears the account's count. Keys
 * are digests (limitKey): a row's size does not depend on what the client sent.
 */
export class LoginLimiter {
  private attempts = 0;
  constructor(
    private readonly db: Kysely<Database>, private readonly maxPerAccount: number, private readonly maxPerAddress: number,
    private readonly windowMs: number, private readonly now: () => number = Date.now,
  ) {}

  /** Counts one attempt; answers the seconds to wait (the attempt is refused) or 0 (it may be checked). */
  async attempt(account: string, address: string): Promise<number> {
    if (++this.attempts % 500 === 0) await this.prune();
    const waits = await Promise.all([this.count(limitKey('a', account), this.maxPerAccount), this.count(limitKey('ip', peerKey(address)), this.maxPerAddress)]);
    return Math.max(...waits);
  }

  /** A successful login: the account starts afresh, and the address gets its attempt back (only failures count). */
  async succeed(account: string, address: string): Promise<void> {
    await this.db.deleteFrom('login_limits').where('key', '=', limitKey('a', account)).execute();
    await this.db.updateTable('login_limits').set({ count: sql<number>`count - 1` })
      .where('key', '=', limitKey('ip', peerKey(address))).where('count', '>', 0).execute();
  }

  /** Drops windows that have ended (housekeeping). */
  async prune(): Promise<void> {
    await this.db.deleteFrom('login_limits').where('window_start', '<', this.now() - this.windowMs).execute();
  }

  private async count(key: string, max: number): Promise<number> {
    const now = this.now();
    const expired = now - this.windowMs;
    // one statement: a new window when the old one has ended, else one more attempt in it
    const row = await this.db.insertInto('login_limits').values({ key, window_start: now, count: 1 })
      .onConflict((oc) => oc.column('key').doUpdateSet({
        count: sql<number>`case when login_limits.window_start <= ${expired} then 1 else login_limits.count + 1 end`,
        window_start: sql<number>`case when login_limits.window_start <= ${expired} then ${now} else login_limits.window_start end`,
      }))
      .returning(['count', 'window_start'])
      .executeTakeFirstOrThrow();
    if (Number(row.count) <= max) return 0;
    return Math.max(1, Math.ceil((Number(row.window_start) + this.windowMs - now) / 1000));
  }
}
