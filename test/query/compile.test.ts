import { describe, expect, it } from 'vitest';
import { And, Compare, FieldRef, Or, Relation, Sort, True, type FilterNode, type Scalar } from '../../src/query/ast.js';
import { compileFilter, compileGetter, compileSort, dateFn, type Lookup, type Rec } from '../../src/query/compile.js';
import { compileSearch, searchedFields } from '../../src/query/search.js';
import type { ResourceSchema } from '../../src/query/schema.js';
import { I, MISSING, O1, P1, P2, item, items, num, orgs, people, shop, shopLookup, tag, tags } from './shop-fixtures.js';

const cmp = (path: string, op: string, value: Scalar | readonly Scalar[], fn?: string) =>
  Compare.create(FieldRef.create(path.split('.'), fn as never), op as never, value);
const matching = (node: FilterNode | null, records: readonly Rec[] = items, resource: ResourceSchema = item, lookup: Lookup = shopLookup) => {
  const p = compileFilter(node, resource, shop, lookup);
  return records.filter((r) => p(r)).map(num);
};
const sorted = (keys: [string, 'asc' | 'desc', string?][], records: readonly Rec[] = items) =>
  [...records].sort(compileSort(keys.map(([p, d, fn]) => Sort.create(FieldRef.create(p.split('.'), fn as never), d)), item, shop, shopLookup)).map(num);

