/**
 * Per project, its head mark: the newest created_at as of the last walk of its list that completed (where the next
 * head sync may stop; renders that arrived since by webhook or the gateway's own creates do not move it), and the marks
 * the store holds (so a restart or another instance agrees).
 */
export class HeadMarks {
  /** The marks the store holds (read with the projects, or written by this instance's syncs). */
  readonly stored = new Map<string, number>();
  private readonly marks = new Map<string, number | null>();

  /** A project's mark; `head()` (the newest created_at known) before any walk completed. */
  get(projectId: string, head: () => number | null): number | null {
    return this.marks.has(projectId) ? (this.marks.get(projectId) as number | null) : head();
  }

  /** A walk completed at `at` (a mark never moves back). */
  set(projectId: string, at: number | null): void {
    const prev = this.marks.get(projectId);
    this.marks.set(projectId, prev === undefined || prev === null || (at !== null && at > prev) ? at : prev);
  }
}
