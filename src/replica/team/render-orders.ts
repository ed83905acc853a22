import type { Rec } from '../../query/compile.js';
import { sortYielding } from '../../plan/sort-yielding.js';
import { ordered } from './columns.js';
import type { RenderRows } from './render-rows.js';

/** Sorted orders a team keeps at most (distinct sorts of questions). */
const SORTED_KEPT = 8;
/** Past this many live rows a new sorted order is sorted off the question, a slice at a time (sort-yielding). */
const SORT_AT_ONCE = 8_192;
/** Rows a sort of a new order sorts or merges between two turns of the event loop. */
const SORT_SLICE = 2_048;

/** A sorted order being built: the rows that moved meanwhile take their place once it is sorted. */
interface Building { readonly cmp: (a: number, b: number) => number; readonly moved: Set<number>; readonly added: Set<number> }

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
  /** Sorted orders being built off the questions that asked for them (a large team's), by name. */
  private readonly building = new Map<string, Building>();
  /** What a build under way will give (the order, or undefined when it was dropped), by name: readers wait on it. */
  private readonly builds = new Map<string, Promise<readonly number[] | undefined>>();
  /** The newest-first order of a large team being sorted, and the rows that arrived meanwhile. */
  private newestBuild: Promise<readonly number[]> | null = null;
  private arrived: number[] | null = null;
  /** Moves whenever the newest-first order is dropped (a build under way is then not kept). */
  private newestGen = 0;

  constructor(private readonly rows: RenderRows) {}

  /** The newest-first order and the kept sorted orders are built again on next use (rows were removed). */
  reset(): void {
    this.newest = null;
    this.newestGen++;
    this.sorted.clear();
    this.building.clear();
  }

  /** Every order is built again on next use (uuids or overlays changed). */
  resetAll(): void {
    this.byKey.clear();
    this.newest = null;
    this.newestGen++;
    this.sorted.clear();
    this.building.clear();
  }

  /**
   * Live rows in a query's order, `name` naming it (`title:asc,id:asc`) and `cmp` comparing two rows by it: sorted
   * once, then kept as renders arrive and change (`moved`). A large team's new order is sorted off the question, a
   * slice at a time (`around` wrapping each slice's work): undefined until it is ready, and the question is answered
   * otherwise meanwhile.
   */
  sortedBy(
    name: string, cmp: (a: number, b: number) => number, around: <R>(f: () => R) => R = (f) => this.rows.c.uuidsKept(f),
  ): readonly number[] | undefined {
    let kept = this.sorted.get(name);
    if (kept) {
      this.sorted.delete(name);
      this.sorted.set(name, kept);
      return kept.rows;
    }
    if (this.building.has(name)) return undefined;
    const live = this.rows.liveRows();
    // a large team's order is sorted a slice at a time, off the question (undefined meanwhile: answered otherwise)
    if (live.length > SORT_AT_ONCE) {
      const done: Promise<readonly number[] | undefined> = this.build(name, cmp, live, around)
        .then(() => this.sorted.get(name)?.rows, () => undefined)
        .finally(() => { if (this.builds.get(name) === done) this.builds.delete(name); });
      this.builds.set(name, done);
      return undefined;
    }
    // a sort by uuid (or tied titles then uuids) derives each row's uuid once, not once a comparison
    kept = { cmp, rows: this.rows.c.uuidsKept(() => live.sort(cmp)) };
    this.keep(name, kept);
    return kept.rows;
  }

  /**
   * The order as `sortedBy` gives it, a large team's new order waited for while it is sorted a slice at a time
   * (undefined: its build was dropped, rows removed meanwhile — the question is answered otherwise).
   */
  sortedByReady(
    name: string, cmp: (a: number, b: number) => number, around: <R>(f: () => R) => R = (f) => this.rows.c.uuidsKept(f),
  ): Promise<readonly number[] | undefined> {
    const now = this.sortedBy(name, cmp, around);
    return now ? Promise.resolve(now) : (this.builds.get(name) ?? Promise.resolve(undefined));
  }

  /** Keeps a sorted order (a few are kept, each a number a live row: the one asked least recently goes first). */
  private keep(name: string, kept: { cmp: (a: number, b: number) => number; rows: number[] }): void {
    if (this.sorted.size >= SORTED_KEPT) this.sorted.delete(this.sorted.keys().next().value as string);
    this.sorted.set(name, kept);
  }

  /**
   * Sorts a new order a slice at a time; the rows that moved or arrived meanwhile then take their place. A row that
   * changed while it was being sorted may have put others out of place: the order is sorted again without the rows
   * that changed (an almost sorted list sorts fast), a slice at a time, at once on the third pass. Rows removed (or
   * every order reset) meanwhile: the build is dropped, and the next question asks again.
   */
  private async build(name: string, cmp: (a: number, b: number) => number, live: number[], around: <R>(f: () => R) => R): Promise<void> {
    const b: Building = { cmp, moved: new Set(), added: new Set() };
    this.building.set(name, b);
    try {
      await this.sortBuild(name, b, live, around);
    } catch (e) {
      // a sort that failed is not left under way (the order would never be sorted again): the next question asks anew
      if (this.building.get(name)?.cmp === cmp) this.building.delete(name);
      throw e;
    }
  }

  private async sortBuild(name: string, first: Building, live: number[], around: <R>(f: () => R) => R): Promise<void> {
    let b = first;
    const cmp = b.cmp;
    let rows = await sortYielding(live, cmp, SORT_SLICE, around);
    for (let pass = 1; this.building.get(name) === b; pass++) {
      const changed = [...b.moved].filter((i) => !b.added.has(i));
      if (changed.length === 0) {
        this.building.delete(name);
        around(() => { for (const i of b.moved) insertSorted(rows, i, cmp); });
        this.keep(name, { cmp, rows });
        return;
      }
      // the rows that moved wait outside the order (as if they arrived now) while the rest is sorted again
      const out = new Set(changed);
      rows = rows.filter((i) => !out.has(i));
      b = { cmp, moved: new Set(b.moved), added: new Set(b.moved) };
      this.building.set(name, b);
      const again = rows;
      rows = pass < 3 ? await sortYielding(again, cmp, SORT_SLICE, around) : around(() => again.sort(cmp));
    }
  }

  /** A row was added or changed: it takes its place again in every kept sorted order (a binary search, one splice). */
  moved(i: number, added: boolean): void {
    for (const b of this.building.values()) {
      b.moved.add(i);
      if (added) b.added.add(i);
    }
    if (this.sorted.size > 0) this.rows.c.uuidsKept(() => this.reposition(i, added));
  }

  private reposition(i: number, added: boolean): void {
    for (const kept of this.sorted.values()) {
      const list = kept.rows;
      if (!added) {
        const at = list.indexOf(i);
        if (at >= 0) list.splice(at, 1);
      }
      insertSorted(list, i, kept.cmp);
    }
  }

  /** Rows newest first, ties by uuid (the resource's default order): built once, kept as renders arrive. */
  newestFirst(): readonly number[] {
    if (!this.newest) {
      this.newest = this.rows.liveRows().sort((a, b) => this.newestOrder(a, b));
    }
    return this.newest;
  }

  /**
   * Rows newest first, as `newestFirst`, but a large team's order is sorted a slice at a time the first time (the
   * event loop given turns; renders arriving meanwhile take their place after). Concurrent readers share one sort.
   */
  newestFirstReady(): Promise<readonly number[]> {
    if (this.newest) return Promise.resolve(this.newest);
    this.newestBuild ??= this.buildNewest().finally(() => { this.newestBuild = null; });
    return this.newestBuild;
  }

  private async buildNewest(): Promise<readonly number[]> {
    const live = this.rows.liveRows();
    if (live.length <= SORT_AT_ONCE) return this.newestFirst();
    const gen = this.newestGen;
    this.arrived = [];
    const rows = await sortYielding(live, (a, b) => this.newestOrder(a, b), SORT_SLICE, (f) => this.rows.c.uuidsKept(f));
    const arrived = this.arrived;
    this.arrived = null;
    // sorted at once meanwhile (newestFirst), or dropped meanwhile (rows removed: sorted at once now)
    if (this.newest || gen !== this.newestGen || !arrived) return this.newestFirst();
    this.newest = rows;
    for (const i of arrived) this.place(i);
    return rows;
  }

  private newestOrder(a: number, b: number): number {
    const c = this.rows.c;
    return (c.created[b] as number) - (c.created[a] as number) || c.compareUuids(a, b);
  }

  /** A new render takes its place in the kept order (most arrive at the head: a binary search, one splice). */
  place(i: number): void {
    const list = this.newest;
    if (!list) {
      this.arrived?.push(i);
      return;
    }
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

/** A row takes its place in a sorted list (a binary search, one splice; after its equals). */
function insertSorted(list: number[], i: number, cmp: (a: number, b: number) => number): void {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cmp(list[mid] as number, i) <= 0) lo = mid + 1;
    else hi = mid;
  }
  list.splice(lo, 0, i);
}
