import type { TeamReplica } from '../team/team-replica.js';

/**
 * The moment each project's head must be checked by for every bound the team has stated to hold (issue 43, part 2).
 *
 * A render created at x in a project is found by the first check of the project's head after x; the team stated the
 * bound B(x) then. So the project's next check is owed by min over x since its last check of x + B(x): its last check
 * plus the bound stated then, moved earlier whenever the team states a shorter bound (the last moment it was seen longer
 * plus the new bound). The rotation meets these under a steady cadence; they matter when the cadence changes — a project turning
 * quiet, a cycle growing, the rotation ending while a quiet project's turn was near. The scheduler syncs a team whose
 * earliest deadline would pass before its next tick and adds the projects owed before its next sync to a sync's heads.
 *
 * Kept in memory by the instance that holds the team. A sync run elsewhere (its mark read from the store) counts as the
 * checks the shared rotation gives it (`stated`'s `rotationHeads`); a project first seen here is owed from the team's last sync.
 */
export class HeadDeadlines {
  private readonly teams = new WeakMap<TeamReplica, Owed>();

  /**
   * The bound the team states at `now` (`rotationHeads`: the quiet projects the shared rotation checks between two sync
   * marks, for a sync another instance ran). Walks the projects only when something changed: a shorter bound, another
   * instance's sync, projects added or gone.
   */
  stated(t: TeamReplica, now: number, bound: number, rotationHeads: (from: number, to: number) => readonly string[]): void {
    const synced = t.syncedAt ?? now;
    let rec = this.teams.get(t);
    if (!rec) this.teams.set(t, (rec = { bound, mark: synced, by: new Map(), earliest: Infinity, at: now, projectSet: -1 }));
    // (a shorter bound may have been stated at any moment since the last call: counted from that call)
    const since = rec.at;
    let moved = false;
    if (synced > rec.mark) {
      for (const id of rotationHeads(rec.mark, synced)) rec.by.set(id, synced + bound);
      rec.mark = synced;
      moved = true;
    }
    const shorter = bound < rec.bound;
    // (projects added or dropped: by the team's project set, not their count — one dropped and one added is a change)
    if (shorter || moved || rec.projectSet !== t.projectSet) {
      rec.projectSet = t.projectSet;
      for (const id of t.projects.keys()) {
        const by = rec.by.get(id);
        if (by === undefined) rec.by.set(id, synced + bound);
        else if (shorter && since + bound < by) rec.by.set(id, since + bound);
      }
      for (const id of rec.by.keys()) if (!t.projects.has(id)) rec.by.delete(id);
      rec.earliest = earliestOf(rec.by);
    }
    rec.bound = bound;
    rec.at = now;
  }

  /** A sync that started at `at` checked these heads: what they owe starts again from it (the team stating `bound` then). */
  checked(t: TeamReplica, heads: readonly string[], at: number, bound: number): void {
    const rec = this.teams.get(t);
    if (!rec) return;
    for (const id of heads) rec.by.set(id, at + bound);
    rec.mark = Math.max(rec.mark, at);
    rec.earliest = earliestOf(rec.by);
  }

  /** The earliest deadline of the team's projects (Infinity: none known). */
  earliest(t: TeamReplica): number {
    return this.teams.get(t)?.earliest ?? Infinity;
  }

  /** The projects whose deadline falls at or before `by`, sorted. */
  owedBy(t: TeamReplica, by: number): string[] {
    const rec = this.teams.get(t);
    if (!rec || rec.earliest > by) return [];
    return [...rec.by].filter(([, d]) => d <= by).map(([id]) => id).sort();
  }
}

/** A team's deadlines: the bound it stated last (at `at`), the sync mark they count from, each project's, the earliest of them. */
interface Owed {
  bound: number;
  at: number;
  /** The team's `projectSet` the deadlines were last walked at. */
  projectSet: number;
  mark: number;
  readonly by: Map<string, number>;
  earliest: number;
}

function earliestOf(by: ReadonlyMap<string, number>): number {
  let min = Infinity;
  for (const d of by.values()) if (d < min) min = d;
  return min;
}
