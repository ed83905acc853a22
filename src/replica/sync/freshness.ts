import type { Config } from '../../config/schema.js';
import { cycles, dueMax, phaseHash, phasesIn } from './rotation.js';
import type { TeamReplica } from '../team/team-replica.js';

/** INDEX_ACTIVE_MS is also the window of a project's activity: a render created in it within that long. */
export type FreshnessConfig = Pick<
  Config, 'INDEX_MAX_STALENESS_MS' | 'INDEX_RECONCILE_MS' | 'INDEX_ACTIVE_MS' | 'WEBHOOK_RECONCILE_MS' | 'TEMPLATES_RECONCILE_MS'
>;

/** What a team's webhooks say of its cadence: trusted (registered, nothing lost since its last catch-up), the last delivery. */
export interface Hooks {
  readonly trusted: boolean;
  readonly webhookAt: number | null;
}

/** What the cadence of a team's syncs is computed from: its projects, how many are active, its renders not yet final. */
export interface SyncShape {
  readonly projects: number;
  readonly active: number;
  readonly moving: number;
}

/**
 * How a team is synced and what that promises. Either every project's head is checked at every sync (`cycleMs` 0), or
 * the active projects' heads at every sync and the quiet ones in rotation, each at least once within `cycleMs`
 * (`rotation.ts`): the syncs then run more often than syncs of every project could within the budget.
 */
export interface Cadence {
  /** Time between the team's syncs: when the background sync is due. */
  readonly intervalMs: number;
  /** Every quiet project's head is checked at least once within this (0: every project's at every sync). */
  readonly cycleMs: number;
  /** The staleness bound of the active projects and of the renders not yet final (read again at every sync). */
  readonly activeBoundMs: number;
  /** The staleness bound of any render of the team, a quiet project's included: the team's stated bound. */
  readonly boundMs: number;
}

/**
 * How often the scheduler looks for due syncs (`ReplicaService.start`): a sync runs at the first tick past its due time,
 * so every bound counts one tick beyond the interval that brings the sync.
 */
export const SCHEDULER_TICK_MS = 250;

/** A team's activity by version and window, until its first active project turns quiet (activity moves with time too). */
const activities = new WeakMap<TeamReplica, Activity & { version: number; window: number; until: number; projectIds: readonly string[] }>();

/** A team's activity: its shape, its active projects, its projects' phase hashes (`rotation.ts`). */
export interface Activity {
  /** Equal while the rest is (a team's cadence is kept by it). */
  readonly key: number;
  readonly shape: SyncShape;
  readonly active: ReadonlySet<string>;
  readonly hashes: readonly number[];
}

/** A team's cadence, for the activity, budget, configured bound and configuration it was computed from. */
const cadences = new WeakMap<TeamReplica, {
  activity: number; callsPerMin: number; floor: number; trusted: boolean; config: FreshnessConfig; cadence: Cadence;
}>();

/** The phases of a team's projects in each cycle (sorted), by their hashes (`Activity.hashes`, kept while the projects are). */
const phasesByCycle = new WeakMap<readonly number[], Map<number, number[]>>();

/** The cycle chosen for a team's projects (by their hashes), by its active projects, budget and configured bound. */
const cyclesChosen = new WeakMap<readonly number[], Map<string, number>>();

/** The calls one sync of a team checking every project needs, by version (a team's projects and moving renders change with it). */
const needs = new WeakMap<TeamReplica, { version: number; calls: number }>();

/**
 * The v1 calls one sync of a team needs when it checks every project: its project list, a head check per project and
 * the renders not yet final (by id, or a status-filtered page per project when that is fewer).
 */
export const syncCallsFor = (projects: number, moving: number): number => projects + Math.min(moving, 2 * projects) + 1;

/** The v1 calls of one sync checking `heads` projects' heads in a team of `projects`: the project list, the heads, the re-poll. */
export const syncCallsWith = (heads: number, projects: number, moving: number): number => 1 + heads + Math.min(moving, 2 * projects);

