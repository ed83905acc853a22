import { FieldRef, type AggregateNode, type FieldRef as FieldRefT, type SortNode } from './ast.js';
import { compileGetter, type Lookup, type Rec } from './compile.js';
import type { ResourceSchema, SchemaRegistry } from './schema.js';

/** One group of a tally: its key (the group fields' values as records answer them), its records, and per counted field its non-null values. */
export interface Tallied {
  readonly key: readonly unknown[];
  readonly n: number;
  readonly nonNull: readonly number[];
}

export interface AggregateOptions {
  /** Directus on PostgreSQL returns count/sum/avg as strings (bigint/numeric). */
  readonly numericStrings: boolean;
}

const num = (v: number | null, strings: boolean) => (v === null ? null : strings ? String(v) : v);

/**
 * Aggregation and grouping in Directus's shapes: `[{count: N}]`, `[{count: {id: N}}]`, group keys at
 * the top level, groups ordered by the first groupBy field unless sorted (then by the other group keys,
 * so ties are stable), limit/offset applied to groups.
 */
export function aggregateRows(...args: AggregateArgs): Record<string, unknown>[] {
  const steps = aggregating(...args);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Whether grouping or aggregating reads a json field (render data: read as a stand-in, settled by its source). */
export function aggregatesJson(aggregates: readonly AggregateNode[], groupBy: readonly FieldRefT[], resource: ResourceSchema): boolean {
  const json = (name: string | undefined) => name !== undefined && Object.hasOwn(resource.fields, name) && resource.fields[name]?.type === 'json';
  return groupBy.some((g) => json(g.path[0])) || aggregates.some((a) => json(a.field));
}

/** The work (a record's group keys, a value aggregated) done between two turns of aggregateRowsInTurns. */
export const AGGREGATE_SLICE = 20_000;

/**
 * aggregateRows in steps: `turn` is asked between slices of AGGREGATE_SLICE units of work (a record's group keys, a
 * group's values) and awaited when it answers a promise — 100 group keys over 40 000 renders grouped in one turn held
 * an instance 2–3 s (attack pass 15). The same rows as aggregateRows.
 */
export async function aggregateRowsInTurns(...args: [...AggregateArgs, turn: () => Promise<void> | undefined]): Promise<Record<string, unknown>[]> {
  const turn = args[10];
  const steps = aggregating(...(args.slice(0, 10) as AggregateArgs));
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    const wait = turn();
    if (wait) await wait;
  }
}

/** What aggregateRows reads: the records, the aggregates, the group fields, the groups' sort and page, where to read. */
type AggregateArgs = [
  records: readonly Rec[], aggregates: readonly AggregateNode[], groupBy: readonly FieldRefT[], sort: readonly SortNode[], limit: number,
  offset: number, resource: ResourceSchema, schemas: SchemaRegistry, lookup: Lookup, options: AggregateOptions,
];

function* aggregating(...[records, aggregates, groupBy, sort, limit, offset, resource, schemas, lookup, options]: AggregateArgs)
  : Generator<void, Record<string, unknown>[]> {
  let work = 0;
  const spent = (n: number) => { work += n; if (work < AGGREGATE_SLICE) return false; work = 0; return true; };
  // a group field named twice is one group key (Directus answers it once): 100 names of a few fields grouped by each
  // name, key by key (attack pass 15's re-check: 100 group keys, 22 distinct, cost 4.5 times the work)
  const named = new Set<string>();
  const distinctGroupBy = groupBy.filter((g) => !named.has(FieldRef.key(g)) && named.add(FieldRef.key(g)));
  const keyGetters = distinctGroupBy.map((g) => {
    const get = compileGetter(g.path, g.fn, resource, schemas, lookup).get;
    // a function's group key is a PostgreSQL number string too ("2026"), as Directus answers it
    const asString = g.fn !== undefined && options.numericStrings;
    return { key: FieldRef.key(g), get: asString ? (r: Rec) => { const v = get(r); return v === null || v === undefined ? v : String(v); } : get };
  });
  const groups = new Map<unknown, { keys: unknown[]; recs: Rec[] }>();
  if (keyGetters.length === 0) groups.set('', { keys: [], recs: [...records] });
  else if (keyGetters.length === 1) {
    // one group key: its value is the map key (a primitive; an object by its JSON), no per-record allocation
    const get = (keyGetters[0] as (typeof keyGetters)[number]).get;
    for (const r of records) {
      if (spent(1)) yield;
      const v = get(r) ?? null;
      const id = v !== null && typeof v === 'object' ? `\u0000${JSON.stringify(v)}` : v;
      let g = groups.get(id);
      if (!g) {
        g = { keys: [v], recs: [] };
        groups.set(id, g);
      }
      g.recs.push(r);
    }
  } else {
    for (const r of records) {
      if (spent(keyGetters.length)) yield;
      const keys = keyGetters.map((k) => k.get(r) ?? null);
      const id = JSON.stringify(keys);
      let g = groups.get(id);
      if (!g) {
        g = { keys, recs: [] };
        groups.set(id, g);
      }
      g.recs.push(r);
    }
  }
  const rows: Record<string, unknown>[] = [];
  for (const g of groups.values()) {
    if (spent(keyGetters.length + g.recs.length * aggregates.length)) yield;
    const row: Record<string, unknown> = {};
    keyGetters.forEach((k, i) => {
      row[k.key] = g.keys[i];
    });
    for (const a of aggregates) {
      if (a.field === '*') {
        row.count = num(g.recs.length, options.numericStrings);
        continue;
      }
      const values = g.recs.map((r) => r[a.field]).filter((v) => v !== null && v !== undefined);
      const distinct = [...new Set(values.map((v) => (typeof v === 'object' ? JSON.stringify(v) : v)))];
      let out: unknown;
      switch (a.fn) {
        case 'count':
          out = num(values.length, options.numericStrings);
          break;
        case 'countDistinct':
          out = num(distinct.length, options.numericStrings);
          break;
        case 'sum':
          out = values.length
            ? num(
                (values as number[]).reduce((s, v) => s + v, 0),
                options.numericStrings,
              )
            : null;
          break;
        case 'sumDistinct':
          out = distinct.length
            ? num(
                (distinct as number[]).reduce((s, v) => s + v, 0),
                options.numericStrings,
              )
            : null;
          break;
        case 'avg':
          out = values.length ? num((values as number[]).reduce((s, v) => s + v, 0) / values.length, options.numericStrings) : null;
          break;
        case 'avgDistinct':
          out = distinct.length ? num((distinct as number[]).reduce((s, v) => s + v, 0) / distinct.length, options.numericStrings) : null;
          break;
        case 'min':
          out = values.length ? values.reduce((m, v) => ((v as never) < (m as never) ? v : m)) : null;
          break;
        case 'max':
          out = values.length ? values.reduce((m, v) => ((v as never) > (m as never) ? v : m)) : null;
          break;
      }
      put(row, a, out);
    }
    rows.push(row);
  }
  return yield* ordering(rows, keyGetters.map((k) => k.key), sort, limit, offset, options, spent);
}

