import type { ColumnScan, Tallied } from '../exec/source.js';
import type { SortNode } from '../query/ast.js';
import type { Rec } from '../query/compile.js';
import { codedField, type CodedField, type RenderColumns, type RowTest } from './column-filter.js';
import { OVERLAY, REMOVED } from './columns.js';

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
  readonly sorted: (name: string, cmp: (a: number, b: number) => number) => readonly number[] | undefined;
}

/** The orders kept sorted: a query sorted by these root fields (its tie-break by id included). */
const KEPT_ORDERS = new Set(['date_created', 'date_updated', 'title', 'status', 'id']);

/** Rows a batch of matching records holds. */
const BATCH = 4096;

/** Calls `each` with every row of a team's scope. */
function forRows(t: TeamColumns, each: (row: number) => void): number {
  if (t.rows) {
    let n = 0;
    for (const rows of t.rows) {
      for (const row of rows) each(row);
      n += rows.length;
    }
    return n;
  }
  const c = t.cols.c;
  const size = c.size;
  let n = 0;
  for (let row = 0; row < size; row++) {
    if (((c.flags[row] as number) & REMOVED) !== 0) continue;
    n++;
    each(row);
  }
  return n;
}

/** Rows compared as their records are (a closure holding the team's columns and the comparison only: teams keep it). */
function rowOrder(cols: RenderColumns, cmp: (a: Rec, b: Rec) => number): (a: number, b: number) => number {
  return (a, b) => cmp(cols.view(a), cols.view(b));
}

/** A group being counted: its records and, per counted field, its non-null values. */
interface Counter { n: number; nonNull: number[] }

/**
 * A render filter answered on the columns of the teams in scope: counted, tallied by a coded field into small arrays
 * indexed by code (a row with an overlay is read from its record), or walked to build only the records that pass.
 */
export class RenderColumnScan implements ColumnScan {
  constructor(private readonly teams: readonly TeamColumns[]) {}

  count(): { tested: number; matched: number } {
    let tested = 0;
    let matched = 0;
    for (const t of this.teams) {
      const test = t.test;
      tested += forRows(t, (row) => {
        if (test(row)) matched++;
      });
    }
    return { tested, matched };
  }

  tally(groupBy: string | null, fields: readonly string[]): { tested: number; groups: Tallied[] } | undefined {
    const groups = new Map<unknown, Counter>();
    const counter = (key: unknown) => {
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { n: 0, nonNull: fields.map(() => 0) }));
      return g;
    };
    let tested = 0;
    for (const t of this.teams) {
      const group: CodedField = groupBy === null ? { code: () => 0, value: () => null } : (codedField(t.cols, groupBy) as CodedField);
      // (a record's id is never null: its count is the group's)
      const counted = fields.map((f) => (f === 'id' ? null : codedField(t.cols, f)));
      if ((groupBy !== null && !codedField(t.cols, groupBy)) || counted.some((f) => f === undefined)) return undefined;
      const coded = counted as (CodedField | null)[];
      // per group code: its records, and per counted field its non-null values (a field's nullness is read once per code)
      const n: number[] = [];
      const nonNull = fields.map((): number[] => []);
      const isSet = coded.map((): (number | undefined)[] => []);
      const c = t.cols.c;
      tested += forRows(t, (row) => {
        if (!t.test(row)) return;
        if (((c.flags[row] as number) & OVERLAY) !== 0) {
          const rec = t.cols.view(row);
          const g = counter(groupBy === null ? null : (rec[groupBy] ?? null));
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
      });
      n.forEach((count, k) => {
        if (!count) return;
        const g = counter(group.value(k) ?? null);
        g.n += count;
        fields.forEach((_, i) => {
          g.nonNull[i]! += coded[i] ? ((nonNull[i] as number[])[k] ?? 0) : count;
        });
      });
    }
    return { tested, groups: [...groups].map(([key, g]) => ({ key, n: g.n, nonNull: g.nonNull })) };
  }

  /**
   * The first `n` records passing the filter in the query's order (`sort`, compared by `cmp`), read from each team's
   * kept order of that sort and merged (undefined when the sort is not one kept): rows are tested until `n` pass.
   */
  inOrder(sort: readonly SortNode[], cmp: (a: Rec, b: Rec) => number, n: number): { tested: number; recs: Rec[] } | undefined {
    if (sort.some((s) => s.field.fn || s.field.path.length !== 1 || !KEPT_ORDERS.has(s.field.path[0] as string))) return undefined;
    const name = sort.map((s) => `${s.field.path[0]}:${s.direction}`).join(',');
    let tested = 0;
    // every team's kept order (one still being sorted: the question is answered otherwise)
    const orders = this.teams.map((t) => t.sorted(name, rowOrder(t.cols, cmp)));
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
      return { next, head: next() };
    });
    const recs: Rec[] = [];
    while (recs.length < n) {
      let best: (typeof runs)[number] | undefined;
      for (const r of runs) if (r.head && (!best || cmp(r.head, best.head as Rec) < 0)) best = r;
      if (!best) break;
      recs.push(best.head as Rec);
      best.head = best.next();
    }
    return { tested, recs };
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