/** The v1 calls one sync of the team needs when it checks every project (`syncCallsFor` its projects and renders not yet final). */
export function syncCallsOf(t: TeamReplica): number {
  const hit = needs.get(t);
  if (hit && hit.version === t.version) return hit.calls;
  const calls = syncCallsFor(t.projects.size, t.movingIds().length);
  needs.set(t, { version: t.version, calls });
  return calls;
}

/** The team's active projects at `now` (a render created in them within `windowMs`) and its shape. */
export function activityOf(t: TeamReplica, now: number, windowMs: number): Activity {
  const hit = activities.get(t);
  if (hit && hit.version === t.version && hit.window === windowMs && now < hit.until) return hit;
  const a = t.activeProjects(now, windowMs);
  const shape = { projects: t.projects.size, active: a.ids.size, moving: t.movingIds().length };
  // the same activity as before (most changes are renders that change none of it): the same object, its cadence kept
  if (hit && hit.window === windowMs && sameShape(hit.shape, shape) && sameSet(hit.active, a.ids) && sameProjects(hit.projectIds, t)) {
    const kept = { ...hit, version: t.version, until: a.until };
    activities.set(t, kept);
    return kept;
  }
  // the same projects: the same hashes (their phases and the cycle chosen with them are kept by it)
  const same = hit !== undefined && sameProjects(hit.projectIds, t);
  const projectIds = same ? hit.projectIds : [...t.projects.keys()];
  const hashes = same ? hit.hashes : projectIds.map(phaseHash);
  const entry = { key: ++activitySeq, version: t.version, window: windowMs, until: a.until, active: a.ids, shape, projectIds, hashes };
  activities.set(t, entry);
  return entry;
}

let activitySeq = 0;
const sameShape = (a: SyncShape, b: SyncShape) => a.projects === b.projects && a.active === b.active && a.moving === b.moving;
const sameSet = (a: ReadonlySet<string>, b: ReadonlySet<string>) => a.size === b.size && [...a].every((x) => b.has(x));
const sameProjects = (ids: readonly string[], t: TeamReplica) => ids.length === t.projects.size && ids.every((id) => t.projects.has(id));

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
 * The cadence of a team's syncs, computed from its shape, its budget and its webhooks.
 *
 * Checking every project at every sync (`whole`), the syncs run at half the configured bound (INDEX_MAX_STALENESS_MS,
 * or INDEX_RECONCILE_MS while webhooks arrive: a reader finds the team fresh) but never more often than the budget lets
 * whole syncs run beside the periodic full sync's calls; the bound is the larger of that interval (and a scheduler tick,
 * `SCHEDULER_TICK_MS`) and the configured one.
 *
 * With active projects, when whole syncs cannot run at the configured cadence, the syncs check the active projects'
 * heads and re-poll the renders not yet final at every sync, and the quiet projects in rotation (`rotation.ts`), each
 * due once a cycle. A minute's calls are its syncs' fixed part plus the due checks its syncs take — at most the most
 * due times a window of a minute and one interval holds (`dueMax`: a minute's first sync takes the checks due since
 * the sync before it), and the calls of the periodic full syncs a minute may hold. The cycle is `cycleFor`'s (kept
 * while the projects, the active ones, the budget and the configured bound are); the interval then follows from the
 * real fixed part. A render of a quiet project created just after its check is found by the first sync past its next
 * due time: within cycle + interval + a tick, the team's stated bound; an active project's, by the next sync. The rotation is
 * used only when it makes the active projects' bound shorter.
 *
 * A team whose webhooks are trusted (`webhook-trust.ts`) is not head-polled: every render's status change reaches it as
 * a delivery, so it is synced once every WEBHOOK_RECONCILE_MS — a full reconcile finding renders created and never moved
 * (creation sends nothing) and what has no event (templates, members) — or as often as its budget lets such syncs run.
 * Its stated bound is that interval and the time of a sync (INDEX_MAX_STALENESS_MS).
 */