/** Puts an aggregate's value of a field in its group's row. */
function put(row: Record<string, unknown>, a: AggregateNode, out: unknown): void {
  // several fields of one function make one object per function; a field after `count=*` replaces its
  // plain count, as Directus unflattens `count` then `count->id` ({"count":{"id":"800"}} for `*,id`)
  const current = row[a.fn];
  const bucket = current && typeof current === 'object' ? (current as Record<string, unknown>) : {};
  bucket[a.field] = out;
  row[a.fn] = bucket;
}

/**
 * The row of a group counted elsewhere (the replica's columns): its group keys, then each `count` aggregate — of
 * records (`*`), or of a field's non-null values (`nonNull`, in the order of `aggregates`) — as aggregateRows shapes it.
 */
export function countRow(
  keys: readonly { key: string; value: unknown }[], aggregates: readonly AggregateNode[], n: number, nonNull: readonly number[], options: AggregateOptions,
): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const k of keys) row[k.key] = k.value;
  aggregates.forEach((a, i) => {
    if (a.field === '*') row.count = num(n, options.numericStrings);
    else put(row, a, num(nonNull[i] as number, options.numericStrings));
  });
  return row;
}

/**
 * Groups' rows in Directus's order: the request's sort, else the first groupBy field, then every group key; limit and
 * offset applied to groups (an answer without group keys is one row, which limit does not remove).
 */
export function orderGroups(
  rows: Record<string, unknown>[], keys: readonly string[], sort: readonly SortNode[], limit: number, offset: number, options: AggregateOptions,
): Record<string, unknown>[] {
  const steps = ordering(rows, keys, sort, limit, offset, options, () => false);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** orderGroups in steps: `spent` counts the sort values read (a row's at a time) and says when to yield a turn. */
function* ordering(
  rows: Record<string, unknown>[], keys: readonly string[], sort: readonly SortNode[], limit: number, offset: number, options: AggregateOptions,
  spent: (n: number) => boolean,
): Generator<void, Record<string, unknown>[]> {
  // the request's sort, else the first groupBy field (Directus); then every group key, so ties between
  // groups come out the same whatever order the records were read in (a key already in the order adds nothing)
  const order: { path: string[]; desc: boolean }[] = [];
  const ordered = new Set<string>();
  for (const o of [
    ...sort.map((s) => ({ path: s.field.fn ? [FieldRef.key(s.field)] : [...s.field.path], desc: s.direction === 'desc' })),
    ...keys.map((k) => ({ path: [k], desc: false })),
  ]) {
    const name = o.path.join('.');
    if (ordered.has(name)) continue;
    ordered.add(name);
    order.push(o);
  }
  if (order.length > 0) {
    const at = (row: Record<string, unknown>, path: string[]) => {
      const whole = row[path.join('.')];
      if (whole !== undefined) return whole;
      let v: unknown = row;
      for (const p of path) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
      return v;
    };
    const numeric = (v: unknown) => (typeof v === 'string' && v !== '' && !Number.isNaN(Number(v)) && options.numericStrings ? Number(v) : v);
    // each row's sort values read once (40 000 groups of 100 keys read them again at every comparison: attack pass 15),
    // a slice of rows a turn (its re-check: reading them took 0.2 s in one turn)
    const keyed: { row: Record<string, unknown>; v: never[] }[] = [];
    for (const row of rows) {
      if (spent(order.length)) yield;
      keyed.push({ row, v: order.map((o) => numeric(at(row, o.path)) as never) });
    }
    keyed.sort((x, y) => {
      for (let i = 0; i < order.length; i++) {
        const desc = (order[i] as { desc: boolean }).desc;
        const a = x.v[i];
        const b = y.v[i];
        if (a == null || b == null) {
          if (a == null && b == null) continue;
          return a == null ? (desc ? -1 : 1) : desc ? 1 : -1;
        }
        if (a < b) return desc ? 1 : -1;
        if (a > b) return desc ? -1 : 1;
      }
      return 0;
    });
    for (let i = 0; i < keyed.length; i++) rows[i] = (keyed[i] as { row: Record<string, unknown> }).row;
  }
  if (keys.length === 0) return rows; // one row; limit does not remove it
  return limit === -1 ? rows.slice(offset) : rows.slice(offset, offset + limit);
}
