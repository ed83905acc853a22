import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Why deliveries may have been lost in a window: no receiver answered, or deliveries were refused or failed. */
export type GapReason = 'receiver down' | 'refused' | 'failed';

/** A window in which webhook deliveries may have been lost; `team` '' for every team. */
export interface WebhookGap {
  readonly id: string;
  readonly team: string;
  readonly from: number;
  readonly to: number;
  readonly reason: GapReason;
}

const n = (v: unknown): number => Number(v);

/**
 * What every instance knows of the webhook receivers, in the store: each instance's receiver renewed while it runs
 * (`webhook_receivers`), the windows in which deliveries may have been lost (`webhook_gaps`), and, per team, the end of
 * the last window its renders were walked again for (`index_teams.webhook_checked_to`).
 */
export class WebhookHealthStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** This instance's receiver answers at `now` (`stopped`: and stops; one row an instance, written over). */
  async beat(instance: string, since: number, now: number, stopped = false): Promise<void> {
    const s = stopped ? 1 : 0;
    await this.db.insertInto('webhook_receivers').values({ instance, since, seen_at: now, stopped: s })
      .onConflict((oc) => oc.column('instance').doUpdateSet({ since, seen_at: now, stopped: s })).execute();
  }

  /** The other instances' receivers: when each was last seen answering, and whether it stopped then. */
  async receiversElsewhere(instance: string): Promise<{ seenAt: number; stopped: boolean }[]> {
    const rows = await this.db.selectFrom('webhook_receivers').where('instance', '!=', instance).select(['seen_at', 'stopped']).execute();
    return rows.map((r) => ({ seenAt: n(r.seen_at), stopped: Number(r.stopped) === 1 }));
  }

  /** Receivers not seen since `before` are forgotten (an instance that never comes back). */
  async forgetReceivers(before: number): Promise<void> {
    await this.db.deleteFrom('webhook_receivers').where('seen_at', '<', before).execute();
  }

  /** A new window (an id of its own). */
  newGap(team: string, from: number, to: number, reason: GapReason): WebhookGap {
    return { id: randomUUID(), team, from, to, reason };
  }

  /**
   * Writes a window, or moves its end later (a run of refusals grows): written again if it was dropped meanwhile (another
   * instance caught the team up while this one still records refusals of it).
   */
  async putGap(g: WebhookGap): Promise<void> {
    await this.db.insertInto('webhook_gaps').values({ id: g.id, team_id: g.team, from_ms: g.from, to_ms: g.to, reason: g.reason })
      .onConflict((oc) => oc.column('id').doUpdateSet({ to_ms: g.to }).where('webhook_gaps.to_ms', '<', g.to)).execute();
  }

  /** The team's own windows up to `to` are caught up: dropped (windows of every team stay until they age out). */
  async dropCaughtUp(team: string, to: number): Promise<void> {
    await this.db.deleteFrom('webhook_gaps').where('team_id', '=', team).where('to_ms', '<=', to).execute();
  }

  /** The windows that ended after `after`, oldest first. */
  async gapsAfter(after: number): Promise<WebhookGap[]> {
    const rows = await this.db.selectFrom('webhook_gaps').selectAll().where('to_ms', '>', after).orderBy('from_ms').execute();
    return rows.map((r) => ({ id: r.id, team: r.team_id, from: n(r.from_ms), to: n(r.to_ms), reason: r.reason as GapReason }));
  }

  /** Windows that ended before `before` are dropped. */
  async pruneGaps(before: number): Promise<void> {
    await this.db.deleteFrom('webhook_gaps').where('to_ms', '<', before).execute();
  }

  /** Per team, the end of the last window it was walked again for. */
  async checkedTo(teams: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (teams.length === 0) return out;
    const rows = await this.db.selectFrom('index_teams').select(['team_id', 'webhook_checked_to'])
      .where('team_id', 'in', [...teams]).execute();
    for (const r of rows) if (r.webhook_checked_to !== null && r.webhook_checked_to !== undefined) out.set(r.team_id, n(r.webhook_checked_to));
    return out;
  }

  async setCheckedTo(team: string, to: number): Promise<void> {
    await this.db.updateTable('index_teams').set({ webhook_checked_to: to }).where('team_id', '=', team)
      .where((eb) => eb.or([eb('webhook_checked_to', 'is', null), eb('webhook_checked_to', '<', to)])).execute();
  }
}