export function cadenceFrom(
  c: FreshnessConfig, shape: SyncShape, hashes: readonly number[], hooks: Hooks, now: number, callsPerMin: number,
): Cadence {
  if (hooks.trusted && c.WEBHOOK_RECONCILE_MS > 0) return reconcileCadence(c, shape.projects, shape.moving, callsPerMin);
  const floor = floorOf(c, hooks.webhookAt, now);
  const everyOne = wholeIntervalOf(c, shape.projects, shape.moving, callsPerMin, hashes);
  const wholeInterval = Math.max(floor / 2, everyOne);
  const wholeBound = Math.max(floor, everyOne + SCHEDULER_TICK_MS);
  const whole: Cadence = { intervalMs: wholeInterval, cycleMs: 0, activeBoundMs: wholeBound, boundMs: wholeBound };
  if (shape.active < 1 || shape.active >= shape.projects || !Number.isFinite(callsPerMin)) return whole;
  const budget = Math.floor(callsPerMin) - fullCallsPerMin(c, shape.projects, hashes);
  let phases = phasesByCycle.get(hashes);
  if (!phases) phasesByCycle.set(hashes, (phases = new Map()));
  const kept = phases;
  const dueIn = (cycle: number) => {
    let ph = kept.get(cycle);
    if (!ph) kept.set(cycle, (ph = phasesIn(hashes, cycle)));
    const sorted = ph;
    return (w: number) => dueMax(sorted, cycle, w);
  };
  const choice = `${shape.active} ${budget} ${floor}`;
  let chosen = cyclesChosen.get(hashes);
  if (!chosen) cyclesChosen.set(hashes, (chosen = new Map()));
  let cycleMs = chosen.get(choice);
  if (cycleMs === undefined) chosen.set(choice, (cycleMs = cycleFor(shape, floor, budget, dueIn)));
  if (cycleMs === 0) return whole;
  const fixed = syncCallsWith(shape.active, shape.projects, shape.moving);
  const intervalMs = intervalFitting(floor / 2, fixed, budget, dueIn(cycleMs));
  // a rotation only where it makes the active projects' bound shorter
  if (intervalMs === null) return whole;
  const activeBoundMs = Math.max(floor, intervalMs + SCHEDULER_TICK_MS);
  if (activeBoundMs >= wholeBound) return whole;
  return { intervalMs, cycleMs, activeBoundMs, boundMs: Math.max(floor, cycleMs + intervalMs + SCHEDULER_TICK_MS) };
}

/**
 * The cycle of a rotation (0: none fits): the one giving the smallest team bound among those whose interval stays
 * within the configured bound, or twice the quickest the fixed part allows — the fixed part estimated from the active
 * projects alone (one moving render each), so that the choice moves only when they do.
 */
function cycleFor(shape: SyncShape, floor: number, budget: number, dueIn: (cycle: number) => (w: number) => number): number {
  const estimated = syncCallsWith(shape.active, shape.projects, shape.active);
  const quickest = intervalFitting(floor / 2, estimated, budget, () => 0);
  if (quickest === null) return 0;
  const within = Math.max(floor, 2 * quickest);
  let cycleMs = 0;
  let best = Infinity;
  for (const cycle of cycles()) {
    const i = intervalFitting(floor / 2, estimated, budget, dueIn(cycle));
    if (i !== null && i <= within && cycle + i < best) {
      best = cycle + i;
      cycleMs = cycle;
    }
    if (cycle > best) break;
  }
  return cycleMs;
}

/**
 * The shortest interval, at least `least`, at which syncs of `fixed` calls plus the due checks of a minute and one
 * interval (`due(window)`) fit a minute's budget (syncs starting at least an interval apart: at most ⌈60 s ÷ interval⌉
 * a calendar minute); null when not even one sync a minute does.
 */
