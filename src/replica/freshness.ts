import type { Config } from '../config/schema.js';
import type { TeamReplica } from './team-replica.js';

export type FreshnessConfig = Pick<Config, 'INDEX_MAX_STALENESS_MS' | 'INDEX_RECONCILE_MS'>;

/** The calls one sync of the team needs, by version (a team's projects and moving renders change with its version). */
const needs = new WeakMap<TeamReplica, { version: number; calls: number }>();

/**
 * The v1 calls one sync of a team needs: its project list, a head check per project and the renders not yet final
 * (by id, or a status-filtered page per project when that is fewer).
 */
export const syncCallsFor = (projects: number, moving: number): number => projects + Math.min(moving, 2 * projects) + 1;

/** The v1 calls one sync of the team needs (`syncCallsFor` its projects and renders not yet final). */
export function syncCallsOf(t: TeamReplica): number {
  const hit = needs.get(t);
  if (hit && hit.version === t.version) return hit.calls;
  const calls = syncCallsFor(t.projects.size, t.movingIds().length);
  needs.set(t, { version: t.version, calls });
  return calls;
}

/**
 * How often a team's budget lets it be synced: a minute over the whole syncs a minute's budget holds (`callsPerMin`:
 * its own budget or its key's share, whichever is smaller; the budget is counted per calendar minute, so a sync that
 * does not fit whole waits for the next); a sync larger than a minute's budget, once every so many minutes.
 */
export function budgetIntervalMs(calls: number, callsPerMin: number): number {
  if (!Number.isFinite(callsPerMin)) return 0;
  const perMinute = Math.floor(callsPerMin / calls);
  return perMinute >= 1 ? Math.ceil(60_000 / perMinute) : Math.ceil(calls / callsPerMin) * 60_000;
}

/**
 * The staleness bound of a team, computed: how often its budget lets it be synced (`budgetIntervalMs`: the calls one
 * sync needs against the calls a minute it may spend), never below INDEX_MAX_STALENESS_MS; while its webhooks arrive,
 * never below INDEX_RECONCILE_MS either (the sync is then a reconciliation: webhooks carry the news).
 */
export function boundOf(c: FreshnessConfig, t: TeamReplica, now: number, callsPerMin = Infinity): number {
  return boundFrom(c, syncCallsOf(t), t.webhookAt, now, callsPerMin);
}

/** The same bound from the calls one sync needs and the team's last webhook (a team not in memory: its store rows). */
export function boundFrom(c: FreshnessConfig, calls: number, webhookAt: number | null, now: number, callsPerMin: number): number {
  return Math.max(floorOf(c, webhookAt, now), budgetIntervalMs(calls, callsPerMin));
}

/** The configured part of the bound: INDEX_MAX_STALENESS_MS, or INDEX_RECONCILE_MS while the team's webhooks arrive. */
function floorOf(c: FreshnessConfig, webhookAt: number | null, now: number): number {
  const hooks = webhookAt !== null && now - webhookAt < c.INDEX_RECONCILE_MS;
  return hooks ? Math.max(c.INDEX_RECONCILE_MS, c.INDEX_MAX_STALENESS_MS) : c.INDEX_MAX_STALENESS_MS;
}

/**
 * When the background sync of a team is due (its age since its last sync started): at half its configured bound, so a
 * reader finds it fresh — but never more often than its budget lets it be synced (more often, the minute's budget is
 * spent early and the rest of the minute goes without a sync).
 */
export function dueAfter(c: FreshnessConfig, t: TeamReplica, now: number, callsPerMin: number): number {
  return Math.max(floorOf(c, t.webhookAt, now) / 2, budgetIntervalMs(syncCallsOf(t), callsPerMin));
}

/** Whether a read at `now` may be answered from the team as it is: its last sync started within its bound. */
export function isFresh(c: FreshnessConfig, t: TeamReplica, now: number, callsPerMin = Infinity): boolean {
  return now - (t.syncedAt ?? 0) <= boundOf(c, t, now, callsPerMin);
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
