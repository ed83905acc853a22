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
   * Adds `calls` to every scope's row of `minute` if each still fits its limit; all or none (a scope that refuses
   * gives back what the ones before it took). True when reserved.
   */
  async reserve(scopes: readonly BudgetScope[], calls: number, minute: number): Promise<boolean> {
    const taken: BudgetScope[] = [];
    for (const s of scopes) {
      const r = await sql<{ used: number }>`insert into index_sync_calls (scope, minute, used) values (${s.scope}, ${minute}, ${calls})
        on conflict (scope, minute) do update set used = index_sync_calls.used + excluded.used
        where index_sync_calls.used + excluded.used <= ${s.limit} returning used`.execute(this.db);
      if (r.rows.length === 0) {
        for (const t of taken) await this.add([t.scope], -calls, minute);
        return false;
      }
      taken.push(s);
    }
    await this.sweep(minute);
    return true;
  }

  /** Adds calls made (or, negative, gives back calls reserved and not made) to every scope's row of `minute`. */
  async add(scopes: readonly string[], calls: number, minute: number): Promise<void> {
    if (calls === 0) return;
    for (const scope of scopes) {
      await sql`insert into index_sync_calls (scope, minute, used) values (${scope}, ${minute}, ${Math.max(0, calls)})
        on conflict (scope, minute) do update set used = case when index_sync_calls.used + ${calls} < 0 then 0
          else index_sync_calls.used + ${calls} end`.execute(this.db);
    }
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
