import { describe, expect, it } from 'vitest';
import { Aggregate, FieldRef, Sort } from '../../src/query/ast.js';
import { AGGREGATE_SLICE, aggregateRows, aggregateRowsInTurns } from '../../src/query/aggregate.js';
import type { ResourceSchema } from '../../src/query/schema.js';
import { fieldsToSelect } from '../../src/query/fields-used.js';
import { parseQuery } from '../../src/query/parse-query.js';
import { ctx, schemas as legacy } from './fixtures.js';

/** Numeric aggregates, on a resource with numeric fields (the legacy resources have none). */
const schema: ResourceSchema = { key: 'item', name: 'items', defaultSort: ['id'], fields: { id: { name: 'id', type: 'integer' }, kind: { name: 'kind', type: 'string' }, n: { name: 'n', type: 'integer' }, x: { name: 'x', type: 'float' } } };
const rows = [
  { id: 1, kind: 'a', n: 2, x: 1.5 }, { id: 2, kind: 'a', n: 2, x: null }, { id: 3, kind: 'b', n: 5, x: 2.5 }, { id: 4, kind: 'b', n: null, x: 0.5 },
];
const lookup = { one: () => undefined, many: () => [] };
const run = (aggs: [string, string][], groupBy: string[] = [], strings = true, sort: string[] = []) => aggregateRows(rows, aggs.map(([f, k]) => Aggregate.create(f as never, k)), groupBy.map((g) => FieldRef.create([g])), sort.map((s) => Sort.create(FieldRef.create(s.replace('-', '').split('.')), s.startsWith('-') ? 'desc' : 'asc')), 100, 0, schema, { item: schema }, lookup, { numericStrings: strings });

describe('numeric aggregates', () => {
  it('sum, sumDistinct, avg, avgDistinct, min, max, countDistinct; nulls ignored', () => {
    expect(run([['sum', 'n'], ['sumDistinct', 'n'], ['avg', 'n'], ['avgDistinct', 'n'], ['min', 'x'], ['max', 'x'], ['countDistinct', 'n'], ['count', 'x']])).toEqual([{
      sum: { n: '9' }, sumDistinct: { n: '7' }, avg: { n: '3' }, avgDistinct: { n: '3.5' }, min: { x: 0.5 }, max: { x: 2.5 }, countDistinct: { n: '2' }, count: { x: '3' },
    }]);
    expect(run([['sum', 'n']], [], false)).toEqual([{ sum: { n: 9 } }]);
  });
  it('per group, ordered by the first groupBy field or by an aggregate', () => {
    expect(run([['sum', 'n'], ['count', '*']], ['kind'])).toEqual([{ kind: 'a', sum: { n: '4' }, count: '2' }, { kind: 'b', sum: { n: '5' }, count: '2' }]);
    expect(run([['sum', 'x']], ['kind'], true, ['-sum.x']).map((r) => r.kind)).toEqual(['b', 'a']);
  });
});

describe('fields a selection reads (what folding aggregates keeps of each record)', () => {
  const used = (raw: Record<string, unknown>) => [...fieldsToSelect(parseQuery(raw, legacy.render!, ctx()), legacy.render!)].sort();
  it('filter roots, groupBy, aggregate fields and sort, plus id; never the projection', () => {
    // without a sort the default order (-date_created, id) decides what is kept
    expect(used({ aggregate: { count: '*' }, fields: 'title,data' })).toEqual(['date_created', 'id']);
    expect(used({ aggregate: { count: '*' }, fields: 'title,data', sort: 'status' })).toEqual(['id', 'status']);
    expect(used({ aggregate: { countDistinct: 'project' }, groupBy: 'status,year(date_created)' })).toEqual(['date_created', 'id', 'project', 'status']);
    expect(used({ filter: { _or: [{ project: { title: { _eq: 'x' } } }, { data: { _null: true } }] }, sort: '-title' })).toEqual(['data', 'id', 'project', 'title']);
  });
  it('a search reads every searched field', () => {
    const s = used({ search: 'x' });
    expect(s).toEqual(expect.arrayContaining(['id', 'title', 'status']));
    expect(s).not.toContain('data'); // json is not searched
  });
});

