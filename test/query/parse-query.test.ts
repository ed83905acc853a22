import { describe, expect, it } from 'vitest';
import { Aggregate, Compare, FieldRef, Select, Sort } from '../../src/query/ast.js';
import { GatewayError } from '../../src/errors/catalog.js';
import { parseQuery, type ParseContext } from '../../src/query/parse-query.js';
import type { ResourceSchema } from '../../src/query/schema.js';
import { ctx, schemas } from './fixtures.js';
import { shop } from './shop-fixtures.js';

const world = { ...schemas, ...shop };
const render = schemas.render!;
const project = schemas.project!;
const item = shop.item!;
const q = (raw: Record<string, unknown>, resource: ResourceSchema = render, o: Partial<ParseContext> = {}) => parseQuery(raw, resource, ctx({ schemas: world, ...o }));
const problems = (raw: Record<string, unknown>, resource: ResourceSchema = render, o: Partial<ParseContext> = {}) => {
  try {
    q(raw, resource, o);
  } catch (e) {
    expect(e).toBeInstanceOf(GatewayError);
    return [...((e as GatewayError).entryExtensions ?? [])];
  }
  return [];
};
const one = (path: string, reason: string) => [{ path, reason }];
const asc = (...p: string[]) => Sort.create(FieldRef.create(p), 'asc');
const desc = (...p: string[]) => Sort.create(FieldRef.create(p), 'desc');

describe('defaults', () => {
  it('a bare request: every field, no filter, no search, default limit, nothing else', () => {
    expect(q({})).toEqual({
      kind: 'Query', resource: 'render', fields: [Select.create(['*'])], filter: null, search: null, sort: [], limit: 100, offset: 0, meta: [], aggregate: [], groupBy: [],
    });
    expect(q({}, render, { limitDefault: 25 }).limit).toBe(25);
  });
});

describe('list parameters (comma strings, arrays, qs objects)', () => {
  it('trims items and drops empty ones', () => {
    expect(q({ fields: ' id , title ,' }).fields).toEqual([Select.create(['id']), Select.create(['title'])]);
    expect(q({ fields: ['id,title', ' status'] }).fields).toEqual([Select.create(['id']), Select.create(['title']), Select.create(['status'])]);
    expect(q({ fields: { 0: 'id', 21: 'title' } }).fields).toEqual([Select.create(['id']), Select.create(['title'])]);
    expect(q({ fields: ',, ' }).fields).toEqual([Select.create(['*'])]);
    expect(q({ fields: '' }).fields).toEqual([Select.create(['*'])]);
  });
  it('anything but strings is refused', () => {
    expect(problems({ fields: ['id', 5] })).toEqual(one('fields', '"fields" must be a comma-separated string or an array of strings'));
    expect(problems({ sort: [['id']] })).toEqual(one('sort', '"sort" must be a comma-separated string or an array of strings'));
    expect(problems({ groupBy: 5 })).toEqual(one('groupBy', '"groupBy" must be a comma-separated string or an array of strings'));
    expect(problems({ meta: true })).toEqual(one('meta', '"meta" must be a comma-separated string or an array of strings'));
    expect(problems({ fields: null })).toEqual(one('fields', '"fields" must be a comma-separated string or an array of strings'));
  });
});

