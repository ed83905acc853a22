import { describe, expect, it } from 'vitest';
import { Aggregate, FieldRef, Sort } from '../../src/query/ast.js';
import { aggregateRows } from '../../src/query/aggregate.js';
import type { Rec } from '../../src/query/compile.js';
import { item, items, shop, shopLookup } from './shop-fixtures.js';

// items (see shop-fixtures): n 1, 10, null, 0, 5; flag true, false, null, false, true; month(at) 1, 3, null, 12, 1
type Agg = [string, string];
const run = (
  records: readonly Rec[], aggs: Agg[], opts: { groupBy?: [string, string?][]; sort?: [string, 'asc' | 'desc', string?][]; limit?: number; offset?: number; strings?: boolean } = {},
) =>
  aggregateRows(
    records,
    aggs.map(([fn, f]) => Aggregate.create(fn as never, f)),
    (opts.groupBy ?? []).map(([f, fn]) => FieldRef.create([f], fn as never)),
    (opts.sort ?? []).map(([p, d, fn]) => Sort.create(FieldRef.create(p.split('.'), fn as never), d)),
    opts.limit ?? 100, opts.offset ?? 0, item, shop, shopLookup, { numericStrings: opts.strings ?? false },
  );

const ALL: Agg[] = [['count', 'n'], ['countDistinct', 'n'], ['sum', 'n'], ['sumDistinct', 'n'], ['avg', 'n'], ['avgDistinct', 'n'], ['min', 'n'], ['max', 'n']];

describe('every function over the whole set (nulls ignored)', () => {
  it('as numbers', () => {
    expect(run(items, [['count', '*'], ...ALL])).toEqual([{
      count: { n: 4 }, countDistinct: { n: 4 }, sum: { n: 16 }, sumDistinct: { n: 16 }, avg: { n: 4 }, avgDistinct: { n: 4 }, min: { n: 0 }, max: { n: 10 },
    }]);
    expect(run(items, [['count', '*']])).toEqual([{ count: 5 }]);
  });
  it('as PostgreSQL answers them: count/sum/avg as strings, min/max in the column type', () => {
    expect(run(items, [['count', '*'], ['sum', 'x'], ['avg', 'x'], ['min', 'x'], ['max', 'x'], ['min', 'at'], ['max', 'name']], { strings: true })).toEqual([{
      count: '5', sum: { x: '3' }, avg: { x: '0.75' }, min: { x: -1, at: '2026-01-01T00:00:00.000Z' }, max: { x: 2.5, name: 'cherry' },
    }]);
  });
  it('distinct variants count a repeated value once, objects by content', () => {
    const recs = [{ id: 'a', n: 2, meta: { a: 1 } }, { id: 'b', n: 2, meta: { a: 1 } }, { id: 'c', n: 3, meta: { a: 2 } }, { id: 'd', n: null, meta: null }];
    expect(run(recs, [['countDistinct', 'n'], ['sumDistinct', 'n'], ['avgDistinct', 'n'], ['sum', 'n'], ['avg', 'n'], ['countDistinct', 'meta'], ['count', 'meta']])).toEqual([{
      countDistinct: { n: 2, meta: 2 }, sumDistinct: { n: 5 }, avgDistinct: { n: 2.5 }, sum: { n: 7 }, avg: { n: 7 / 3 }, count: { meta: 3 },
    }]);
  });
  it('a record without the field counts as null', () => {
    expect(run([{ id: 'a', n: 1 }, { id: 'b' }, { id: 'c', n: 2 }], [['count', 'n'], ['countDistinct', 'n'], ['avg', 'n']])).toEqual([{ count: { n: 2 }, countDistinct: { n: 2 }, avg: { n: 1.5 } }]);
  });
  it('an empty set still gives one row: counts 0, the others null', () => {
    expect(run([], [['count', '*'], ...ALL])).toEqual([{
      count: { n: 0 }, countDistinct: { n: 0 }, sum: { n: null }, sumDistinct: { n: null }, avg: { n: null }, avgDistinct: { n: null }, min: { n: null }, max: { n: null },
    }]);
    expect(run([], [['count', '*'], ['sum', 'n']], { strings: true })).toEqual([{ count: '0', sum: { n: null } }]);
    expect(run([items[2]!], [['sum', 'n'], ['avg', 'n'], ['min', 'n'], ['count', 'n']])).toEqual([{ sum: { n: null }, avg: { n: null }, min: { n: null }, count: { n: 0 } }]);
  });
  it('the one row survives limit 0 and any offset', () => {
    expect(run(items, [['count', '*']], { limit: 0 })).toEqual([{ count: 5 }]);
    expect(run(items, [['count', '*']], { offset: 3 })).toEqual([{ count: 5 }]);
  });
});

