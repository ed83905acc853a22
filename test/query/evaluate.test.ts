import { describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/query/parse-query.js';
import { parseQueryString } from '../../src/query/querystring.js';
import { runQuery } from '../../src/query/run.js';
import { ctx, lookup, projects, renders, schemas, P1, ROLE, USER } from './fixtures.js';

const ids = (raw: Record<string, unknown>, resource = 'render', records = renders) => {
  const q = parseQuery({ limit: '-1', ...raw }, schemas[resource]!, ctx());
  return runQuery(records, q, schemas, lookup, { numericStrings: true }).data.map((x: any) => (resource === 'render' ? Number(String(x.id).slice(-2)) : x.id));
};
const f = (filter: unknown) => ids({ filter: JSON.stringify(filter), sort: 'id' });

describe('operators per field type (Directus on PostgreSQL)', () => {
  it.each([
    // string
    [{ title: { _eq: 'zeta' } }, [6]],
    [{ title: { _neq: 'zeta' } }, [1, 2, 4, 5, 7]], // null excluded
    [{ title: { _contains: 'ello' } }, [1, 2]],
    [{ title: { _contains: 'Hello' } }, [1]], // case-sensitive
    [{ title: { _icontains: 'HELLO' } }, [1, 2]],
    [{ title: { _ncontains: 'ello' } }, [4, 5, 6, 7]], // null excluded
    [{ title: { _starts_with: 'hello' } }, [2]],
    [{ title: { _nstarts_with: 'hello' } }, [1, 4, 5, 6, 7]],
    [{ title: { _istarts_with: 'HELLO' } }, [1, 2]],
    [{ title: { _ends_with: 'World' } }, [1]],
    [{ title: { _nends_with: 'World' } }, [2, 4, 5, 6, 7]],
    [{ title: { _iends_with: 'world' } }, [1]],
    [{ title: { _in: ['zeta', 'Ünïcødé'] } }, [5, 6]],
    [{ title: { _nin: ['zeta'] } }, [1, 2, 4, 5, 7]],
    [{ title: { _null: true } }, [3]],
    [{ title: { _null: false } }, [1, 2, 4, 5, 6, 7]],
    [{ title: { _nnull: true } }, [1, 2, 4, 5, 6, 7]],
    [{ title: { _empty: true } }, [3, 4]],
    [{ title: { _nempty: true } }, [1, 2, 5, 6, 7]],
    // timestamp (compared as instants)
    [{ date_created: { _gt: '2026-06-15T10:00:00Z' } }, [6, 7]],
    [{ date_created: { _gte: '2026-06-15T11:00:00.000+00:00' } }, [6, 7]],
    [{ date_created: { _lt: '2026-03-01' } }, [1]],
    [{ date_created: { _between: ['2026-02-01', '2026-03-31'] } }, [1, 2]],
    [{ date_created: { _nbetween: ['2026-02-01', '2026-03-31'] } }, [3, 4, 5, 6, 7]],
    [{ date_updated: { _null: true } }, [1, 2, 3, 4, 6, 7]],
    [{ date_updated: { _eq: '2026-06-01T02:00:00+02:00' } }, [5]],
    [{ date_created: { _contains: '2026-06-15' } }, [5, 6, 7]],
    // uuid
    [{ user_created: { _eq: USER } }, [1, 2, 3, 5, 6, 7]],
    [{ user_created: { _neq: USER } }, []],
    [{ user_created: { _null: true } }, [4]],
    [{ project: { _in: [P1] } }, [1, 3, 5, 7]],
    [{ project: { _nin: [P1] } }, [2, 4, 6]],
    // boolean
    [{ download_ready: { _eq: true } }, [1]],
    [{ download_ready: { _eq: 'false' } }, [2, 3, 4, 5, 6, 7]],
    [{ download_ready: { _neq: true } }, [2, 3, 4, 5, 6, 7]],
    // json
    [{ output: { _null: true } }, [1, 2, 3, 4, 5, 6, 7]],
    [{ output: { _nnull: true } }, []],
    // date functions
    [{ 'year(date_created)': { _eq: 2026 } }, [1, 2, 3, 4, 5, 6, 7]],
    [{ 'month(date_created)': { _in: '1,2' } }, [1]],
    [{ 'day(date_created)': { _gte: 15 } }, [5, 6, 7]],
    // integer (date functions give integers)
    [{ 'month(date_created)': { _eq: '6' } }, [5, 6, 7]],
    [{ 'month(date_created)': { _neq: 6 } }, [1, 2, 3, 4]],
    [{ 'month(date_created)': { _lt: 3 } }, [1]],
    [{ 'month(date_created)': { _lte: 3 } }, [1, 2]],
    [{ 'month(date_created)': { _gt: 5 } }, [5, 6, 7]],
    [{ 'month(date_created)': { _between: [3, 4] } }, [2, 3]],
    [{ 'month(date_created)': { _nbetween: '3,4' } }, [1, 4, 5, 6, 7]],
    [{ 'month(date_created)': { _nin: [6, 2] } }, [2, 3, 4]],
    [{ 'hour(date_created)': { _eq: 11 } }, [6, 7]],
    [{ 'year(date_updated)': { _null: true } }, [1, 2, 3, 4, 6, 7]],
    // more timestamp operators
    [{ date_created: { _in: ['2026-06-15T11:00:00Z', '2026-02-11T10:00:00.000Z'] } }, [1, 6, 7]],
    [{ date_created: { _nin: '2026-06-15T11:00:00Z' } }, [1, 2, 3, 4, 5]],
    [{ date_created: { _lte: '2026-03-12T10:00:00Z' } }, [1, 2]],
    [{ date_updated: { _nnull: true } }, [5]],
    [{ date_updated: { _empty: true } }, [1, 2, 3, 4, 6, 7]],
    [{ date_updated: { _nempty: true } }, [5]],
    [{ date_created: { _neq: '2026-06-15T11:00:00Z' } }, [1, 2, 3, 4, 5]],
    [{ date_created: { _ncontains: '06-15' } }, [1, 2, 3, 4]],
    // string extras
    [{ title: { _nistarts_with: 'hello' } }, [4, 5, 6, 7]],
    [{ title: { _niends_with: 'WORLD' } }, [2, 4, 5, 6, 7]],
  ] as const)('%j → %j', (filter, expected) => {
    expect(f(filter)).toEqual(expected);
  });

  it('_eq null matches nothing; _neq null means not null', () => {
    expect(f({ title: { _eq: null } })).toEqual([]);
    expect(f({ title: { _neq: null } })).toEqual([1, 2, 4, 5, 6, 7]);
    expect(f({ title: { _eq: 'null' } })).toEqual([]);
  });

  it('a value without an operator means _eq; several keys mean _and', () => {
    expect(f({ status: 'complete' })).toEqual([1, 5, 7]);
    expect(f({ status: 'complete', title: { _icontains: 'a' } })).toEqual([7]);
  });

  it('_and / _or nest to any depth; an _or with {} matches everything', () => {
    expect(f({ _or: [{ status: { _eq: 'failed' } }, { _and: [{ status: { _eq: 'complete' } }, { _or: [{ title: { _starts_with: 'Alpha' } }, { title: { _eq: 'Hello World' } }] }] }] })).toEqual([1, 2, 7]);
    expect(f({ _or: [{}, { status: 'failed' }] })).toEqual([1, 2, 3, 4, 5, 6, 7]);
    let deep: any = { status: { _eq: 'failed' } };
    for (let i = 0; i < 30; i++) deep = { _and: [deep] };
    expect(f(deep)).toEqual([2]);
  });

  it('logical operators under a field are hoisted', () => {
    expect(f({ title: { _or: [{ _eq: 'zeta' }, { _eq: 'Hello World' }] } })).toEqual([1, 6]);
  });

  it('two operators on one field work (the v10.8.3 fix)', () => {
    expect(f({ date_created: { _gte: '2026-02-01', _lt: '2026-04-01' } })).toEqual([1, 2]);
  });

  it('filters through many-to-one paths', () => {
    expect(f({ project: { title: { _eq: 'Alpha' } } })).toEqual([1, 3, 5, 7]);
    expect(f({ project: { account: { name: { _icontains: 'acme' } } } })).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(f({ account: { owner: { _eq: '$CURRENT_USER' } } })).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('_some / _none on one-to-many fields', () => {
    const q = (filter: unknown) => ids({ filter: JSON.stringify(filter), sort: 'title' }, 'project', projects);
    expect(q({ renders: { _some: { status: { _eq: 'failed' } } } })).toEqual([projects[1]!.id]);
    expect(q({ renders: { _none: { status: { _eq: 'failed' } } } })).toEqual([projects[0]!.id]);
    expect(q({ renders: { title: { _eq: 'zeta' } } })).toEqual([projects[1]!.id]); // implicit some
  });

  it('$CURRENT_ROLE and $CURRENT_USER.<field> resolve', () => {
    const q = parseQuery({ filter: JSON.stringify({ role: { _eq: '$CURRENT_ROLE' }, email: { _eq: '$CURRENT_USER.email' } }) }, schemas.user!, ctx());
    expect(q.filter).toMatchObject({ kind: 'And', children: [{ value: ROLE }, { value: 'me@x.io' }] });
  });

  it('dynamic variables: $CURRENT_USER, $CURRENT_ROLE, $NOW with units', () => {
    expect(f({ user_created: { _eq: '$CURRENT_USER' } })).toEqual([1, 2, 3, 5, 6, 7]);
    expect(f({ date_created: { _gt: '$NOW(-2 hours)' } })).toEqual([6, 7]);
    expect(f({ date_created: { _lt: '$NOW' } })).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });
});

describe('search', () => {
  it('is a case-insensitive substring over string fields, exact on uuids', () => {
    expect(ids({ search: 'HELLO', sort: 'id' })).toEqual([1, 2]);
    expect(ids({ search: 'encoding', sort: 'id' })).toEqual([6]); // status is a string field too
    expect(ids({ search: renders[2]!.id as string, sort: 'id' })).toEqual([3]);
    expect(ids({ search: 'zzz' })).toEqual([]);
  });
});

describe('sort', () => {
  it('sorts by several keys, - for descending, nulls as PostgreSQL (last asc, first desc)', () => {
    expect(ids({ sort: 'title' })).toEqual([4, 7, 2, 1, 5, 6, 3]); // collation: 'hello there' < 'Hello World'
    expect(ids({ sort: '-title' })).toEqual([3, 6, 5, 1, 2, 7, 4]);
    expect(ids({ sort: '-date_created,id' })).toEqual([6, 7, 5, 4, 3, 2, 1]);
    expect(ids({ sort: ['-date_created', '-id'] })).toEqual([7, 6, 5, 4, 3, 2, 1]);
  });
  it('sorts by many-to-one paths and date functions', () => {
    expect(ids({ sort: 'project.title,id' })).toEqual([1, 3, 5, 7, 2, 4, 6]);
    expect(ids({ sort: '-month(date_created),id' })).toEqual([5, 6, 7, 4, 3, 2, 1]);
  });
  it('with no sort: newest first, id as tie-break', () => {
    const q = parseQuery({}, schemas.render!, ctx());
    expect(runQuery(renders, q, schemas, lookup, { numericStrings: true }).data.map((x: any) => Number(x.id.slice(-2)))).toEqual([6, 7, 5, 4, 3, 2, 1]);
  });
});

describe('limit, offset, page', () => {
  const page = (raw: Record<string, unknown>, limitDefault = 100, limitMax?: number) => {
    const q = parseQuery({ sort: 'id', ...raw }, schemas.render!, ctx({ limitDefault, ...(limitMax ? { limitMax } : {}) }));
    return { q, got: runQuery(renders, q, schemas, lookup, { numericStrings: true }).data.map((x: any) => Number(x.id.slice(-2))) };
  };
  it.each([
    [{ limit: '2' }, [1, 2]],
    [{ limit: '2', page: '1' }, [1, 2]],
    [{ limit: '2', page: '2' }, [3, 4]],
    [{ limit: '2', page: '0' }, [1, 2]], // page 0 acts as page 1
    [{ limit: '2', offset: '5' }, [6, 7]],
    [{ limit: '2', offset: '5', page: '2' }, [3, 4]], // page wins over offset
    [{ limit: '-1', page: '3' }, [1, 2, 3, 4, 5, 6, 7]], // page ignored when limit is -1
    [{ limit: '0' }, []],
    [{ limit: '0', page: '2' }, []],
    [{ page: '2' }, []], // default limit 100, page 2 is past the end
  ] as const)('%j → %j', (raw, expected) => expect(page(raw).got).toEqual(expected));

  it('defaults to the configured limit and applies the operator maximum', () => {
    expect(page({}, 3).got).toEqual([1, 2, 3]);
    expect(page({ limit: '-1' }, 100, 4).got).toEqual([1, 2, 3, 4]);
    expect(page({}, 100, 5).q.limit).toBe(5);
    expect(() => page({ limit: '6' }, 100, 5)).toThrow(/less than or equal to 5/);
  });
});

describe('fields', () => {
  const one = (fields: unknown, id = renders[0]!.id) => {
    const q = parseQuery({ fields, filter: JSON.stringify({ id: { _eq: id } }) }, schemas.render!, ctx());
    return runQuery(renders, q, schemas, lookup, { numericStrings: true }).data[0] as Record<string, unknown>;
  };
  it('selects *, named fields, nested paths, *.* and date functions', () => {
    expect(Object.keys(one('*'))).toEqual(Object.keys(schemas.render!.fields));
    expect(one('id,title')).toEqual({ id: renders[0]!.id, title: 'Hello World' });
    expect(one(['id', 'project.title'])).toEqual({ id: renders[0]!.id, project: { title: 'Alpha' } });
    expect(one('project.account.name')).toEqual({ project: { account: { name: 'Acme' } } });
    const star = one('*.*');
    expect((star.project as any).title).toBe('Alpha');
    expect((star.account as any).name).toBe('Acme');
    expect(one('id,year(date_created),month(date_created)')).toEqual({ id: renders[0]!.id, date_created_year: '2026', date_created_month: '2' });
  });
  it('expands one-to-many fields as ids or objects', () => {
    const q = parseQuery({ fields: 'id,renders,renders.title', filter: JSON.stringify({ id: { _eq: P1 } }) }, schemas.project!, ctx());
    const p = runQuery(projects, q, schemas, lookup, { numericStrings: true }).data[0] as any;
    expect(p.renders.map((x: any) => x.title)).toEqual(['Hello World', null, 'Ünïcødé', 'Alpha render']);
    const q2 = parseQuery({ fields: 'renders', filter: JSON.stringify({ id: { _eq: P1 } }) }, schemas.project!, ctx());
    expect((runQuery(projects, q2, schemas, lookup, { numericStrings: true }).data[0] as any).renders).toHaveLength(4);
  });
});

describe('aggregate and groupBy (Directus shapes, PostgreSQL number strings)', () => {
  const agg = (raw: Record<string, unknown>) => runQuery(renders, parseQuery(raw, schemas.render!, ctx()), schemas, lookup, { numericStrings: true }).data;
  it('count * and count of a field', () => {
    expect(agg({ aggregate: { count: '*' } })).toEqual([{ count: '7' }]);
    expect(agg({ aggregate: { count: 'title' } })).toEqual([{ count: { title: '6' } }]);
    expect(agg({ aggregate: JSON.stringify({ countDistinct: ['status'] }) })).toEqual([{ countDistinct: { status: '5' } }]);
    expect(agg({ aggregate: { count: '*', min: 'date_created', max: 'date_created' } })).toEqual([{ count: '7', min: { date_created: '2026-02-11T10:00:00.000Z' }, max: { date_created: '2026-06-15T11:00:00.000Z' } }]);
  });
  it('groups with keys at the top level, ordered by the first groupBy field', () => {
    expect(agg({ aggregate: { count: '*' }, groupBy: 'status' })).toEqual([
      { status: 'complete', count: '3' }, { status: 'draft', count: '1' }, { status: 'encoding', count: '1' }, { status: 'failed', count: '1' }, { status: 'processing', count: '1' },
    ]);
    expect(agg({ aggregate: { count: 'id' }, groupBy: ['year(date_created)', 'project'] }).length).toBe(2);
    expect(agg({ aggregate: { count: 'id' }, groupBy: 'month(date_created)' })[0]).toEqual({ date_created_month: '2', count: { id: '1' } });
  });
  it('applies limit and offset to groups, and sort by an aggregate', () => {
    expect(agg({ aggregate: { count: '*' }, groupBy: 'status', limit: '2', page: '2' }).map((g: any) => g.status)).toEqual(['encoding', 'failed']);
    expect(agg({ aggregate: { count: '*' }, groupBy: 'status', sort: '-count' })[0]).toEqual({ status: 'complete', count: '3' });
  });
  it('an empty set gives one row without groupBy and none with it', () => {
    const none = JSON.stringify({ status: { _eq: 'deleted' } });
    expect(agg({ filter: none, aggregate: { count: '*', max: 'date_created' } })).toEqual([{ count: '0', max: { date_created: null } }]);
    expect(agg({ filter: none, aggregate: { count: '*' }, groupBy: 'status' })).toEqual([]);
  });
  it('meta counts are numbers; total ignores the filter', () => {
    const res = runQuery(renders, parseQuery({ meta: '*', filter: JSON.stringify({ status: 'complete' }) }, schemas.render!, ctx()), schemas, lookup, { numericStrings: true });
    expect(res.meta).toEqual({ total_count: 7, filter_count: 3 });
    expect(runQuery(renders, parseQuery({ meta: 'filter_count' }, schemas.render!, ctx()), schemas, lookup, { numericStrings: true }).meta).toEqual({ filter_count: 7 });
  });
});

describe('both input forms give the same AST', () => {
  it.each([
    ['filter[status][_eq]=complete', 'filter={"status":{"_eq":"complete"}}'],
    ['filter[status]=complete', 'filter={"status":{"_eq":"complete"}}'],
    ['filter[status][_in]=complete,failed', 'filter={"status":{"_in":["complete","failed"]}}'],
    ['filter[status][_in][]=complete&filter[status][_in][]=failed', 'filter={"status":{"_in":["complete","failed"]}}'],
    ['filter[_or][0][status][_eq]=failed&filter[_or][1][title][_null]=true', 'filter={"_or":[{"status":{"_eq":"failed"}},{"title":{"_null":true}}]}'],
    ['filter[title][_null]', 'filter={"title":{"_null":true}}'],
    ['fields[]=id&fields[]=title', 'fields=id,title'],
    ['aggregate[count]=*', 'aggregate={"count":"*"}'],
    ['sort[]=-date_created&sort[]=id', 'sort=-date_created,id'],
    ['meta=*', 'meta=total_count,filter_count'],
  ])('%s ≡ %s', (a, b) => {
    const parse = (s: string) => parseQuery(parseQueryString(s.replace(/"/g, '%22').replace(/\{/g, '%7B').replace(/\}/g, '%7D')), schemas.render!, ctx());
    expect(parse(a)).toEqual(parse(b));
  });
  it('decodes + as a space, as qs does', () => {
    expect(parseQueryString('search=a+b')).toEqual({ search: 'a b' });
  });
});

describe('the AST is immutable', () => {
  it('freezes every node', () => {
    const q = parseQuery({ filter: '{"_and":[{"status":"complete"},{"title":{"_in":"a,b"}}]}', sort: 'id' }, schemas.render!, ctx());
    expect(Object.isFrozen(q)).toBe(true);
    expect(Object.isFrozen(q.filter)).toBe(true);
    expect(Object.isFrozen((q.filter as any).children)).toBe(true);
    expect(Object.isFrozen(q.sort[0])).toBe(true);
    expect(() => { (q as any).limit = 5; }).toThrow();
  });
});

describe('sort tie-break by id, whatever the input order', () => {
  it('answers the same order for 30 seeded shuffles of the records', () => {
    let seed = 42;
    const rnd = () => { seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31; return seed / 2 ** 31; };
    // expected by hand: status ascending, then id ascending (the final tie-break), nulls last
    const expected = [...renders].sort((a, b) => {
      const sa = a.status as string | null;
      const sb = b.status as string | null;
      if (sa !== sb) return sa === null ? 1 : sb === null ? -1 : sa < sb ? -1 : 1;
      return (a.id as string) < (b.id as string) ? -1 : 1;
    }).map((r) => r.id);
    expect(new Set(renders.map((r) => r.status)).size).toBeLessThan(renders.length); // ties exist
    for (let i = 0; i < 30; i++) {
      const shuffled = [...renders];
      for (let j = shuffled.length - 1; j > 0; j--) { const k = Math.floor(rnd() * (j + 1)); [shuffled[j], shuffled[k]] = [shuffled[k]!, shuffled[j]!]; }
      const q = parseQuery({ sort: 'status', fields: 'id' }, schemas.render!, ctx());
      expect(runQuery(shuffled, q, schemas, lookup, { numericStrings: true }).data.map((r: any) => r.id)).toEqual(expected);
    }
  });
});