describe('fields', () => {
  it('paths, stars, functions and count()', () => {
    expect(q({ fields: 'project.account.name,project.*,*.*' }).fields).toEqual([
      Select.create(['project', 'account', 'name']), Select.create(['project', '*']), Select.create(['*', '*']),
    ]);
    expect(q({ fields: 'renders.title,count(renders),year(date_created)' }, project).fields).toEqual([
      Select.create(['renders', 'title']), Select.count('renders'), Select.create(['date_created'], 'year'),
    ]);
  });
  it.each([
    ['count(title)', 'count() needs a one-to-many field, not "title"'],
    ['count(nope)', 'count() needs a one-to-many field, not "nope"'],
    ['foo(date_created)', 'Invalid function specified "foo"'],
    ['year(title)', 'Function "year" needs a date field, not "title"'],
    ['year(nope)', 'Function "year" needs a date field, not "nope"'],
    ['project..title', 'Invalid field "project..title"'],
    ['.title', 'Invalid field ".title"'],
    ['*.title', 'Invalid field "*.title"'],
    ['project.*.name', 'Invalid field "project.*.name"'],
    ['title.x', '"title" is not a relational field'],
  ])('%s is refused', (fields, reason) => {
    expect(problems({ fields })).toEqual(one('fields[0]', reason));
  });
  it('the problem names the item', () => {
    expect(problems({ fields: 'id,title.x' })).toEqual(one('fields[1]', '"title" is not a relational field'));
  });
  it('an unknown field is dropped as Directus drops it; behind a relation it selects the relation alone (an empty object)', () => {
    expect(problems({ fields: 'id,nope,*x,project.nope,project.nope.x,project.account.nope' })).toEqual([]);
    expect(q({ fields: 'id,nope,project.nope.x,renders' }).fields.map((s) => s.path)).toEqual([['id'], ['nope'], ['project', 'nope'], ['renders']]);
  });
  it('paths count against MAX_RELATIONAL_DEPTH (at least 2)', () => {
    expect(problems({ fields: 'project.account.name' }, render, { maxRelationalDepth: 3 })).toEqual([]);
    expect(problems({ fields: 'project.account.name' }, render, { maxRelationalDepth: 2 })).toEqual(one('fields[0]', 'Max relational depth exceeded'));
    expect(problems({ fields: 'project.title' }, render, { maxRelationalDepth: 1 })).toEqual([]);
    expect(problems({ fields: 'project.account.name' }, render, { maxRelationalDepth: 1 })).toEqual(one('fields[0]', 'Max relational depth exceeded'));
    expect(problems({ fields: '*.*.*' }, render, { maxRelationalDepth: 2 })).toEqual(one('fields[0]', 'Max relational depth exceeded'));
    const ten = 'project.renders.project.renders.project.renders.project.renders.project.title';
    expect(problems({ fields: ten })).toEqual([]);
    expect(problems({ fields: `project.renders.${ten}` })).toEqual(one('fields[0]', 'Max relational depth exceeded'));
  });
});

describe('sort', () => {
  it('- descends, + or nothing ascends; paths, functions, count()', () => {
    expect(q({ sort: '-title,+status,id' }).sort).toEqual([desc('title'), asc('status'), asc('id')]);
    expect(q({ sort: 'project.account.name' }).sort).toEqual([asc('project', 'account', 'name')]);
    expect(q({ sort: '-month(date_created)' }).sort).toEqual([Sort.create(FieldRef.create(['date_created'], 'month'), 'desc')]);
    expect(q({ sort: '-count(renders)' }, project).sort).toEqual([Sort.create(FieldRef.create(['renders'], 'count'), 'desc')]);
  });
  it.each([
    ['count(title)', 'count() needs a one-to-many field, not "title"'],
    ['count(nope)', 'count() needs a one-to-many field, not "nope"'],
    ['foo(title)', 'Invalid function specified "foo"'],
    ['hour(title)', 'Function "hour" needs a date field, not "title"'],
    ['hour(nope)', 'Function "hour" needs a date field, not "nope"'],
    ['*', 'Field "*" does not exist on "renders"'],
    ['project.renders.title', '"renders" is a one-to-many field and cannot be used in sort'],
    ['title.x', '"title" is not a relational field'],
  ])('%s is refused', (sort, reason) => {
    expect(problems({ sort })).toEqual(one('sort[0]', reason));
  });
  it('never by a one-to-many field itself, nor deeper than MAX_RELATIONAL_DEPTH', () => {
    expect(problems({ sort: 'id,renders' }, project)).toEqual(one('sort[1]', 'Cannot sort by the one-to-many field "renders"'));
    // at the end of a relational path too (every value would read as null)
    expect(problems({ sort: 'project.renders' })).toEqual(one('sort[0]', 'Cannot sort by the one-to-many field "project.renders"'));
    expect(problems({ sort: 'project.account.name' }, render, { maxRelationalDepth: 2 })).toEqual(one('sort[0]', 'Max relational depth exceeded'));
    expect(problems({ sort: 'project.title' }, render, { maxRelationalDepth: 2 })).toEqual([]);
  });
  it('with aggregates, by an aggregate or a group key', () => {
    const a = q({ aggregate: { count: '*', sum: 'n' }, groupBy: 'year(at),flag', sort: '-count,sum.n,at_year,-flag' }, item);
    expect(a.sort).toEqual([desc('count'), asc('sum', 'n'), asc('at_year'), desc('flag')]);
    expect(problems({ aggregate: { sum: 'n' }, sort: 'sum' }, item)).toEqual([]);
    expect(problems({ aggregate: { count: 'id' }, sort: 'count.n' }, item)).toEqual(one('sort[0]', 'Field "count" does not exist on "items"'));
    expect(problems({ sort: 'count' }, item)).toEqual(one('sort[0]', 'Field "count" does not exist on "items"'));
  });
});

