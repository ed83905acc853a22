import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/** The minute a moment falls in (the sync budget's window). */
export const minuteOf = (ms: number): number => Math.floor(ms / 60_000);

/** A scope of the sync budget and its calls per minute: `team:<id>` or `key:<partition>` (never a key itself). */
export interface BudgetScope {
  readonly scope: string;
  readonly limit: number;
}

/**
 * The sync's v1 calls in the store (`index_sync_calls`), one row per scope and minute, shared by every instance: a
 * reservation is one statement that adds calls to the minute's row only while they fit (an upsert with a condition),
 * so N instances spend one budget. SQLite and PostgreSQL alike.
 */
export class SyncCallStore {
  private sweptMinute = 0;

  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Adds `calls` to every scope's row of `minute` if each still fits its limit; all or none. One statement (a multi-row
   * upsert, each row's limit by its scope) — issue 43: a sync's bookkeeping in as few statements as it can; a scope that
   * refuses (rare: the budget spent) costs one more, giving back what the others took. When reserved, the calls each
   * scope's row then holds (every instance's: what the rest of the minute has left); null when not.
   */
  async reserve(scopes: readonly BudgetScope[], calls: number, minute: number): Promise<ReadonlyMap<string, number> | null> {
    if (scopes.length === 0) return new Map();
    const rows = sql.join(scopes.map((s) => sql`(${s.scope}, ${minute}, ${calls})`));
    const limit = sql.join(scopes.map((s) => sql`when ${s.scope} then cast(${s.limit} as integer)`), sql` `);
    const r = await sql<{ scope: string; used: number | string }>`insert into index_sync_calls (scope, minute, used) values ${rows}
      on conflict (scope, minute) do update set used = index_sync_calls.used + excluded.used
      where index_sync_calls.used + excluded.used <= case excluded.scope ${limit} end returning scope, used`.execute(this.db);
    if (r.rows.length < scopes.length) {
      await this.add(r.rows.map((x) => x.scope), -calls, minute);
      return null;
    }
    await this.sweep(minute);
    return new Map(r.rows.map((x) => [x.scope, Number(x.used)]));
  }

  /**
   * Adds calls made (or, negative, gives back calls reserved and not made) to every scope's row of `minute`, in one
   * statement.
   */
  async add(scopes: readonly string[], calls: number, minute: number): Promise<void> {
    if (calls === 0 || scopes.length === 0) return;
    const rows = sql.join(scopes.map((scope) => sql`(${scope}, ${minute}, ${Math.max(0, calls)})`));
    await sql`insert into index_sync_calls (scope, minute, used) values ${rows}
      on conflict (scope, minute) do update set used = case when index_sync_calls.used + ${calls} < 0 then 0
        else index_sync_calls.used + ${calls} end`.execute(this.db);
  }

  /** The calls of every scope counted in `minute` (scopes with none are absent). */
  async used(minute: number): Promise<Map<string, number>> {
    const rows = await this.db.selectFrom('index_sync_calls').select(['scope', 'used']).where('minute', '=', minute).execute();
    return new Map(rows.map((r) => [r.scope, Number(r.used)]));
  }

  /** Rows older than an hour go (at most once a minute per instance). */
  private async sweep(minute: number): Promise<void> {
    if (minute === this.sweptMinute) return;
    this.sweptMinute = minute;
    await this.db.deleteFrom('index_sync_calls').where('minute', '<', minute - 60).execute();
  }
}
