import type { Rec } from '../query/compile.js';
import { ordered } from './columns.js';
import type { RenderRows } from './render-rows.js';

/** Sorted orders a team keeps at most (distinct sorts of questions). */
const SORTED_KEPT = 8;

/**
 * The orders of a team's renders: newest first (created_at descending, then uuid ascending: the default legacy order),
 * kept as renders arrive; by primary key (legacy uuid), per project, as Directus lists related items; and a project's
 * renders in v1's list order, with its newest created_at (what the sync's page arithmetic and head checks read).
 */
export class RenderOrders {
  /** Rows newest first: built once, kept as renders arrive. */
  private newest: number[] | null = null;
  private readonly byKey = new Map<string, { version: number; rows: number[] }>();
  /** Live rows in the orders questions asked for (by the order's name), with the comparison each was sorted by. */
  private readonly sorted = new Map<string, { cmp: (a: number, b: number) => number; rows: number[] }>();

  constructor(private readonly rows: RenderRows) {}

  /** The newest-first order and the kept sorted orders are built again on next use (rows were removed). */
  reset(): void {
    this.newest = null;
    this.sorted.clear();
  }

  /** Every order is built again on next use (uuids or overlays changed). */
  resetAll(): void {
    this.byKey.clear();
    this.newest = null;
    this.sorted.clear();
  }

  /**
   * Live rows in a query's order, `name` naming it (`title:asc,id:asc`) and `cmp` comparing two rows by it: sorted
   * once, then kept as renders arrive and change (`moved`).
   */
  sortedBy(name: string, cmp: (a: number, b: number) => number): readonly number[] {
    let kept = this.sorted.get(name);
    if (kept) {
      this.sorted.delete(name);
      this.sorted.set(name, kept);
    } else {
      // a few orders are kept (each a number a live row): the one asked least recently goes first
      if (this.sorted.size >= SORTED_KEPT) this.sorted.delete(this.sorted.keys().next().value as string);
      const live = this.rows.liveRows();
      // a sort by uuid (or tied titles then uuids) derives each row's uuid once, not once a comparison
      kept = { cmp, rows: this.rows.c.uuidsKept(() => live.sort(cmp)) };
      this.sorted.set(name, kept);
    }
    return kept.rows;
  }

  /** A row was added or changed: it takes its place again in every kept sorted order (a binary search, one splice). */
  moved(i: number, added: boolean): void {
    if (this.sorted.size > 0) this.rows.c.uuidsKept(() => this.reposition(i, added));
  }

  private reposition(i: number, added: boolean): void {
    for (const kept of this.sorted.values()) {
      const list = kept.rows;
      if (!added) {
        const at = list.indexOf(i);
        if (at >= 0) list.splice(at, 1);
      }
      let lo = 0;
      let hi = list.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (kept.cmp(list[mid] as number, i) <= 0) lo = mid + 1;
        else hi = mid;
      }
      list.splice(lo, 0, i);
    }
  }

  /** Rows newest first, ties by uuid (the resource's default order): built once, kept as renders arrive. */
  newestFirst(): readonly number[] {
    if (!this.newest) {
      this.newest = this.rows.liveRows().sort((a, b) => this.newestOrder(a, b));
    }
    return this.newest;
  }

  private newestOrder(a: number, b: number): number {
    const c = this.rows.c;
    return (c.created[b] as number) - (c.created[a] as number) || c.compareUuids(a, b);
  }

  /** A new render takes its place in the kept order (most arrive at the head: a binary search, one splice). */
  place(i: number): void {
    const list = this.newest;
    if (!list) return;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.newestOrder(list[mid] as number, i) < 0) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, i);
  }

  /** The newest created_at known in a project (null when none is known). */
  head(projectId: string): number | null {
    let max: number | null = null;
    for (const i of this.rows.codes.rowsOf(projectId)) {
      const c = this.rows.c.created[i] as number;
      if (max === null || c > max) max = c;
    }
    return max;
  }

  /** A project's known render ids, newest first (v1's list order; the sync's page arithmetic). */
  projectRenderIds(projectId: string): string[] {
    const rows = [...this.rows.codes.rowsOf(projectId)];
    const c = this.rows.c;
    rows.sort((a, b) => (c.created[b] as number) - (c.created[a] as number) || ordered(c.v1Id(a), c.v1Id(b)));
    return rows.map((i) => c.v1Id(i));
  }

  /**
   * The first `n` renders of a project (or of the whole team when `projectId` is null) in primary-key (legacy
   * uuid) order, as Directus lists related items; the order is kept until a render is added.
   */
  rendersByKey(projectId: string | null, n: number, view: (row: number) => Rec): Rec[] {
    const k = projectId ?? '*';
    let cached = this.byKey.get(k);
    const rows = projectId === null ? null : this.rows.codes.rowsOf(projectId);
    if (!cached || cached.version !== this.rows.membership) {
      const list = rows ? [...rows] : this.rows.liveRows();
      const c = this.rows.c;
      c.uuidsKept(() => list.sort((a, b) => c.compareUuids(a, b)));
      cached = { version: this.rows.membership, rows: list };
      this.byKey.set(k, cached);
    }
    return cached.rows.slice(0, n).map(view);
  }
}
