import type { Tallied } from '../../query/aggregate.js';
import type { SortNode } from '../../query/ast.js';
import type { Comparator, Rec, SortKey } from '../../query/compile.js';
import { codedField, type CodedField, type RenderColumns, type RowTest, type StatusForm } from './column-filter.js';
import { OVERLAY, REMOVED, type Columns } from './columns.js';

/** One team's part of a column scan: its columns, the filter compiled to them, and the rows in scope (null: every live row). */
export interface TeamColumns {
  readonly cols: RenderColumns;
  readonly test: RowTest;
  readonly rows: readonly (readonly number[])[] | null;
  /** The project codes of the scope (null: every project). */
  readonly projects: ReadonlySet<number> | null;
  /**
   * Live rows in a query's order, kept by the team (`name` naming the order, `cmp` comparing rows by it); undefined
   * while a large team's order is being sorted (the question is answered otherwise meanwhile).
   */
  readonly sorted: (name: string, cmp: (a: number, b: number) => number) => Promise<readonly number[] | undefined>;
  /** The filter as a test of the status code alone, when it is one and the scope is the whole team (counts kept answer it). */
  readonly form?: StatusForm;
}

/** A team's live rows counted per status code (rows without an overlay), and its live rows with an overlay. */
interface StatusCounts { readonly live: number; readonly byStatus: readonly number[]; readonly overlaid: readonly number[] }

/** Each team's status counts, valid while its columns' writes have not moved. */
const kept = new WeakMap<Columns, { writes: number; counts: StatusCounts }>();

/** The team's status counts: counted once (one pass over two byte columns) each time its rows changed. */
function statusCounts(c: Columns): StatusCounts {
  const hit = kept.get(c);
  if (hit && hit.writes === c.writes) return hit.counts;
  const byStatus: number[] = [];
  const overlaid: number[] = [];
  let live = 0;
  const { status, flags, size } = c;
  for (let row = 0; row < size; row++) {
    const f = flags[row] as number;
    if ((f & REMOVED) !== 0) continue;
    live++;
    if ((f & OVERLAY) !== 0) overlaid.push(row);
    else {
      const k = status[row] as number;
      byStatus[k] = (byStatus[k] ?? 0) + 1;
    }
  }
  const counts = { live, byStatus, overlaid };
  kept.set(c, { writes: c.writes, counts });
  return counts;
}

/** The team's counts when its filter rests on the status alone over the whole team (undefined: test row by row). */
function countsFor(t: TeamColumns): StatusCounts | undefined {
  return !t.rows && t.form?.holds() ? statusCounts(t.cols.c) : undefined;
}

/** The orders kept sorted: a query sorted by these root fields (its tie-break by id included). */
const KEPT_ORDERS = new Set(['date_created', 'date_updated', 'title', 'status', 'id']);

/** Rows a batch of matching records holds. */
const BATCH = 4096;

/** Calls `each` with every live row of a team's scope (a project's rows read before a wait may be removed since). */
function forRows(t: TeamColumns, each: (row: number) => void): number {
  const c = t.cols.c;
  if (t.rows) {
    let n = 0;
    for (const rows of t.rows) {
      for (const row of rows) {
        if (((c.flags[row] as number) & REMOVED) !== 0) continue;
        n++;
        each(row);
      }
    }
    return n;
  }
  const size = c.size;
  // the filter's answers of every row at once, when it has a way to them: only the rows passing are handed on
  const passing = t.test.all?.(size);
  let n = 0;
  for (let row = 0; row < size; row++) {
    if (((c.flags[row] as number) & REMOVED) !== 0) continue;
    n++;
    if (passing && row < passing.length && passing[row] === 0) continue;
    each(row);
  }
  return n;
}

/** Rows compared as their records are (a closure holding the team's columns and the comparison only: teams keep it). */
function rowOrder(cols: RenderColumns, cmp: (a: Rec, b: Rec) => number): (a: number, b: number) => number {
  return (a, b) => cmp(cols.view(a), cols.view(b));
}

/** One team's walk of its kept order in a merge (`k`: the team's place): its next record passing the filter. */
export interface Run { readonly next: () => Rec | undefined; head: Rec | undefined; readonly k: number }

/**
 * The first `n` records of the runs merged in `cmp`'s order (ties: the earlier team first). The runs still holding a
 * record are kept in the order of their heads, each head's sort values read once: a record taken costs a binary search
 * among the other heads (one team: none), not a comparison of every head, each reading both records' values again.
 */
