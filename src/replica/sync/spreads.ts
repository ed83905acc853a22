import type { HeadDeadlines } from './deadlines.js';
import { activityOf, dueAfter, syncCallsWith, type Cadence, type FreshnessConfig } from './freshness.js';
import { roomSpacing, type MinuteRoom } from './minute-room.js';
import { quietChecksDue, templatesDueCount } from './rotation.js';
import type { TeamReplica } from '../team/team-replica.js';

/** What the scheduler knows of a team's syncs here that its spread depends on. */
export interface SpreadFacts {
  /** This instance's last full sync of the team (null: none yet). */
  readonly lastFull: number | null;
  /** When its next full sync falls due (`lastFull` + INDEX_RECONCILE_MS). */
  readonly fullDueAt: number;
  /** Its last sync's duration here (ms), when known. */
  readonly lastMs: number | undefined;
}

/**
 * The spread of each team's syncs over its minute's room (`roomSpacing`), kept while what it is computed from holds —
 * compared field by field: it is asked on every read of the team (`ReadSources.fresh`), most of every minute.
 */
export class SyncSpreads {
  private readonly kept = new WeakMap<TeamReplica, {
    from: number; room: MinuteRoom; activity: number; cadence: Cadence; spacingMs: number; fullCalls: number; earliest: number; ms: number;
  }>();

  constructor(
    private readonly config: FreshnessConfig,
    private readonly deadlines: HeadDeadlines,
  ) {}

  /** How much further apart than its cadence's the team's syncs run for the rest of the room's minute (ms). */
  ms(t: TeamReplica, now: number, cadence: Cadence, room: MinuteRoom, callsPerMin: number, f: SpreadFacts): number {
    const { config, deadlines } = this;
    const a = activityOf(t, now, config.INDEX_ACTIVE_MS);
    const spacingMs = dueAfter(config, t, now, callsPerMin, now >= f.fullDueAt ? undefined : f.lastMs);
    const fullCalls = f.fullDueAt < room.minuteEnd
      ? templatesDueCount(a.hashes, config.TEMPLATES_RECONCILE_MS, f.lastFull, Math.max(now, f.fullDueAt)) + 2 : 0;
    const earliest = deadlines.earliest(t);
    const from = t.syncedAt!;
    const hit = this.kept.get(t);
    if (hit && hit.from === from && hit.room === room && hit.activity === a.key && hit.cadence === cadence && hit.spacingMs === spacingMs
      && hit.fullCalls === fullCalls && hit.earliest === earliest) return hit.ms;
    const rotating = cadence.cycleMs > 0;
    const quiet = a.shape.projects - a.shape.active;
    const ms = roomSpacing(room, from, {
      spacingMs,
      fixed: syncCallsWith(rotating ? a.shape.active : a.shape.projects, a.shape.projects, a.shape.moving),
      extra: fullCalls + (earliest < room.minuteEnd ? deadlines.owedBy(t, room.minuteEnd).length : 0),
      quietMost: rotating ? quiet * (Math.ceil((room.minuteEnd - from) / cadence.cycleMs) + 1) : 0,
      quietDue: () => quietChecksDue(t.projects.keys(), a.active, cadence.cycleMs, from, room.minuteEnd),
    });
    this.kept.set(t, { from, room, activity: a.key, cadence, spacingMs, fullCalls, earliest, ms });
    return ms;
  }
}