describe('compiled comparisons on root fields (SQL semantics: a null field never matches a comparison)', () => {
  it.each([
    // integer: null must not count as 0
    ['n', '_eq', 5, [5]],
    ['n', '_neq', 5, [1, 2, 4]],
    ['n', '_gt', 1, [2, 5]],
    ['n', '_gt', -1, [1, 2, 4, 5]],
    ['n', '_gte', 1, [1, 2, 5]],
    ['n', '_gte', 0, [1, 2, 4, 5]],
    ['n', '_lt', 5, [1, 4]],
    ['n', '_lte', 5, [1, 4, 5]],
    ['n', '_in', [5, 10, null], [2, 5]],
    ['n', '_nin', [5, 10], [1, 4]],
    ['n', '_nin', [5, null], []], // NOT IN (…, NULL) is never true
    ['n', '_between', [1, 5], [1, 5]], // inclusive at both ends
    ['n', '_nbetween', [1, 5], [2, 4]],
    ['n', '_between', [null, 5], []],
    ['n', '_nbetween', [1, null], []],
    ['x', '_lt', 0, [5]],
    ['x', '_gte', 1.5, [1, 3]],
    // timestamp: ISO strings compared as instants
    ['at', '_gt', '2026-03-15T08:30:45.000Z', [4, 5]],
    ['at', '_gte', '2026-03-15T08:30:45.000Z', [2, 4, 5]],
    ['at', '_lt', '2026-12-31T23:59:59.000Z', [1, 2]],
    ['at', '_lte', '2026-12-31T23:59:59.000Z', [1, 2, 4]],
    ['at', '_eq', '2027-01-01T00:00:00.000Z', [5]],
    ['at', '_neq', '2027-01-01T00:00:00.000Z', [1, 2, 4]],
    ['at', '_contains', '2026-03', [2]],
    ['at', '_ncontains', '2026', [5]],
    ['at', '_starts_with', '2027', [5]],
    ['at', '_nstarts_with', '2027', [1, 2, 4]],
    ['at', '_ends_with', '59.000Z', [4]],
    ['at', '_nends_with', '59.000Z', [1, 2, 5]],
    ['at', '_in', ['2026-01-01T00:00:00.000Z', null], [1]],
    ['at', '_between', ['2026-01-01T00:00:00.000Z', '2026-12-31T23:59:59.000Z'], [1, 2, 4]],
    // boolean
    ['flag', '_eq', true, [1, 5]],
    ['flag', '_neq', true, [2, 4]],
    ['flag', '_eq', false, [2, 4]],
    // string: case-sensitive unless i-prefixed; '' is a value, null is not
    ['name', '_eq', 'apple', [1]],
    ['name', '_neq', 'apple', [2, 4, 5]],
    ['name', '_in', ['apple', null], [1]],
    ['name', '_nin', ['apple'], [2, 4, 5]],
    ['name', '_contains', 'an', [2]],
    ['name', '_contains', 'b', []],
    ['name', '_ncontains', 'an', [1, 4, 5]],
    ['name', '_icontains', 'AN', [2]],
    ['name', '_starts_with', 'B', [2]],
    ['name', '_starts_with', 'b', []],
    ['name', '_nstarts_with', 'B', [1, 4, 5]],
    ['name', '_istarts_with', 'b', [2]],
    ['name', '_nistarts_with', 'b', [1, 4, 5]],
    ['name', '_ends_with', 'y', [5]],
    ['name', '_ends_with', 'A', []],
    ['name', '_nends_with', 'y', [1, 2, 4]],
    ['name', '_iends_with', 'NA', [2]],
    ['name', '_niends_with', 'NA', [1, 4, 5]],
    ['body', '_contains', 'RED', [5]],
    ['body', '_contains', 'Red', [1]],
    ['body', '_icontains', 'red', [1, 5]],
    ['body', '_starts_with', 'g', [3]],
    ['body', '_ends_with', 'RED', [5]],
    // flags: false inverts the operator (Directus ≥ 10.3)
    ['n', '_null', true, [3]],
    ['n', '_null', false, [1, 2, 4, 5]],
    ['n', '_nnull', true, [1, 2, 4, 5]],
    ['n', '_nnull', false, [3]],
    ['name', '_empty', true, [3, 4]],
    ['name', '_empty', false, [1, 2, 5]],
    ['name', '_nempty', true, [1, 2, 5]],
    ['name', '_nempty', false, [3, 4]],
    // null as the value: `col = NULL` matches nothing, `_neq null` is IS NOT NULL
    ['n', '_eq', null, []],
    ['n', '_neq', null, [1, 2, 4, 5]],
    ['n', '_lt', null, []],
    ['n', '_lte', null, []],
    ['n', '_gt', null, []],
    ['n', '_gte', null, []],
    ['name', '_contains', null, []],
    ['name', '_ncontains', null, []],
    ['x', '_lt', null, []],
    // a null field is not the number 0 nor the text 'null' (JavaScript would coerce it)
    ['name', '_lte', '0', [4]],
    ['name', '_gte', '0', [1, 2, 5]],
    ['name', '_icontains', 'NUL', []],
    ['name', '_istarts_with', 'NU', []],
    ['name', '_iends_with', 'LL', []],
    ['at', '_contains', 'ul', []],
    ['at', '_starts_with', 'nu', []],
    ['at', '_ends_with', 'll', []],
  ] as const)('%s %s %j → %j', (field, op, value, expected) => {
    expect(matching(cmp(field, op, value as never))).toEqual(expected);
  });

  it('predicates answer booleans, also for values that match nothing', () => {
    const answers = (node: FilterNode) => items.map(compileFilter(node, item, shop, shopLookup));
    for (const [field, op, value] of [
      ['n', '_eq', null], ['n', '_lt', null], ['n', '_lte', null], ['n', '_gt', null], ['n', '_gte', null], ['n', '_nin', [1, null]], ['n', '_between', [null, 1]],
      ['name', '_contains', null], ['n', '_neq', null], ['name', '_empty', true],
    ] as const) expect(answers(cmp(field, op, value as never)).every((a) => typeof a === 'boolean')).toBe(true);
    const bare: ResourceSchema = { key: 'b', name: 'bs', defaultSort: [], fields: { flag: item.fields.flag! } };
    expect(compileSearch('x', bare)({ flag: true })).toBe(false);
  });

  it('refuses an operator it cannot evaluate', () => {
    expect(() => compileFilter(cmp('n', '_regex', 'x'), item, shop, shopLookup)).toThrow(/operator _regex has no evaluator/);
  });
});