export function merged(runs: readonly Run[], cmp: Comparator, n: number): Rec[] {
  type Head = Run & { key?: SortKey };
  // (a's head comes after b's: the heads are kept from the last taken, at the end, to the first)
  const after = (a: Head, b: Head) => {
    const c = cmp.byKeys(a.key as SortKey, b.key as SortKey);
    return c > 0 || (c === 0 && a.k > b.k);
  };
  const heads: Head[] = runs.filter((r) => r.head !== undefined);
  // (one team's walk is never compared: its values are not read)
  if (heads.length > 1) for (const h of heads) h.key = cmp.keyOf(h.head as Rec);
  heads.sort((a, b) => (after(a, b) ? -1 : 1));
  const recs: Rec[] = [];
  while (recs.length < n && heads.length > 0) {
    const best = heads.pop() as Head;
    recs.push(best.head as Rec);
    best.head = best.next();
    if (!best.head) continue;
    if (heads.length > 0) {
      best.key = cmp.keyOf(best.head);
      // its place among the other heads (a binary search), the heads after it moved up one
      let lo = 0;
      let hi = heads.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (after(heads[mid] as Head, best)) lo = mid + 1;
        else hi = mid;
      }
      for (let i = heads.length; i > lo; i--) heads[i] = heads[i - 1] as Head;
      heads[lo] = best;
    } else heads.push(best);
  }
  return recs;
}

/** A group being counted: its records and, per counted field, its non-null values. */
interface Counter { n: number; nonNull: number[] }

/** A pair of codes as one number (a team's codes number far fewer than 2^21: its statuses, projects, creators). */
const CODE_SPAN = 2 ** 21;

/**
 * The group fields of a tally as one small code a row (no field: one group; two: each pair of their codes met numbered
 * as met), and each code's values; undefined when a field is not held as codes.
 */
function groupCode(cols: RenderColumns, names: readonly string[]): { code(row: number): number; value(code: number): unknown[] } | undefined {
  const fields = names.map((n) => codedField(cols, n));
  if (fields.some((f) => f === undefined)) return undefined;
  const [a, b] = fields as CodedField[];
  if (!a) return { code: () => 0, value: () => [] };
  if (!b) return { code: (row) => a.code(row), value: (k) => [a.value(k) ?? null] };
  const numbered = new Map<number, number>();
  const pairs: number[] = [];
  return {
    code: (row) => {
      const pair = a.code(row) * CODE_SPAN + b.code(row);
      let k = numbered.get(pair);
      if (k === undefined) {
        numbered.set(pair, (k = pairs.length));
        pairs.push(pair);
      }
      return k;
    },
    value: (k) => {
      const pair = pairs[k] as number;
      return [a.value(Math.floor(pair / CODE_SPAN)) ?? null, b.value(pair % CODE_SPAN) ?? null];
    },
  };
}

/**
 * A render filter answered on the columns of the teams in scope: counted, tallied by a coded field into small arrays
 * indexed by code (a row with an overlay is read from its record), or walked to build only the records that pass. It is
 * the executor's `ColumnScan` (src/exec/source.ts), held to it where the replica's source hands it out.
 */
export class RenderColumnScan {
  constructor(private readonly teams: readonly TeamColumns[]) {}

  count(): { tested: number; matched: number } {
    const { tested, matched } = this.countFirst(() => 0, 0, 0); // (no match kept)
    return { tested, matched };
  }

  countFirst(cmp: (a: Rec, b: Rec) => number, n: number, few: number): { tested: number; matched: number; recs?: Rec[] } {
    let tested = 0;
    let matched = 0;
    // the matching rows, while they are few (past `few`, the caller walks a kept order: the matches are dense there)
    const found: Rec[] = [];
    let many = false;
    for (const t of this.teams) {
      const test = t.test;
      const counts = countsFor(t);
      if (counts) {
        // (a filter on the status alone: counted without a pass; its rows are the kept order's to find)
        tested += counts.live;
        counts.byStatus.forEach((m, k) => { if (m && t.form?.byStatus(k)) matched += m; });
        for (const row of counts.overlaid) if (test(row)) matched++;
        many = true;
        continue;
      }
      tested += forRows(t, (row) => {
        if (!test(row)) return;
        matched++;
        if (many) return;
        if (found.length === few) many = true;
        else found.push(t.cols.view(row));
      });
    }
    return many ? { tested, matched } : { tested, matched, recs: found.sort(cmp).slice(0, n) };
  }

