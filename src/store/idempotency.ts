import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

export type IdemRow = { state: 'pending' | 'done' | 'unknown'; request_hash: string; status: number | null; response: string | null; created_at: number };

/** Idempotency keys per user: the first answer is kept and replayed for the window. */
export class IdempotencyStore {
  constructor(private readonly db: Kysely<Database>, private readonly now: () => number = Date.now) {}

  /** Claims the key; returns undefined when claimed now, else the existing row. */
  async claim(userId: string, key: string, hash: string, windowMs: number): Promise<IdemRow | undefined> {
    const existing = await this.get(userId, key);
    if (existing && existing.created_at < this.now() - windowMs) {
      await this.db.deleteFrom('idempotency').where('user_id', '=', userId).where('key', '=', key).execute();
    } else if (existing) return existing;
    try {
      await this.db.insertInto('idempotency').values({ user_id: userId, key, request_hash: hash, state: 'pending', status: null, response: null, created_at: this.now() }).execute();
      return undefined;
    } catch {
      return (await this.get(userId, key)) ?? { state: 'pending', request_hash: hash, status: null, response: null, created_at: this.now() };
    }
  }

  async get(userId: string, key: string): Promise<IdemRow | undefined> {
    const r = await this.db.selectFrom('idempotency').select(['state', 'request_hash', 'status', 'response', 'created_at']).where('user_id', '=', userId).where('key', '=', key).executeTakeFirst();
    return r as IdemRow | undefined;
  }

  async finish(userId: string, key: string, state: 'done' | 'unknown', status: number, response: unknown): Promise<void> {
    await this.db.updateTable('idempotency').set({ state, status, response: JSON.stringify(response) }).where('user_id', '=', userId).where('key', '=', key).execute();
  }

  async release(userId: string, key: string): Promise<void> {
    await this.db.deleteFrom('idempotency').where('user_id', '=', userId).where('key', '=', key).execute();
  }
}