describe('date functions', () => {
  it.each([
    ['year', [2026, 2026, null, 2026, 2027]],
    ['month', [1, 3, null, 12, 1]],
    ['day', [1, 15, null, 31, 1]],
    ['weekday', [4, 0, null, 4, 5]], // 0 = Sunday, as PostgreSQL DOW
    ['hour', [0, 8, null, 23, 0]],
    ['minute', [0, 30, null, 59, 0]],
    ['second', [0, 45, null, 59, 0]],
    ['week', [1, 11, null, 53, 53]], // ISO weeks: 2026 starts on a Thursday and has 53
  ] as const)('%s of each item', (fn, expected) => {
    const f = dateFn(fn);
    expect(items.map((r) => f(r.at))).toEqual(expected);
  });

  it('ISO week edges: a Sunday ends its week, a late-December Monday can open week 1', () => {
    const week = dateFn('week');
    expect(week('2026-01-04T12:00:00Z')).toBe(1); // Sunday
    expect(week('2026-01-05T00:00:00Z')).toBe(2); // Monday
    expect(week('2024-12-30T00:00:00Z')).toBe(1); // Monday of week 1 of 2025
    expect(week('2021-01-03T00:00:00Z')).toBe(53); // Sunday, still week 53 of 2020
  });

  it('is null for anything but a parsable date string', () => {
    expect(dateFn('year')(1_700_000_000_000)).toBeNull();
    expect(dateFn('year')('not a date')).toBeNull();
    expect(dateFn('month')(null)).toBeNull();
  });

  it('a null function value never matches (no coercion to 0)', () => {
    expect(matching(cmp('at', '_neq', 3, 'month'))).toEqual([1, 4, 5]);
    expect(matching(cmp('at', '_lte', 3, 'month'))).toEqual([1, 2, 5]);
    expect(matching(cmp('at', '_gt', -1, 'month'))).toEqual([1, 2, 4, 5]);
    expect(matching(cmp('at', '_gte', 0, 'month'))).toEqual([1, 2, 4, 5]);
    expect(matching(cmp('at', '_in', [1, null], 'month'))).toEqual([1, 5]);
    expect(matching(cmp('at', '_between', [0, 3], 'month'))).toEqual([1, 2, 5]);
  });

  it('filters by a function of a date (compared as an integer)', () => {
    expect(matching(cmp('at', '_eq', 3, 'month'))).toEqual([2]);
    expect(matching(cmp('at', '_in', [1, 12], 'month'))).toEqual([1, 4, 5]);
    expect(matching(cmp('at', '_gte', 2027, 'year'))).toEqual([5]);
    expect(matching(cmp('at', '_lt', 2027, 'year'))).toEqual([1, 2, 4]);
    expect(matching(cmp('at', '_null', true, 'year'))).toEqual([3]);
    expect(matching(cmp('at', '_eq', 53, 'week'))).toEqual([4, 5]);
  });
});