describe('several fields of one function (Directus 10: one object per function)', () => {
  it('count of several fields, count=* followed by a field, and a field followed by *', () => {
    expect(run([['count', 'id'], ['count', 'kind']])).toEqual([{ count: { id: '4', kind: '4' } }]);
    expect(run([['count', '*'], ['count', 'id']])).toEqual([{ count: { id: '4' } }]);
    expect(run([['count', 'n'], ['count', '*']])).toEqual([{ count: '4' }]);
    expect(run([['count', '*'], ['count', 'x']], ['kind'])).toEqual([{ kind: 'a', count: { x: '1' } }, { kind: 'b', count: { x: '2' } }]);
  });
});

describe('aggregating in turns (attack pass 15: 100 group keys over 40 000 renders grouped in one turn held an instance 2–3 s)', () => {
  it('the rows of aggregateRows, the work cut in slices with a turn asked between them', async () => {
    const wide: ResourceSchema = {
      key: 'item', name: 'items', defaultSort: ['id'],
      fields: Object.fromEntries([['id', { name: 'id', type: 'integer' }], ...Array.from({ length: 40 }, (_, i) => [`f${i}`, { name: `f${i}`, type: 'string' }])]),
    } as ResourceSchema;
    // 20 000 records, 40 group keys (the last one varies most), and a distinct count
    const recs = Array.from({ length: 20_000 }, (_, i) => Object.fromEntries([['id', i], ...Array.from({ length: 40 }, (_, k) => [`f${k}`, `v${k === 39 ? i % 5_000 : i % (k + 2)}`])]));
    const groupBy = Array.from({ length: 40 }, (_, k) => FieldRef.create([`f${k}`]));
    const aggs = [Aggregate.create('count' as never, '*'), Aggregate.create('countDistinct' as never, 'id')];
    const sort = [Sort.create(FieldRef.create(['f39']), 'desc')];
    const args = [recs, aggs, groupBy, sort, -1, 3, wide, { item: wide }, lookup, { numericStrings: true }] as const;
    let turns = 0;
    const inTurns = await aggregateRowsInTurns(...args, () => { turns++; return turns % 2 ? Promise.resolve() : undefined; });
    const whole = aggregateRows(...args);
    expect(whole.length).toBe(20_000 - 3); // (every record its own group: the keys' cycles never meet; offset 3)
    expect(inTurns).toEqual(whole);
    // 20 000 × 40 keys, then the groups: a turn asked at least every AGGREGATE_SLICE units of work
    expect(turns).toBeGreaterThanOrEqual(Math.floor((20_000 * 40) / AGGREGATE_SLICE));
    expect(whole.map((r) => r.f39).slice(0, 2)).toEqual(['v999', 'v998']); // (sorted as text, descending, after 3 of v999)
  });

  it('a group field named many times is one group key, and ordering many groups is cut in slices too (its re-check: 100 names of 22 fields)', async () => {
    const recs = Array.from({ length: 20_000 }, (_, i) => ({ id: i, kind: i % 2 ? 'a' : 'b', n: i, x: null }));
    const twice = (names: string[]) => names.map((g) => FieldRef.create([g]));
    const aggs = [Aggregate.create('count' as never, '*')];
    const args = (groupBy: string[]) => [recs, aggs, twice(groupBy), [], -1, 0, schema, { item: schema }, lookup, { numericStrings: true }] as const;
    const named100 = Array.from({ length: 100 }, (_, i) => (i % 2 ? 'kind' : 'id'));
    let turns = 0;
    const got = await aggregateRowsInTurns(...args(named100), () => { turns++; return undefined; });
    expect(got).toEqual(aggregateRows(...args(['id', 'kind'])));
    expect(got).toHaveLength(20_000);
    expect(got[0]).toEqual({ id: 0, kind: 'b', count: '1' });
    // grouping (20 000 × 2 keys), the rows (20 000 × 3) and their order (20 000 × 2): 7 slices, a turn asked between
    // (before: every name grouped again, 20 000 × 100, and the order read in one go)
    expect(turns).toBeGreaterThanOrEqual(6);
    expect(turns).toBeLessThanOrEqual(8);
  });
});
