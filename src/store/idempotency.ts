import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

export type IdemState = 'pending' | 'done' | 'unknown';
export interface IdemRow {
  readonly state: IdemState;
  readonly request_hash: string;
  readonly status: number | null;
  readonly response: string | null;
  readonly created_at: number;
  readonly lease_until: number | null;
  readonly started_at: number | null;
  readonly project_v1: string | null;
  readonly render_name: string | null;
  readonly render_v1_id: string | null;
}
/** What an earlier attempt under the same key did before it stopped (a crash, a lost answer). */
export interface EarlierAttempt {
  readonly startedAt: number;
  readonly projectV1: string;
  readonly name: string;
  readonly renderV1Id: string | null;
}

export type Claim = { readonly kind: 'claimed'; readonly earlier?: EarlierAttempt } | { readonly kind: 'held'; readonly row: IdemRow };

const COLUMNS = [
  'state',
  'request_hash',
  'status',
  'response',
  'created_at',
  'lease_until',
  'started_at',
  'project_v1',
  'render_name',
  'render_v1_id',
] as const;

const earlierOf = (r: IdemRow): EarlierAttempt | undefined =>
  r.started_at !== null && r.project_v1 && r.render_name !== null
    ? { startedAt: Number(r.started_at), projectV1: r.project_v1, name: r.render_name, renderV1Id: r.render_v1_id }
    : undefined;

/**
 * Idempotency keys per user: the first answer is kept and replayed for the window. A pending claim holds a lease;
 * a claim whose lease ran out (its holder crashed) or whose outcome was unknown is taken over — atomically, by one
 * request — together with what the earlier attempt recorded, so the render it may have created is looked for first.
 */
export class IdempotencyStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number = Date.now,
  ) {}

  async claim(userId: string, key: string, hash: string, windowMs: number, leaseMs: number): Promise<Claim> {
    const now = this.now();
    const existing = await this.get(userId, key);
    if (existing && existing.created_at < now - windowMs) {
      await this.db
        .deleteFrom('idempotency')
        .where('user_id', '=', userId)
        .where('key', '=', key)
        .where('created_at', '=', existing.created_at)
        .execute();
    } else if (existing) {
      const stale =
        existing.state === 'unknown' || (existing.state === 'pending' && (existing.lease_until === null || Number(existing.lease_until) < now));
      if (!stale || existing.request_hash !== hash) return { kind: 'held', row: existing };
      // one request takes it over: the update matches only while the row is still as read
      const r = await this.db
        .updateTable('idempotency')
        .set({ state: 'pending', lease_until: now + leaseMs })
        .where('user_id', '=', userId)
        .where('key', '=', key)
        .where('state', '=', existing.state)
        .where((eb) => (existing.lease_until === null ? eb('lease_until', 'is', null) : eb('lease_until', '=', existing.lease_until)))
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 1) return { kind: 'claimed', ...(earlierOf(existing) ? { earlier: earlierOf(existing)! } : {}) };
      return { kind: 'held', row: (await this.get(userId, key)) ?? existing };
    }
    try {
      await this.db
        .insertInto('idempotency')
        .values({
          user_id: userId,
          key,
          request_hash: hash,
          state: 'pending',
          status: null,
          response: null,
          created_at: now,
          lease_until: now + leaseMs,
          started_at: null,
          project_v1: null,
          render_name: null,
          render_v1_id: null,
        })
        .execute();
      return { kind: 'claimed' };
    } catch {
      const row = await this.get(userId, key);
      if (!row) return this.claim(userId, key, hash, windowMs, leaseMs);
      return { kind: 'held', row };
    }
  }

  async get(userId: string, key: string): Promise<IdemRow | undefined> {
    const r = await this.db
      .selectFrom('idempotency')
      .select([...COLUMNS])
      .where('user_id', '=', userId)
      .where('key', '=', key)
      .executeTakeFirst();
    return r as IdemRow | undefined;
  }

  /** Records what this attempt is about to create, before it asks v1 (a crash after this point can be recovered). */
  async attempt(userId: string, key: string, a: { startedAt: number; projectV1: string; name: string }): Promise<void> {
    await this.db
      .updateTable('idempotency')
      .set({ started_at: a.startedAt, project_v1: a.projectV1, render_name: a.name, render_v1_id: null })
      .where('user_id', '=', userId)
      .where('key', '=', key)
      .execute();
  }

  /** Records the render v1 created for this key, as soon as it is known. */
  async created(userId: string, key: string, renderV1Id: string): Promise<void> {
    await this.db.updateTable('idempotency').set({ render_v1_id: renderV1Id }).where('user_id', '=', userId).where('key', '=', key).execute();
  }

  async finish(userId: string, key: string, state: 'done' | 'unknown', status: number, response: unknown): Promise<void> {
    await this.db
      .updateTable('idempotency')
      .set({ state, status, response: JSON.stringify(response), lease_until: null })
      .where('user_id', '=', userId)
      .where('key', '=', key)
      .execute();
  }

  async release(userId: string, key: string): Promise<void> {
    await this.db.deleteFrom('idempotency').where('user_id', '=', userId).where('key', '=', key).execute();
  }

  /** Which of these renders an idempotency record (of any user) names as its own. */
  async claimedRenders(v1Ids: readonly string[]): Promise<Set<string>> {
    if (v1Ids.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('idempotency')
      .select('render_v1_id')
      .where('render_v1_id', 'in', [...v1Ids])
      .execute();
    return new Set(rows.map((r) => r.render_v1_id as string));
  }
}