  tally(groupBy: readonly string[], fields: readonly string[]): { tested: number; groups: Tallied[] } | undefined {
    if (groupBy.length > 2) return undefined;
    // groups by their values (teams code them differently): one value as it is, two by their JSON
    const groups = new Map<unknown, Counter & { key: readonly unknown[] }>();
    const counter = (key: readonly unknown[]) => {
      const name = key.length < 2 ? key[0] : JSON.stringify(key);
      let g = groups.get(name);
      if (!g) groups.set(name, (g = { key, n: 0, nonNull: fields.map(() => 0) }));
      return g;
    };
    let tested = 0;
    for (const t of this.teams) {
      const group = groupCode(t.cols, groupBy);
      // (a record's id is never null: its count is the group's)
      const counted = fields.map((f) => (f === 'id' ? null : codedField(t.cols, f)));
      if (!group || counted.some((f) => f === undefined)) return undefined;
      const coded = counted as (CodedField | null)[];
      // per group code: its records, and per counted field its non-null values (a field's nullness is read once per code)
      const n: number[] = [];
      const nonNull = fields.map((): number[] => []);
      const isSet = coded.map((): (number | undefined)[] => []);
      const c = t.cols.c;
      const visit = (row: number): void => {
        if (!t.test(row)) return;
        if (((c.flags[row] as number) & OVERLAY) !== 0) {
          const rec = t.cols.view(row);
          const g = counter(groupBy.map((f) => rec[f] ?? null));
          g.n++;
          fields.forEach((f, i) => {
            if (rec[f] !== null && rec[f] !== undefined) g.nonNull[i]!++;
          });
          return;
        }
        const k = group.code(row);
        n[k] = (n[k] ?? 0) + 1;
        for (let i = 0; i < coded.length; i++) {
          const f = coded[i];
          if (!f) continue;
          const fk = f.code(row);
          const known = isSet[i] as (number | undefined)[];
          let set = known[fk];
          if (set === undefined) {
            const v = f.value(fk);
            known[fk] = set = v === null || v === undefined ? 0 : 1;
          }
          const nn = nonNull[i] as number[];
          nn[k] = (nn[k] ?? 0) + set;
        }
      };
      // a count of records grouped by status (or not grouped) of a filter on the status alone: the team's kept counts
      const byStatus = groupBy.length === 1 && groupBy[0] === 'status';
      const counts = (groupBy.length === 0 || byStatus) && coded.every((f) => f === null) ? countsFor(t) : undefined;
      if (counts) {
        tested += counts.live;
        counts.byStatus.forEach((m, k) => {
          if (!m || !t.form?.byStatus(k)) return;
          const g = byStatus ? k : 0;
          n[g] = (n[g] ?? 0) + m;
        });
        for (const row of counts.overlaid) visit(row);
      } else tested += forRows(t, visit);
      n.forEach((count, k) => {
        if (!count) return;
        const g = counter(group.value(k));
        g.n += count;
        fields.forEach((_, i) => {
          g.nonNull[i]! += coded[i] ? ((nonNull[i] as number[])[k] ?? 0) : count;
        });
      });
    }
    return { tested, groups: [...groups.values()].map((g) => ({ key: g.key, n: g.n, nonNull: g.nonNull })) };
  }

  /**
   * The first `n` records passing the filter in the query's order (`sort`, compared by `cmp`), read from each team's
   * kept order of that sort and merged (undefined when the sort is not one kept): rows are tested until `n` pass.
   */
  async inOrder(sort: readonly SortNode[], cmp: Comparator, n: number): Promise<{ tested: number; recs: Rec[] } | undefined> {
    if (sort.some((s) => s.field.fn || s.field.path.length !== 1 || !KEPT_ORDERS.has(s.field.path[0] as string))) return undefined;
    const name = sort.map((s) => `${s.field.path[0]}:${s.direction}`).join(',');
    let tested = 0;
    // every team's kept order; one still being sorted is waited for (readers share the one sort, which gives the event
    // loop its turns: far cheaper than each question testing and ordering the whole team meanwhile); one the team
    // could not finish (rows removed meanwhile) leaves the question to be answered otherwise
    const orders = await Promise.all(this.teams.map((t) => t.sorted(name, rowOrder(t.cols, cmp))));
    if (orders.some((o) => o === undefined)) return undefined;
    // per team: its kept order, where it stands in it, and the next record passing the filter there
    const runs = this.teams.map((t, k) => {
      const c = t.cols.c;
      const rows = orders[k] as readonly number[];
      let at = 0;
      const next = (): Rec | undefined => {
        while (at < rows.length) {
          const row = rows[at++] as number;
          if (((c.flags[row] as number) & REMOVED) !== 0 || (t.projects && !t.projects.has(c.project[row] as number))) continue;
          tested++;
          if (t.test(row)) return t.cols.view(row);
        }
        return undefined;
      };
      return { next, head: next(), k };
    });
    return { tested, recs: merged(runs, cmp, n) };
  }

  async matches(take: (batch: readonly Rec[]) => Promise<void> | void): Promise<number> {
    let tested = 0;
    for (const t of this.teams) {
      let batch: Rec[] = [];
      const rows: number[] = [];
      tested += forRows(t, (row) => {
        if (t.test(row)) rows.push(row);
      });
      // rows are chosen first, then turned into records and handed on a batch at a time, the event loop given a turn
      // between batches (a question over 100 000 matches does not hold it)
      for (let i = 0; i < rows.length; i += BATCH) {
        batch = rows.slice(i, i + BATCH).map((row) => t.cols.view(row));
        await take(batch);
        if (i + BATCH < rows.length) await new Promise<void>((r) => setImmediate(r));
      }
    }
    return tested;
  }
}