function intervalFitting(least: number, fixed: number, budget: number, due: (windowMs: number) => number): number | null {
  for (let n = Math.min(600, Math.max(1, Math.floor(60_000 / least))); n >= 1; n--) {
    const interval = Math.max(least, Math.ceil(60_000 / n));
    if (Math.ceil(60_000 / interval) * fixed + due(60_000 + interval) <= budget) return interval;
  }
  return null;
}

/** The cadence of a team whose webhooks are trusted: a full reconcile every WEBHOOK_RECONCILE_MS, or as its budget allows. */
function reconcileCadence(c: FreshnessConfig, projects: number, moving: number, callsPerMin: number): Cadence {
  const every = Math.max(c.WEBHOOK_RECONCILE_MS, c.INDEX_MAX_STALENESS_MS, budgetIntervalMs(syncCallsFor(projects, moving) + projects + 2, callsPerMin));
  const bound = every + c.INDEX_MAX_STALENESS_MS;
  return { intervalMs: every, cycleMs: 0, activeBoundMs: bound, boundMs: bound };
}

/** Whether the team's webhooks are trusted at `now` (`webhook-trust.ts`; false without a trust source). */
export const trustedAt = (t: TeamReplica, now: number): boolean => t.trust?.trusted(t.id, now) ?? false;

/** The cadence of a team in memory at `now` (`cadenceFrom` its shape, its budget, its webhooks), kept while they hold. */
export function cadenceOf(c: FreshnessConfig, t: TeamReplica, now: number, callsPerMin = Infinity): Cadence {
  const a = activityOf(t, now, c.INDEX_ACTIVE_MS);
  // deliveries may have been lost: the last one no longer makes the team webhook-fed (it is polled until caught up)
  const webhookAt = t.trust?.pending(t.id, now) ? null : t.webhookAt;
  const floor = floorOf(c, webhookAt, now);
  const trusted = trustedAt(t, now);
  const hit = cadences.get(t);
  if (hit && hit.activity === a.key && hit.callsPerMin === callsPerMin && hit.floor === floor && hit.trusted === trusted && hit.config === c) {
    return hit.cadence;
  }
  const cadence = cadenceFrom(c, a.shape, a.hashes, { trusted, webhookAt }, now, callsPerMin);
  cadences.set(t, { activity: a.key, callsPerMin, floor, trusted, config: c, cadence });
  return cadence;
}

/**
 * When a team's next background sync is due (its age since its last sync started). A team of whole syncs, polled, is
 * synced as late as its stated bound allows, less a tick and twice its last sync's duration (`lastSyncMs`, this
 * instance's; at least two ticks): the sync still starts within the bound — every render it finds is found in time — and ends before a
 * reader finds the team past its bound, so a read does not wait for it. Half the configured bound (or its budget's
 * interval) stays the shortest interval, and the rule when the last duration is not known (a sync run elsewhere, or
 * the next sync is the full one, longer than the last: the scheduler passes none). A
 * rotation keeps its interval (its quiet projects' due times are counted from it); a trusted team its reconcile.
 */
export function dueAfter(c: FreshnessConfig, t: TeamReplica, now: number, callsPerMin: number, lastSyncMs?: number): number {
  const cadence = cadenceOf(c, t, now, callsPerMin);
  if (cadence.cycleMs > 0 || lastSyncMs === undefined || trustedAt(t, now)) return cadence.intervalMs;
  // (twice the duration, never less than two ticks: a timer late by tens of ms, a sync slower than the last)
  return Math.max(cadence.intervalMs, cadence.activeBoundMs - SCHEDULER_TICK_MS - 2 * Math.max(lastSyncMs, SCHEDULER_TICK_MS));
}

/**
 * The bound of a team not in memory, from its store rows: its projects, its renders not yet final and its webhooks
 * (its activity is not known from the rows: counted as none, every project checked at every sync).
 */
