import { epochMs } from '../../translate/time.js';

/**
 * Per project, its head mark: the newest created_at as of the last walk of its list that completed (where the next
 * head sync may stop; renders that arrived since by webhook or the gateway's own creates do not move it), and the marks
 * the store holds (so a restart or another instance agrees). Beside them, each project's activity: the newest
 * created_at of any render the replica holds in it, however it arrived (a sync, a webhook, the gateway's own create).
 */
export class HeadMarks {
  /** The marks the store holds (read with the projects, or written by this instance's syncs). */
  readonly stored = new Map<string, number>();
  private readonly marks = new Map<string, number | null>();
  private readonly newest = new Map<string, number>();

  /** A project's mark; `head()` (the newest created_at known) before any walk completed. */
  get(projectId: string, head: () => number | null): number | null {
    return this.marks.has(projectId) ? (this.marks.get(projectId) as number | null) : head();
  }

  /** A walk completed at `at` (a mark never moves back). */
  set(projectId: string, at: number | null): void {
    const prev = this.marks.get(projectId);
    this.marks.set(projectId, prev === undefined || prev === null || (at !== null && at > prev) ? at : prev);
  }

  /** A render created at `createdAt` (v1's timestamp, seconds or milliseconds) is held in the project (activity never moves back). */
  created(projectId: string, createdAt: number): void {
    const at = epochMs(createdAt, 'auto');
    const prev = this.newest.get(projectId);
    if (prev === undefined || at > prev) this.newest.set(projectId, at);
  }

  /** The project is gone: its mark and activity with it. */
  drop(projectId: string): void {
    this.marks.delete(projectId);
    this.newest.delete(projectId);
    this.stored.delete(projectId);
  }

  /**
   * The projects of `projectIds` active at `now` — a render created in them within `windowMs` — and the moment the
   * first of them turns quiet (Infinity when none is active).
   */
  active(projectIds: Iterable<string>, now: number, windowMs: number): { readonly ids: Set<string>; readonly until: number } {
    const ids = new Set<string>();
    let until = Infinity;
    for (const id of projectIds) {
      const at = this.newest.get(id);
      if (at === undefined || now - at >= windowMs) continue;
      ids.add(id);
      until = Math.min(until, at + windowMs);
    }
    return { ids, until };
  }
}