describe('limit, offset, page', () => {
  it.each([
    [{ limit: '10' }, 10, 0],
    [{ limit: 10 }, 10, 0],
    [{ limit: '' }, 100, 0],
    [{ limit: '-1' }, -1, 0],
    [{ limit: '0' }, 0, 0],
    [{ offset: '7' }, 100, 7],
    [{ offset: '0' }, 100, 0],
    [{ limit: '10', page: '3' }, 10, 20],
    [{ limit: '10', page: '1' }, 10, 0],
    [{ limit: '10', page: '0', offset: '4' }, 10, 4],
    [{ limit: '10', page: '2', offset: '4' }, 10, 10],
    [{ page: '2' }, 100, 100],
    [{ limit: '-1', page: '2', offset: '3' }, -1, 3],
    [{ limit: '0', page: '2' }, 0, 0],
  ] as const)('%j → limit %d offset %d', (raw, limit, offset) => {
    const got = q(raw);
    expect([got.limit, got.offset]).toEqual([limit, offset]);
  });
  it.each([
    [{ limit: ['1'] }, 'limit', '"limit" must be a number'],
    [{ limit: 'x1' }, 'limit', '"limit" must be a number'],
    [{ limit: '2.5' }, 'limit', '"limit" must be an integer'],
    [{ limit: '-2' }, 'limit', '"limit" must be greater than or equal to -1'],
    [{ offset: '-1' }, 'offset', '"offset" must be greater than or equal to 0'],
    [{ offset: '0.5' }, 'offset', '"offset" must be an integer'],
    [{ page: '-1' }, 'page', '"page" must be greater than or equal to 0'],
  ])('%j is refused', (raw, path, reason) => {
    expect(problems(raw)).toEqual(one(path, reason));
  });
  it('the operator maximum (QUERY_LIMIT_MAX) replaces -1 and caps the default', () => {
    expect(q({}, render, { limitDefault: 100, limitMax: 40 }).limit).toBe(40);
    expect(q({}, render, { limitDefault: 20, limitMax: 40 }).limit).toBe(20);
    expect(q({ limit: '-1' }, render, { limitMax: 40 }).limit).toBe(40);
    expect(q({ limit: '40' }, render, { limitMax: 40 }).limit).toBe(40);
    expect(problems({ limit: '41' }, render, { limitMax: 40 })).toEqual(one('limit', '"limit" must be less than or equal to 40'));
    expect(q({ limit: '40', page: '2' }, render, { limitMax: 40 }).offset).toBe(40);
  });
});

describe('search and meta', () => {
  it('search: a string; empty is none', () => {
    expect(q({ search: 'abc' }).search).toBe('abc');
    expect(q({ search: '' }).search).toBeNull();
    expect(problems({ search: ['a'] })).toEqual(one('search', '"search" must be a string'));
  });
  it('meta: the keys asked, each once, in the order asked; * is both', () => {
    expect(q({ meta: 'filter_count,total_count' }).meta).toEqual(['filter_count', 'total_count']);
    expect(q({ meta: 'filter_count,*' }).meta).toEqual(['filter_count', 'total_count']);
    expect(q({ meta: '*,total_count' }).meta).toEqual(['total_count', 'filter_count']);
    expect(q({ meta: 'filter_count,filter_count' }).meta).toEqual(['filter_count']);
    expect(q({ meta: ['total_count'] }).meta).toEqual(['total_count']);
    expect(problems({ meta: 'total_count,nope' })).toEqual(one('meta[1]', '"meta[1]" must be one of [total_count, filter_count]'));
  });
});