export function boundFrom(c: FreshnessConfig, projects: number, moving: number, hooks: Hooks, now: number, callsPerMin: number): number {
  if (hooks.trusted && c.WEBHOOK_RECONCILE_MS > 0) return reconcileCadence(c, projects, moving, callsPerMin).boundMs;
  return Math.max(floorOf(c, hooks.webhookAt, now), wholeIntervalOf(c, projects, moving, callsPerMin) + SCHEDULER_TICK_MS);
}

/**
 * Whether the templates are read in a rotation (TEMPLATES_RECONCILE_MS past INDEX_RECONCILE_MS): a full sync reads the
 * projects due since the last, so it runs when it falls due — alone when no regular sync is (`SyncScheduler.tick`).
 */
export function templatesRotate(c: Pick<Config, 'INDEX_RECONCILE_MS' | 'TEMPLATES_RECONCILE_MS'>): boolean {
  return c.INDEX_RECONCILE_MS > 0 && c.TEMPLATES_RECONCILE_MS > c.INDEX_RECONCILE_MS;
}

/**
 * The calls the periodic full syncs (every INDEX_RECONCILE_MS: the team, its members, and the templates of the projects
 * due in TEMPLATES_RECONCILE_MS's rotation, `templatesDue`) may add to a calendar minute: the most due times the
 * intervals of a minute's full syncs hold (`dueMax`, from the projects' `hashes`; without them, the mean rounded up),
 * never more than every project at every full sync. Each runs at the first tick past its due time (`templatesRotate`).
 */
export function fullCallsPerMin(c: Pick<Config, 'INDEX_RECONCILE_MS' | 'TEMPLATES_RECONCILE_MS'>, projects: number, hashes?: readonly number[]): number {
  const fulls = Math.ceil(60_000 / c.INDEX_RECONCILE_MS);
  const t = c.TEMPLATES_RECONCILE_MS;
  // (INDEX_RECONCILE_MS 0: a full sync at every sync, as before — no rotation of templates)
  if (!templatesRotate(c) || !Number.isFinite(fulls)) return fulls * (projects + 2);
  // (a minute's full syncs, INDEX_RECONCILE_MS apart, read the due times of that many intervals; each runs at the first
  // tick past its due time)
  const window = fulls * c.INDEX_RECONCILE_MS + SCHEDULER_TICK_MS;
  const due = hashes ? dueMax(phasesIn(hashes, t), t, window) : Math.ceil((projects * window) / t);
  return fulls * 2 + Math.min(fulls * projects, due);
}

/**
 * How often the budget lets whole syncs (every project at every sync) run: what a minute's budget holds once a full
 * sync's calls are kept aside (`budgetIntervalMs`).
 */
function wholeIntervalOf(c: FreshnessConfig, projects: number, moving: number, callsPerMin: number, hashes?: readonly number[]): number {
  const budget = Number.isFinite(callsPerMin) ? Math.max(1, callsPerMin - fullCallsPerMin(c, projects, hashes)) : callsPerMin;
  return budgetIntervalMs(syncCallsFor(projects, moving), budget);
}

/**
 * The configured part of the bound of a team whose webhooks are not trusted (WEBHOOK_RECONCILE_MS 0, or a catch-up
 * pending): INDEX_MAX_STALENESS_MS, or INDEX_RECONCILE_MS while its webhooks arrive.
 */
function floorOf(c: Pick<Config, 'INDEX_MAX_STALENESS_MS' | 'INDEX_RECONCILE_MS'>, webhookAt: number | null, now: number): number {
  const hooks = webhookAt !== null && now - webhookAt < c.INDEX_RECONCILE_MS;
  return hooks ? Math.max(c.INDEX_RECONCILE_MS, c.INDEX_MAX_STALENESS_MS) : c.INDEX_MAX_STALENESS_MS;
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
