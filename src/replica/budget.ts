import type { Clock } from '../lib/clock.js';
import type { V1Meter } from '../v1/client.js';
import type { TeamReplica } from './team-replica.js';

/**
 * The per-team budget of the sync's v1 calls (INDEX_SYNC_CALLS_PER_MIN): every call counted, by team, over the last
 * minute; a sync that would not fit waits (the team's staleness bound loosens rather than v1 be starved).
 */
export class SyncBudget {
  private readonly calls = new Map<string, number[]>();

  constructor(private readonly clock: Clock, private readonly perMinute: number) {}

  /** A meter that counts the sync's calls against the team's budget. */
  meterFor(teamId: string): V1Meter {
    return { onCall: () => { const l = this.calls.get(teamId) ?? []; l.push(this.clock.now()); this.calls.set(teamId, l); } };
  }

  /** v1 calls the team's syncs made in the last minute. */
  callsLastMinute(teamId: string): number {
    const since = this.clock.now() - 60_000;
    const list = (this.calls.get(teamId) ?? []).filter((x) => x > since);
    this.calls.set(teamId, list);
    return list.length;
  }

  /** Whether a sync of the team (about one call per project, plus the re-poll) still fits its budget this minute. */
  fits(t: TeamReplica): boolean {
    const estimate = t.projects.size + Math.min(t.movingIds().length, 2 * t.projects.size) + 1;
    return this.callsLastMinute(t.id) + estimate <= this.perMinute;
  }
}