describe('aggregate and groupBy', () => {
  it('parses functions and fields; fields are ignored', () => {
    const a = q({ aggregate: { count: '*,id', sumDistinct: 'n', avgDistinct: 'x', min: 'name', max: 'at', countDistinct: 'name' }, fields: 'nope' }, item);
    expect(a.aggregate).toEqual([
      Aggregate.create('count', '*'), Aggregate.create('count', 'id'), Aggregate.create('sumDistinct', 'n'), Aggregate.create('avgDistinct', 'x'),
      Aggregate.create('min', 'name'), Aggregate.create('max', 'at'), Aggregate.create('countDistinct', 'name'),
    ]);
    expect(a.fields).toEqual([]);
    expect(q({ aggregate: '{"avg":["n","x"]}' }, item).aggregate).toEqual([Aggregate.create('avg', 'n'), Aggregate.create('avg', 'x')]);
    expect(q({ groupBy: 'flag', fields: 'nope' }, item).fields).toEqual([]);
  });
  it.each([
    [{ aggregate: { median: 'n' } }, 'aggregate.median', 'Invalid aggregate function "median"'],
    [{ aggregate: { sum: '' } }, 'aggregate.sum', '"aggregate[sum]" needs one or more field names'],
    [{ aggregate: { sum: [1] } }, 'aggregate.sum', '"aggregate[sum]" needs one or more field names'],
    [{ aggregate: { sum: '*' } }, 'aggregate.sum', '"*" can only be used with count'],
    [{ aggregate: { countDistinct: '*' } }, 'aggregate.countDistinct', '"*" can only be used with count'],
    [{ aggregate: { max: 'nope' } }, 'aggregate.max', 'Field "nope" does not exist on "items"'],
    [{ aggregate: { count: 'tags' } }, 'aggregate.count', 'Cannot aggregate the relational field "tags"'],
    [{ aggregate: { sum: 'name' } }, 'aggregate.sum', '"sum" needs a numeric field, and "name" is string'],
    [{ aggregate: { sumDistinct: 'at' } }, 'aggregate.sumDistinct', '"sumDistinct" needs a numeric field, and "at" is timestamp'],
    [{ aggregate: { avg: 'flag' } }, 'aggregate.avg', '"avg" needs a numeric field, and "flag" is boolean'],
    [{ aggregate: { avgDistinct: 'id' } }, 'aggregate.avgDistinct', '"avgDistinct" needs a numeric field, and "id" is uuid'],
    [{ aggregate: '[1]' }, 'aggregate', 'Invalid aggregate object'],
    [{ aggregate: 'null' }, 'aggregate', 'Invalid aggregate object'],
    [{ aggregate: 5 }, 'aggregate', 'Invalid aggregate object'],
    [{ groupBy: 'count(tags)' }, 'groupBy[0]', 'Invalid function specified "count"'],
    [{ groupBy: 'nope' }, 'groupBy[0]', 'Field "nope" does not exist on "items"'],
    [{ groupBy: 'flag,tags' }, 'groupBy[1]', 'Cannot group by the relational field "tags"'],
    [{ groupBy: 'year(n)' }, 'groupBy[0]', 'Function "year" needs a date field, not "n"'],
  ])('%j is refused', (raw, path, reason) => {
    expect(problems(raw as Record<string, unknown>, item)).toEqual(one(path, reason));
  });
  it('groupBy: fields and date functions; min/max and countDistinct take any column', () => {
    expect(q({ groupBy: ['flag', 'week(at)'] }, item).groupBy).toEqual([FieldRef.create(['flag']), FieldRef.create(['at'], 'week')]);
    expect(q({ aggregate: { min: 'name', countDistinct: 'flag' } }, item).aggregate).toEqual([Aggregate.create('min', 'name'), Aggregate.create('countDistinct', 'flag')]);
  });
});

