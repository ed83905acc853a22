import type { Config } from '../config/schema.js';
import type { TeamReplica } from './team-replica.js';

export type FreshnessConfig = Pick<Config, 'INDEX_MAX_STALENESS_MS' | 'INDEX_RECONCILE_MS'>;

/** The staleness bound of a team: INDEX_RECONCILE_MS while its webhooks arrive, else INDEX_MAX_STALENESS_MS. */
export function boundOf(c: FreshnessConfig, t: TeamReplica, now: number): number {
  const hooks = t.webhookAt !== null && now - t.webhookAt < c.INDEX_RECONCILE_MS;
  return hooks ? Math.max(c.INDEX_RECONCILE_MS, c.INDEX_MAX_STALENESS_MS) : c.INDEX_MAX_STALENESS_MS;
}

/** Whether a read at `now` may be answered from the team as it is: its last sync started within its bound. */
export function isFresh(c: FreshnessConfig, t: TeamReplica, now: number): boolean {
  return now - (t.syncedAt ?? 0) <= boundOf(c, t, now);
}

/**
 * What answers read from these teams are computed from: their versions (one process-wide sequence that moves on every
 * change an answer can show, overlays and imported ids included). Equal epochs, equal answers: the answer cache's validity.
 */
export function epochOf(teams: readonly TeamReplica[]): string {
  let s = '';
  for (const t of teams) s += `${t.id}:${t.version},`;
  return s;
}
