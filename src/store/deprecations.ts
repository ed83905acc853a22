import { sql, type Kysely } from 'kysely';
import type { ChangeBus } from './changes.js';
import type { Database } from './schema.js';

/** The change-bus topic of the deprecation rules: every instance reads them again when it hears it. */
export const DEPRECATIONS_TOPIC = 'deprecations';
/** Days of calls kept per rule and client (a sunset is announced months ahead); older days are dropped. */
export const DAYS_KEPT = 400;
export const DAY_MS = 86_400_000;

/** A rule as set: its JSON (validated before it is written) and when its id was first set. */
export interface StoredRule { readonly id: string; readonly rule: unknown; readonly setAt: number }

/** One (rule, client, day)'s increments since the last flush. */
export interface CallDelta {
  readonly rule: string;
  readonly client: string;
  readonly day: number;
  calls: number;
  refused: number;
  observed: number;
  last: number;
}

export interface CallRow {
  readonly rule: string;
  readonly client: string;
  readonly day: number;
  readonly calls: number;
  readonly refused: number;
  readonly observed: number;
  readonly lastSeen: number;
}

/** The deprecation rules and their call counts, kept in the store; a change of the rules is announced on the bus. */
export class DeprecationStore {
  constructor(private readonly db: Kysely<Database>, private readonly bus: Pick<ChangeBus, 'publish'>) {}

  async rules(): Promise<StoredRule[]> {
    const rows = await this.db.selectFrom('deprecation_rules').selectAll().orderBy('position').execute();
    return rows.map((r) => ({ id: r.id, rule: JSON.parse(r.rule) as unknown, setAt: Number(r.set_at) }));
  }

  /**
   * Replaces every rule (an empty list clears them): a rule id set before keeps its `set_at` (its counts go on); the
   * counts of rules no longer set are dropped. Announced to every instance.
   */
  async replace(rules: readonly { readonly id: string }[], now: number): Promise<StoredRule[]> {
    const stored = await this.db.transaction().execute(async (tx) => {
      const before = new Map((await tx.selectFrom('deprecation_rules').select(['id', 'set_at']).execute()).map((r) => [r.id, Number(r.set_at)]));
      await tx.deleteFrom('deprecation_rules').execute();
      const rows = rules.map((r, position) => ({ id: r.id, position, rule: JSON.stringify(r), set_at: before.get(r.id) ?? now }));
      if (rows.length) await tx.insertInto('deprecation_rules').values(rows).execute();
      const kept = rows.map((r) => r.id);
      let gone = tx.deleteFrom('deprecation_calls');
      if (kept.length) gone = gone.where('rule_id', 'not in', kept);
      await gone.execute();
      return rows.map((r) => ({ id: r.id, rule: JSON.parse(r.rule) as unknown, setAt: r.set_at }));
    });
    await this.bus.publish(DEPRECATIONS_TOPIC);
    return stored;
  }

  /** Adds counted calls; drops days older than DAYS_KEPT. */
  async addCalls(deltas: readonly CallDelta[], now: number): Promise<void> {
    for (const d of deltas) {
      await this.db.insertInto('deprecation_calls')
        .values({ rule_id: d.rule, client: d.client, day: d.day, calls: d.calls, refused: d.refused, observed: d.observed, last_seen: d.last })
        .onConflict((oc) => oc.columns(['rule_id', 'client', 'day']).doUpdateSet({
          calls: sql`deprecation_calls.calls + ${d.calls}`, refused: sql`deprecation_calls.refused + ${d.refused}`,
          observed: sql`deprecation_calls.observed + ${d.observed}`,
          last_seen: sql`case when deprecation_calls.last_seen > ${d.last} then deprecation_calls.last_seen else ${d.last} end`,
        }))
        .execute();
    }
    if (deltas.length) await this.db.deleteFrom('deprecation_calls').where('day', '<', Math.floor(now / DAY_MS) - DAYS_KEPT).execute();
  }

  /** The counted calls, of one principal's clients (`user:<uuid>` and its `~family` ids) or of all. */
  async calls(principal?: string): Promise<CallRow[]> {
    let q = this.db.selectFrom('deprecation_calls').selectAll();
    // (LIKE's `_` and `%` may match more: the rows are checked exactly below)
    if (principal) q = q.where((eb) => eb.or([eb('client', '=', principal), eb('client', 'like', `${principal}~%`)]));
    const rows = (await q.orderBy('rule_id').orderBy('client').orderBy('day').execute())
      .filter((r) => !principal || r.client === principal || r.client.startsWith(`${principal}~`));
    return rows.map((r) => ({
      rule: r.rule_id, client: r.client, day: Number(r.day), calls: Number(r.calls), refused: Number(r.refused), observed: Number(r.observed),
      lastSeen: Number(r.last_seen),
    }));
  }
}