describe('alias', () => {
  it('extra names for top-level fields, usable in fields', () => {
    const a = q({ alias: { hot: 'tags', who: 'owner' }, fields: 'hot.label,who' }, item);
    expect(a.alias).toEqual({ hot: 'tags', who: 'owner' });
    expect(a.fields).toEqual([Select.create(['hot', 'label']), Select.create(['who'])]);
    expect(q({ alias: '{"hot":"tags"}', fields: 'hot' }, item).alias).toEqual({ hot: 'tags' });
    expect(q({}, item).alias).toBeUndefined();
    expect('alias' in q({ alias: '' }, item)).toBe(false);
    expect('alias' in q({ alias: {} }, item)).toBe(false);
  });
  it.each([
    [{ alias: { hot: 5 } }, 'alias.hot', '"alias" values must be strings'],
    [{ alias: { 'a.b': 'tags' } }, 'alias.a.b', `"alias" key/value can't contain a period character`],
    [{ alias: { ab: 'owner.name' } }, 'alias.ab', `"alias" key/value can't contain a period character`],
    [{ alias: { '1a': 'tags' } }, 'alias.1a', '"1a" is not a valid alias name'],
    [{ alias: { 'a-b': 'tags' } }, 'alias.a-b', '"a-b" is not a valid alias name'],
    [{ alias: { toString: 'tags' } }, 'alias.toString', '"toString" is not a valid alias name'],
    [{ alias: { hot: 'nope' } }, 'alias.hot', 'Field "nope" does not exist on "items"'],
    [{ alias: { name: 'tags' } }, 'alias.name', '"name" is already a field of "items"'],
    [{ alias: '{bad' }, 'alias', 'Invalid JSON for alias object'],
    [{ alias: '["x"]' }, 'alias', '"alias" must be an object'],
  ])('%j is refused', (raw, path, reason) => {
    expect(problems(raw as Record<string, unknown>, item)).toEqual(one(path, reason));
  });
  it('a name of 64 characters at most', () => {
    expect(problems({ alias: { [`a${'b'.repeat(63)}`]: 'tags' } }, item)).toEqual([]);
    expect(problems({ alias: { [`a${'b'.repeat(64)}`]: 'tags' } }, item)).toHaveLength(1);
    expect(problems({ alias: { _x9: 'tags' } }, item)).toEqual([]);
  });
});