describe('getters', () => {
  it('count() needs one one-to-many field', () => {
    expect(() => compileGetter(['name'], 'count', item, shop, shopLookup)).toThrow(/count\(\) of name/);
    expect(() => compileGetter(['nope'], 'count', item, shop, shopLookup)).toThrow(/count\(\) of nope/);
    expect(() => compileGetter(['tags', 'label'], 'count', item, shop, shopLookup)).toThrow(/count\(\) of tags\.label/);
    expect(() => compileGetter(['owner'], 'count', item, shop, shopLookup)).toThrow(/count\(\) of owner/);
  });

  it('refuses unknown fields and hops through fields that are not many-to-one', () => {
    expect(() => compileGetter(['nope'], undefined, item, shop, shopLookup)).toThrow(/unknown field nope/);
    expect(() => compileGetter(['owner', 'nope'], undefined, item, shop, shopLookup)).toThrow(/unknown field owner\.nope/);
    expect(() => compileGetter(['name', 'x'], undefined, item, shop, shopLookup)).toThrow(/name is not many-to-one/);
    expect(() => compileGetter(['tags', 'label'], undefined, item, shop, shopLookup)).toThrow(/tags is not many-to-one/);
  });

  it('follows many-to-one paths; a missing link gives null', () => {
    const g = compileGetter(['owner', 'org', 'name'], undefined, item, shop, shopLookup);
    expect(g.type).toBe('string');
    expect(items.map((r) => g.get(r))).toEqual(['Org One', null, null, null, 'Org One']);
    const n = compileGetter(['owner', 'name'], undefined, item, shop, shopLookup);
    expect(items.map((r) => n.get(r))).toEqual(['Ann', 'Bob', null, null, 'Ann']);
    expect(compileGetter(['n'], undefined, item, shop, shopLookup).type).toBe('integer');
    expect(compileGetter(['at'], 'year', item, shop, shopLookup).type).toBe('integer');
    expect(compileGetter(['tags'], 'count', item, shop, shopLookup).type).toBe('integer');
  });

  it('count() counts every related item, none without manyAll', () => {
    expect(matching(cmp('tags', '_gt', 1, 'count'))).toEqual([1]);
    expect(matching(cmp('tags', '_eq', 1, 'count'))).toEqual([2]);
    expect(matching(cmp('tags', '_eq', 0, 'count'))).toEqual([3, 4, 5]);
    const noAll: Lookup = { one: shopLookup.one, many: shopLookup.many };
    expect(matching(cmp('tags', '_eq', 0, 'count'), items, item, noAll)).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('many-to-one filters (a LEFT JOIN: no related record means every related field is null)', () => {
  it('compares related fields, one and two hops away', () => {
    expect(matching(cmp('owner.name', '_eq', 'Ann'))).toEqual([1, 5]);
    expect(matching(cmp('owner.name', '_null', true))).toEqual([3, 4]);
    expect(matching(cmp('owner.name', '_neq', 'Ann'))).toEqual([2]);
    expect(matching(cmp('owner.org.name', '_eq', 'Org One'))).toEqual([1, 5]);
    expect(matching(cmp('owner.org.name', '_null', true))).toEqual([2, 3, 4]);
    expect(matching(cmp('owner.org', '_null', true))).toEqual([2, 3, 4]);
  });

  it('asks the lookup only for string ids (a null link is no look-up)', () => {
    const strict: Lookup = {
      ...shopLookup,
      one: (resource, id) => {
        if (typeof id !== 'string') throw new Error(`looked up ${String(id)}`);
        return shopLookup.one(resource, id);
      },
    };
    expect(matching(cmp('owner.name', '_null', true), items, item, strict)).toEqual([3, 4]);
    expect(matching(cmp('owner.org.name', '_eq', 'Org One'), items, item, strict)).toEqual([1, 5]);
    const g = compileGetter(['owner', 'org', 'name'], undefined, item, shop, strict);
    expect(items.map((r) => g.get(r))).toEqual(['Org One', null, null, null, 'Org One']);
    expect(matching(Relation.create(['item', 'owner', 'items'], 'some', True), tags, tag, strict)).toEqual([1, 2, 3]);
  });

  it('answers the same for every record sharing a related id (first, second and later look-ups)', () => {
    const p = compileFilter(cmp('owner.name', '_eq', 'Ann'), item, shop, shopLookup);
    expect([p(items[0]!), p(items[4]!), p(items[0]!), p(items[1]!), p(items[1]!)]).toEqual([true, true, true, false, false]);
  });

  it('a related record found later is used (a miss is not remembered), one hop', () => {
    const known: Rec[] = [];
    const lazy: Lookup = { ...shopLookup, one: (resource, id) => (resource === 'person' ? known.find((r) => r.id === id) : shopLookup.one(resource, id)) };
    const p = compileFilter(cmp('owner.name', '_eq', 'Ann'), item, shop, lazy);
    expect(p(items[0]!)).toBe(false);
    known.push(...people);
    expect(p(items[0]!)).toBe(true);
    expect(p(items[4]!)).toBe(true);
  });

  it('a deeper path is never remembered at the first hop (its later hop may be found later)', () => {
    const knownOrgs: Rec[] = [];
    const lazy: Lookup = { ...shopLookup, one: (resource, id) => (resource === 'org' ? knownOrgs : resource === 'person' ? people : []).find((r) => r.id === id) };
    const p = compileFilter(cmp('owner.org.name', '_eq', 'Org One'), item, shop, lazy);
    expect(p(items[0]!)).toBe(false);
    knownOrgs.push(...orgs);
    expect(p(items[0]!)).toBe(true);
    expect(p(items[4]!)).toBe(true);
  });
});

describe('one-to-many filters', () => {
  it('_some and _none over related items', () => {
    expect(matching(Relation.create(['tags'], 'some', cmp('label', '_eq', 'hot')))).toEqual([1, 2]);
    expect(matching(Relation.create(['tags'], 'none', cmp('label', '_eq', 'hot')))).toEqual([3, 4, 5]);
    expect(matching(Relation.create(['tags'], 'some', True))).toEqual([1, 2]);
    expect(matching(Relation.create(['tags'], 'none', cmp('label', '_eq', 'cold')))).toEqual([2, 3, 4, 5]);
  });

  it('reaches the one-to-many field through many-to-one steps', () => {
    // tags whose item has a cold tag; a tag without an item has no related items at all
    expect(matching(Relation.create(['item', 'tags'], 'some', cmp('label', '_eq', 'cold')), tags, tag)).toEqual([1, 2]);
    expect(matching(Relation.create(['item', 'tags'], 'none', cmp('label', '_eq', 'cold')), tags, tag)).toEqual([3, 4]);
    // two steps: tags whose item's owner owns an item named cherry (Ann owns apple and cherry)
    expect(matching(Relation.create(['item', 'owner', 'items'], 'some', cmp('name', '_eq', 'cherry')), tags, tag)).toEqual([1, 2]);
    expect(matching(Relation.create(['item', 'owner', 'items'], 'some', cmp('name', '_eq', 'Banana')), tags, tag)).toEqual([3]);
    expect(matching(Relation.create(['item', 'owner', 'items'], 'none', cmp('name', '_eq', 'Banana')), tags, tag)).toEqual([1, 2, 4]);
  });
});

describe('logical nodes', () => {
  const ge1 = cmp('n', '_gte', 1);
  const le5 = cmp('n', '_lte', 5);
  const on = cmp('flag', '_eq', true);
  it('_and of two and of three, _or of two and of three', () => {
    expect(matching(And.create([ge1, le5]))).toEqual([1, 5]);
    expect(matching(And.create([ge1, on]))).toEqual([1, 5]);
    expect(matching(And.create([le5, cmp('flag', '_eq', false)]))).toEqual([4]);
    expect(matching(And.create([ge1, le5, cmp('name', '_eq', 'cherry')]))).toEqual([5]);
    expect(matching(And.create([cmp('name', '_eq', 'cherry'), ge1, le5]))).toEqual([5]);
    expect(matching(And.create([ge1, cmp('name', '_eq', 'cherry'), le5]))).toEqual([5]);
    expect(matching(Or.create([cmp('n', '_eq', 10), cmp('name', '_eq', 'apple')]))).toEqual([1, 2]);
    expect(matching(Or.create([cmp('n', '_eq', 10), cmp('name', '_eq', 'apple'), cmp('x', '_eq', 2.5)]))).toEqual([1, 2, 3]);
  });
  it('an empty _and matches everything, an empty _or nothing; no filter and True match everything', () => {
    expect(matching(And.create([]))).toEqual([1, 2, 3, 4, 5]);
    expect(matching(Or.create([]))).toEqual([]);
    expect(matching(True)).toEqual([1, 2, 3, 4, 5]);
    expect(matching(null)).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('search (Directus applySearch)', () => {
  const search = (q: string | null, resource: ResourceSchema = item, records: readonly Rec[] = items) => {
    const p = compileSearch(q, resource);
    return records.filter((r) => p(r)).map(num);
  };
  it('looks in text, numbers and uuids of the record itself', () => {
    expect(searchedFields(item).map((f) => f.name)).toEqual(['id', 'name', 'body', 'n', 'x', 'owner']);
    expect(searchedFields(tag).map((f) => f.name)).toEqual(['id', 'label', 'item']);
  });
  it('is a case-insensitive substring on string and text fields', () => {
    expect(search('AN')).toEqual([2]);
    expect(search('red')).toEqual([1, 5]);
    expect(search('GREEN')).toEqual([3]);
    expect(search(' ')).toEqual([1, 5]); // a space is text; it is not the number 0
  });
  it('is exact equality on numbers', () => {
    expect(search('5')).toEqual([5]);
    expect(search('10')).toEqual([2]);
    expect(search('1.5')).toEqual([1]);
    expect(search('0')).toEqual([4]);
    expect(search('-1')).toEqual([5]);
  });
  it('is an exact, case-insensitive match on uuids only when the query is a uuid', () => {
    expect(search(I(2).toUpperCase())).toEqual([2]);
    expect(search(P1)).toEqual([1, 5]);
    expect(search(P2.slice(0, 8))).toEqual([]);
    expect(search(MISSING)).toEqual([4]);
  });
  it('no search matches everything; nothing searchable matches nothing (Directus ≥ 10.11)', () => {
    expect(search(null)).toEqual([1, 2, 3, 4, 5]);
    expect(search('')).toEqual([1, 2, 3, 4, 5]);
    const bare: ResourceSchema = { key: 'b', name: 'bs', defaultSort: [], fields: { flag: item.fields.flag!, meta: item.fields.meta!, at: item.fields.at! } };
    expect(search('true', bare)).toEqual([]);
    expect(search(O1, bare)).toEqual([]);
  });
});

describe('sort (PostgreSQL: nulls last ascending, first descending)', () => {
  it('strings by collation (case does not split the alphabet), numbers by value', () => {
    expect(sorted([['name', 'asc']])).toEqual([4, 1, 2, 5, 3]);
    expect(sorted([['name', 'desc']])).toEqual([3, 5, 2, 1, 4]);
    expect(sorted([['body', 'asc']])).toEqual([4, 5, 3, 1, 2]);
    expect(sorted([['n', 'asc']])).toEqual([4, 1, 5, 2, 3]);
    expect(sorted([['n', 'desc']])).toEqual([3, 2, 5, 1, 4]);
    expect(sorted([['x', 'asc']])).toEqual([5, 4, 1, 3, 2]);
    expect(sorted([['at', 'desc']])).toEqual([3, 5, 4, 2, 1]);
  });
  it('later keys break ties, also between two nulls', () => {
    expect(sorted([['flag', 'asc'], ['n', 'desc']])).toEqual([2, 4, 5, 1, 3]);
    expect(sorted([['owner.name', 'asc'], ['n', 'asc']])).toEqual([1, 5, 2, 4, 3]);
    expect(sorted([['owner.name', 'desc'], ['n', 'desc']])).toEqual([3, 4, 2, 5, 1]);
    expect(sorted([['owner.org.name', 'asc'], ['x', 'desc']])).toEqual([1, 5, 2, 3, 4]);
  });
  it('by a date function and by count()', () => {
    expect(sorted([['at', 'asc', 'month'], ['n', 'desc']])).toEqual([5, 1, 2, 4, 3]);
    expect(sorted([['tags', 'desc', 'count'], ['n', 'asc']])).toEqual([1, 2, 4, 5, 3]);
  });
  it('equal records compare as 0, and no keys keep the input order', () => {
    const c = compileSort([Sort.create(FieldRef.create(['flag']), 'asc')], item, shop, shopLookup);
    expect(c(items[0]!, items[4]!)).toBe(0);
    expect(c(items[0]!, items[1]!)).toBeGreaterThan(0);
    expect(c(items[1]!, items[0]!)).toBeLessThan(0);
    expect(compileSort([], item, shop, shopLookup)(items[0]!, items[1]!)).toBe(0);
  });
});
