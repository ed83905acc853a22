import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/catalog.js';
import { parseQuery } from '../../src/query/parse-query.js';
import { QUERY_CAPS } from '../../src/query/list-caps.js';
import { ctx, schemas } from './fixtures.js';

/**
 * Issue 38: the lists of one query are capped (25 000 `_or` terms, 20 000 groupBy or sort keys each took most of a
 * second to parse and check): past a cap, one clear 400 INVALID_QUERY naming it, before any item is checked.
 */
const render = schemas.render!;
const parse = (raw: Record<string, unknown>) => parseQuery(raw, render, ctx({ schemas }));
const problems = (raw: Record<string, unknown>) => {
  try {
    parse(raw);
  } catch (e) {
    expect(e).toBeInstanceOf(GatewayError);
    expect((e as GatewayError).code).toBe('INVALID_QUERY');
    return [...((e as GatewayError).entryExtensions ?? [])];
  }
  return [];
};
const times = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

describe('caps on the lists of a query', () => {
  it('states its caps', () => {
    expect(QUERY_CAPS).toEqual({ fields: 1000, sort: 100, groupBy: 100, aggregate: 100, filterTerms: 2000, filterValues: 10_000, alias: 1000, deepKeys: 1000 });
  });

  it('sort, groupBy, fields and an aggregate function\'s fields: up to the cap is checked as before, one more is one 400', () => {
    expect(problems({ sort: times(100, () => 'id').join(',') })).toEqual([]);
    expect(problems({ sort: times(20_000, () => '-id').join(',') })).toEqual([{ path: 'sort', reason: '"sort" has 20000 items; at most 100 are allowed' }]);
    expect(problems({ groupBy: times(100, () => 'status') })).toEqual([]);
    expect(problems({ groupBy: times(101, () => 'status') })).toEqual([{ path: 'groupBy', reason: '"groupBy" has 101 items; at most 100 are allowed' }]);
    expect(problems({ fields: times(1000, () => 'id').join(',') })).toEqual([]);
    expect(problems({ fields: times(1001, () => 'nope') })).toEqual([{ path: 'fields', reason: '"fields" has 1001 items; at most 1000 are allowed' }]);
    expect(problems({ aggregate: { count: times(101, () => 'id').join(',') } }))
      .toEqual([{ path: 'aggregate.count', reason: '"aggregate[count]" has 101 items; at most 100 are allowed' }]);
  });

  it('a filter holds at most 2 000 terms (each _and/_or item, each operator on a field), counted at any depth', () => {
    const eq = (i: number) => ({ title: { _eq: `t${i}` } });
    expect(problems({ filter: { _or: times(1000, eq) } })).toEqual([]); // 2 000 terms
    expect(problems({ filter: { _or: times(1001, eq) } })).toEqual([{ path: 'filter', reason: 'The filter has more than 2000 terms' }]);
    const tooMany = [{ path: 'filter', reason: 'The filter has more than 2000 terms' }];
    expect(problems({ filter: { _or: times(25_000, eq) } })).toEqual(tooMany);
    // 40 groups of 30: 2 440 terms, no one list over the cap
    expect(problems({ filter: { _and: times(40, () => ({ _or: times(30, eq) })) } })).toEqual(tooMany);
    // terms under a field and under a relation count too
    expect(problems({ filter: { _and: times(700, (i) => ({ title: { _contains: `a${i}`, _ncontains: `b${i}` } })) } })).toEqual(tooMany); // 2 100
  });

  it('an _in or _nin list holds at most 10 000 values', () => {
    expect(problems({ filter: { title: { _in: times(10_000, (i) => `t${i}`) } } })).toEqual([]);
    expect(problems({ filter: { title: { _nin: times(10_001, (i) => `t${i}`).join(',') } } }))
      .toEqual([{ path: 'filter.title._nin', reason: '"_nin" has 10001 values; at most 10000 are allowed' }]);
  });

  it('alias holds at most 1 000 names, and each level of deep 1 000 keys (attack pass 11, M: 50 000 aliases took 1.4 s a request)', () => {
    const aliases = (n: number) => Object.fromEntries(times(n, (i) => [`a${i}`, 'title']));
    expect(problems({ alias: aliases(1000), fields: 'id,a999' })).toEqual([]);
    expect(problems({ alias: aliases(50_000), fields: 'id' })).toEqual([{ path: 'alias', reason: '"alias" has 50000 items; at most 1000 are allowed' }]);
    const junk = (n: number) => Object.fromEntries(times(n, (i) => [`k${i}`, {}]));
    expect(problems({ deep: junk(1000) })).toEqual([]);
    expect(problems({ deep: junk(30_000) })).toEqual([{ path: 'deep', reason: '"deep" has 30000 items; at most 1000 are allowed' }]);
    expect(problems({ deep: { project: { _limit: 1, ...junk(1001) } } }))
      .toEqual([{ path: 'deep.project', reason: '"deep" has 1002 items; at most 1000 are allowed' }]);
  });
});