describe('deep', () => {
  it('options under each relation, relations below relations', () => {
    const d = q({ deep: { tags: { _filter: { label: 'hot' }, _search: 'h', _sort: '-label', _limit: '5', _offset: '2', item: { owner: { _limit: '-1' } } } } }, item).deep!;
    expect(d.children.tags).toEqual({
      filter: Compare.create(FieldRef.create(['label']), '_eq', 'hot'), search: 'h', sort: [desc('label')], limit: 5, offset: 2,
      children: { item: { filter: null, search: null, sort: [], offset: 0, children: { owner: { filter: null, search: null, sort: [], limit: -1, offset: 0, children: {} } } } },
    });
    expect(d.filter).toBeNull();
    expect(Object.isFrozen(d)).toBe(true);
    expect(Object.isFrozen(d.children)).toBe(true);
    expect(Object.isFrozen(d.children.tags)).toBe(true);
    expect('limit' in d.children.tags!.children.item!).toBe(false);
  });
  it('JSON form; top-level options are ignored; an empty search is none', () => {
    const d = q({ deep: '{"_limit":3,"tags":{"_search":""}}' }, item).deep!;
    expect(d.children.tags!.search).toBeNull();
    expect('limit' in d).toBe(false);
  });
  it('_page is 1-indexed over the deep limit, else the default limit; ignored with -1 and when 0', () => {
    const page = (o: Record<string, unknown>, limitDefault = 100) => q({ deep: { tags: o } }, item, { limitDefault }).deep!.children.tags!.offset;
    expect(page({ _limit: '5', _page: '3' })).toBe(10);
    expect(page({ _page: '2' }, 30)).toBe(30);
    expect(page({ _limit: '-1', _page: '4' })).toBe(0);
    expect(page({ _limit: '5', _page: '0', _offset: '3' })).toBe(3);
    expect(page({ _limit: '5', _page: '1', _offset: '3' })).toBe(0);
  });
  it.each([
    [{ deep: { tags: { _foo: 1 } } }, 'deep.tags._foo', 'Unknown deep option "_foo"'],
    [{ deep: { tags: { _search: 5 } } }, 'deep.tags._search', '"_search" must be a string'],
    [{ deep: { tags: { _limit: '-2' } } }, '_limit', '"_limit" must be greater than or equal to -1'],
    [{ deep: { tags: { _offset: '-1' } } }, '_offset', '"_offset" must be greater than or equal to 0'],
    [{ deep: { tags: { _page: '-1' } } }, '_page', '"_page" must be greater than or equal to 0'],
    [{ deep: { tags: 'x' } }, 'deep.tags', '"deep.tags" must be an object'],
    [{ deep: { tags: ['x'] } }, 'deep.tags', '"deep.tags" must be an object'],
    [{ deep: { tags: { _sort: 'nope' } } }, 'sort[0]', 'Field "nope" does not exist on "tags"'],
    [{ deep: { tags: { _filter: { nope: 1 } } } }, 'filter.nope', 'Invalid filter key "nope" on "tags"'],
    [{ deep: '{x' }, 'deep', 'Invalid JSON for deep object'],
    [{ deep: '5' }, 'deep', '"deep" must be an object'],
  ])('%j is refused', (raw, path, reason) => {
    expect(problems(raw as Record<string, unknown>, item)).toEqual(one(path, reason));
  });
  it('counts relations against MAX_RELATIONAL_DEPTH', () => {
    expect(problems({ deep: { tags: { item: { _limit: 1 } } } }, item, { maxRelationalDepth: 3 })).toEqual([]);
    expect(problems({ deep: { tags: { item: { _limit: 1 } } } }, item, { maxRelationalDepth: 2 })).toEqual(one('deep.tags.item', 'Max relational depth exceeded'));
    expect(problems({ deep: { tags: { _limit: 1 } } }, item, { maxRelationalDepth: 2 })).toEqual([]);
  });
  it('deep on a field that is not a relation, or on no field, is ignored (as Directus ignores it)', () => {
    expect(problems({ deep: { name: { _limit: 1 }, nope: { _limit: 1 } } }, item)).toEqual([]);
    expect(q({ deep: { name: { _limit: 1 }, tags: { _limit: '2' } } }, item).deep!.children).toEqual({ tags: expect.objectContaining({ limit: 2 }) });
  });
  it('alias names are relations for deep', () => {
    expect(q({ alias: { hot: 'tags' }, deep: { hot: { _limit: '1' } } }, item).deep!.children.hot!.limit).toBe(1);
  });
});

describe('filter and problems together', () => {
  it('the filter is parsed with the request depth', () => {
    expect(q({ filter: { project: { title: 'x' } } }).filter).toEqual(Compare.create(FieldRef.create(['project', 'title']), '_eq', 'x'));
    expect(problems({ filter: { project: { account: { name: 'x' } } } }, render, { maxRelationalDepth: 2 })).toEqual(
      one('filter.project.account.name', 'Max relational depth exceeded'),
    );
  });
  it('a 400 INVALID_QUERY lists every problem', () => {
    let thrown: unknown;
    try { q({ limit: 'x', sort: 'nope', fields: 'title.x' }); } catch (e) { thrown = e; }
    expect(thrown).toBeInstanceOf(GatewayError);
    expect((thrown as GatewayError).status).toBe(400);
    expect((thrown as GatewayError).code).toBe('INVALID_QUERY');
    expect(((thrown as GatewayError).entryExtensions ?? []).map((e) => e.path)).toEqual(['fields[0]', 'sort[0]', 'limit']);
  });
});