describe('groups', () => {
  it('one key: keys at the top level, ordered ascending, the null group last', () => {
    expect(run(items, [['count', '*'], ['sum', 'n']], { groupBy: [['flag']] })).toEqual([
      { flag: false, count: 2, sum: { n: 10 } }, { flag: true, count: 2, sum: { n: 6 } }, { flag: null, count: 1, sum: { n: null } },
    ]);
  });
  it('a date function key is `<field>_<fn>`, a number string for PostgreSQL, ordered by value', () => {
    expect(run(items, [['count', '*']], { groupBy: [['at', 'month']], strings: true })).toEqual([
      { at_month: '1', count: '2' }, { at_month: '3', count: '1' }, { at_month: '12', count: '1' }, { at_month: null, count: '1' },
    ]);
    expect(run(items, [['count', '*']], { groupBy: [['at', 'month']] })).toEqual([
      { at_month: 1, count: 2 }, { at_month: 3, count: 1 }, { at_month: 12, count: 1 }, { at_month: null, count: 1 },
    ]);
  });
  it('groups equal objects together', () => {
    const recs = [{ id: 'a', meta: { a: 1 } }, { id: 'b', meta: { a: 1 } }, { id: 'c', meta: { a: 2 } }, { id: 'd' }];
    expect(run(recs, [['count', '*']], { groupBy: [['meta']] })).toEqual([{ meta: { a: 1 }, count: 2 }, { meta: { a: 2 }, count: 1 }, { meta: null, count: 1 }]);
  });
  it('two keys: one group per pair, ordered by each key in turn', () => {
    expect(run(items, [['count', '*']], { groupBy: [['flag'], ['at', 'month']], strings: true })).toEqual([
      { flag: false, at_month: '3', count: '1' }, { flag: false, at_month: '12', count: '1' }, { flag: true, at_month: '1', count: '2' }, { flag: null, at_month: null, count: '1' },
    ]);
    const recs = [{ id: 'a', flag: true }, { id: 'b', flag: true, name: undefined }, { id: 'c', flag: true, name: 'z' }];
    expect(run(recs, [['count', '*']], { groupBy: [['flag'], ['name']] })).toEqual([{ flag: true, name: 'z', count: 1 }, { flag: true, name: null, count: 2 }]);
  });
  it('limit and offset page the groups; -1 is every group', () => {
    const flags = (o: { limit?: number; offset?: number }) => run(items, [['count', '*']], { groupBy: [['flag']], ...o }).map((r) => r.flag);
    expect(flags({ limit: 1 })).toEqual([false]);
    expect(flags({ limit: 1, offset: 1 })).toEqual([true]);
    expect(flags({ limit: 0 })).toEqual([]);
    expect(flags({ limit: -1, offset: 1 })).toEqual([true, null]);
    expect(flags({ limit: -1 })).toEqual([false, true, null]);
  });
});

describe('sorting groups', () => {
  it('by a group key descending: nulls first', () => {
    expect(run(items, [['count', '*']], { groupBy: [['flag']], sort: [['flag', 'desc']] }).map((r) => r.flag)).toEqual([null, true, false]);
    expect(run(items, [['count', '*']], { groupBy: [['at', 'month']], sort: [['at', 'desc', 'month']], strings: true }).map((r) => r.at_month)).toEqual([null, '12', '3', '1']);
    expect(run(items, [['count', '*']], { groupBy: [['at', 'month']], sort: [['at_month', 'desc']], strings: true }).map((r) => r.at_month)).toEqual([null, '12', '3', '1']);
  });
  it('by an aggregate, numerically even as number strings; ties broken by the group keys', () => {
    // sum of n: false 10, true 6, null none
    expect(run(items, [['sum', 'n']], { groupBy: [['flag']], sort: [['sum.n', 'desc']], strings: true }).map((r) => r.flag)).toEqual([null, false, true]);
    expect(run(items, [['sum', 'n']], { groupBy: [['flag']], sort: [['sum.n', 'asc']], strings: true }).map((r) => r.flag)).toEqual([true, false, null]);
    // count: false 2, true 2, null 1
    expect(run(items, [['count', '*']], { groupBy: [['flag']], sort: [['count', 'asc']] }).map((r) => r.flag)).toEqual([null, false, true]);
    expect(run(items, [['count', '*']], { groupBy: [['flag']], sort: [['count', 'desc']] }).map((r) => r.flag)).toEqual([false, true, null]);
  });
  it('orders ten and more numerically', () => {
    const recs = Array.from({ length: 14 }, (_, i) => ({ id: String(i), name: i < 10 ? 'many' : 'few' }));
    expect(run(recs, [['count', '*']], { groupBy: [['name']], sort: [['count', 'desc']], strings: true })).toEqual([{ name: 'many', count: '10' }, { name: 'few', count: '4' }]);
    expect(run(recs, [['count', '*']], { groupBy: [['name']], sort: [['count', 'asc']], strings: true })).toEqual([{ name: 'few', count: '4' }, { name: 'many', count: '10' }]);
  });
});
