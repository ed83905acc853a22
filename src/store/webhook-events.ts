import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import { supersedesSql } from './recency.js';

/**
 * What the webhook receiver remembers, shared by every instance: the deliveries already applied (by the signed body
 * id) and the newest state applied per render (updated_at, then the lifecycle rank), so a replay or an older event
 * changes nothing.
 */
export class WebhookLedger {
  constructor(private readonly db: Kysely<Database>, private readonly now: () => number = Date.now) {}

  /** True the first time this event id is seen (by any instance). */
  async firstDelivery(id: string, team: string): Promise<boolean> {
    const r = await this.db.insertInto('webhook_events').values({ id, team, received_at: this.now() })
      .onConflict((oc) => oc.column('id').doNothing()).executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
  }

  /** Forgets a delivery (its processing failed before it was applied, so a retry may apply it). */
  async forget(id: string): Promise<void> {
    await this.db.deleteFrom('webhook_events').where('id', '=', id).execute();
  }

  /**
   * Records a render's state when it is not older than the one applied (updated_at, then rank); true when it is the
   * newest now — in one statement, so two instances applying two events of one render agree.
   */
  async newer(v1Id: string, updatedAt: number, rank: number): Promise<boolean> {
    const r = await this.db.insertInto('render_versions').values({ v1_id: v1Id, updated_at: updatedAt, rank })
      .onConflict((oc) => oc.column('v1_id')
        .doUpdateSet({ updated_at: sql<number>`excluded.updated_at`, rank: sql<number>`excluded.rank` })
        .where(sql<boolean>`${sql.raw(supersedesSql('render_versions'))}`))
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) >= 1;
  }

  /** Drops delivery ids older than `maxAgeMs` (they can no longer pass the tolerance window anyway). */
  async prune(maxAgeMs: number): Promise<void> {
    await this.db.deleteFrom('webhook_events').where('received_at', '<', this.now() - maxAgeMs).execute();
  }
}
