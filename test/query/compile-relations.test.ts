import { describe, expect, it } from 'vitest';
import { And, Compare, FieldRef, Or, Relation, type FilterNode, type Scalar } from '../../src/query/ast.js';
import { compileFilter, type Lookup, type Rec } from '../../src/query/compile.js';
import type { ResourceSchema } from '../../src/query/schema.js';
import { parseQuery } from '../../src/query/parse-query.js';
import { parseQueryString } from '../../src/query/querystring.js';
import { runQuery } from '../../src/query/run.js';
import { ctx, lookup, projects, renders, schemas as legacy } from './fixtures.js';
import { item, items, num, people, person, shop, shopLookup, tag, tags } from './shop-fixtures.js';

/**
 * The relational branch of the compiler: comparisons on a related record's fields (many-to-one hops, a LEFT JOIN: no
 * related record means every related field is null) and `_some` / `_none` over one-to-many fields, operator by
 * operator. Expectations are worked out by hand from test/query/shop-fixtures.ts:
 *   items 1 apple (owner Ann, org One), 2 Banana (owner Bob, no org), 3 (no owner), 4 (owner id of nobody), 5 cherry (Ann);
 *   tags 1 hot and 2 cold of item 1, 3 hot of item 2, 4 lonely of no item.
 */
const cmp = (path: string, op: string, value: Scalar | readonly Scalar[], fn?: string) =>
  Compare.create(FieldRef.create(path.split('.'), fn as never), op as never, value);
const matching = (node: FilterNode, records: readonly Rec[] = items, resource: ResourceSchema = item, lookup: Lookup = shopLookup) => {
  const p = compileFilter(node, resource, shop, lookup);
  return records.filter((r) => p(r)).map(num);
};

describe('a filter on a many-to-one field (filter[owner][name][_op])', () => {
  it.each([
    ['_eq', 'Ann', [1, 5]],
    ['_eq', 'Bob', [2]],
    ['_eq', 'ann', []], // case-sensitive
    ['_eq', null, []],
    ['_neq', 'Ann', [2]], // items without an owner record have a null name: not "different"
    ['_neq', null, [1, 2, 5]],
    ['_in', ['Bob', 'Zed'], [2]],
    ['_in', ['Ann', null], [1, 5]],
    ['_nin', ['Ann'], [2]],
    ['_nin', ['Zed'], [1, 2, 5]],
    ['_nin', ['Ann', null], []],
    ['_null', true, [3, 4]],
    ['_null', false, [1, 2, 5]],
    ['_nnull', true, [1, 2, 5]],
    ['_nnull', false, [3, 4]],
    ['_empty', true, [3, 4]],
    ['_empty', false, [1, 2, 5]],
    ['_nempty', true, [1, 2, 5]],
    ['_nempty', false, [3, 4]],
    ['_contains', 'n', [1, 5]],
    ['_contains', 'o', [2]],
    ['_contains', 'N', []],
    ['_contains', 'ul', []], // a missing record's name is null, not the text 'null'
    ['_ncontains', 'n', [2]],
    ['_icontains', 'B', [2]],
    ['_icontains', 'ANN', [1, 5]],
    ['_starts_with', 'B', [2]],
    ['_starts_with', 'b', []],
    ['_nstarts_with', 'A', [2]],
    ['_istarts_with', 'a', [1, 5]],
    ['_nistarts_with', 'a', [2]],
    ['_ends_with', 'n', [1, 5]],
    ['_nends_with', 'n', [2]],
    ['_iends_with', 'OB', [2]],
    ['_niends_with', 'OB', [1, 5]],
    // ranges on text: the parser refuses them on string fields (Directus); the compiler still answers as SQL would
    ['_gt', 'Ann', [2]],
    ['_gt', 'A', [1, 2, 5]],
    ['_gte', 'Ann', [1, 2, 5]],
    ['_gte', 'Bob', [2]],
    ['_lt', 'Bob', [1, 5]],
    ['_lt', 'Ann', []],
    ['_lte', 'Ann', [1, 5]],
    ['_lte', 'Bob', [1, 2, 5]],
    ['_gt', null, []],
    ['_lt', null, []],
    ['_between', ['A', 'B'], [1, 5]],
    ['_between', ['Ann', 'Bob'], [1, 2, 5]], // inclusive
    ['_nbetween', ['A', 'B'], [2]],
    ['_nbetween', ['Ann', 'Bob'], []],
  ] as const)('owner.name %s %j → %j', (op, value, expected) => {
    expect(matching(cmp('owner.name', op, value as never))).toEqual(expected);
  });

  it('a related id field: its record\'s id, null when no record has it (item 4 names a missing person)', () => {
    expect(matching(cmp('owner.id', '_eq', people[1]!.id as string))).toEqual([2]);
    expect(matching(cmp('owner.id', '_null', true))).toEqual([3, 4]);
    expect(matching(cmp('owner', '_null', true))).toEqual([3]); // the link itself is set on item 4
    expect(matching(cmp('owner.id', '_in', [people[0]!.id as string, people[1]!.id as string]))).toEqual([1, 2, 5]);
  });

  it('two hops: owner.org and owner.org.name', () => {
    expect(matching(cmp('owner.org.name', '_eq', 'Org One'))).toEqual([1, 5]);
    expect(matching(cmp('owner.org.name', '_neq', 'Org One'))).toEqual([]);
    expect(matching(cmp('owner.org.name', '_nnull', true))).toEqual([1, 5]);
    expect(matching(cmp('owner.org.name', '_contains', 'One'))).toEqual([1, 5]);
    expect(matching(cmp('owner.org.name', '_nin', ['Org Two']))).toEqual([1, 5]);
    expect(matching(cmp('owner.org.name', '_empty', true))).toEqual([2, 3, 4]);
    expect(matching(cmp('owner.org', '_nnull', true))).toEqual([1, 5]);
  });

  it('from tags to their item: numbers, times, booleans, date functions and count()', () => {
    const onTags = (node: FilterNode) => matching(node, tags, tag);
    expect(onTags(cmp('item.name', '_eq', 'apple'))).toEqual([1, 2]);
    expect(onTags(cmp('item.n', '_gt', 1))).toEqual([3]);
    expect(onTags(cmp('item.n', '_gte', 1))).toEqual([1, 2, 3]);
    expect(onTags(cmp('item.n', '_lt', 10))).toEqual([1, 2]);
    expect(onTags(cmp('item.n', '_lte', 10))).toEqual([1, 2, 3]);
    expect(onTags(cmp('item.n', '_gt', -1))).toEqual([1, 2, 3]); // tag 4 has no item: null is not above -1
    expect(onTags(cmp('item.n', '_lt', 100))).toEqual([1, 2, 3]);
    expect(onTags(cmp('item.n', '_neq', 1))).toEqual([3]);
    expect(onTags(cmp('item.n', '_null', true))).toEqual([4]);
    expect(onTags(cmp('item.x', '_between', [1, 2]))).toEqual([1, 2]);
    expect(onTags(cmp('item.at', '_gt', '2026-02-01T00:00:00.000Z'))).toEqual([3]);
    expect(onTags(cmp('item.at', '_lte', '2026-01-01T00:00:00.000Z'))).toEqual([1, 2]);
    expect(onTags(cmp('item.at', '_eq', 2026, 'year'))).toEqual([1, 2, 3]);
    expect(onTags(cmp('item.at', '_gt', 2, 'month'))).toEqual([3]);
    expect(onTags(cmp('item.at', '_null', true, 'month'))).toEqual([4]);
    expect(onTags(cmp('item.flag', '_eq', true))).toEqual([1, 2]);
    expect(onTags(cmp('item.flag', '_eq', false))).toEqual([3]);
    expect(onTags(cmp('item.flag', '_neq', true))).toEqual([3]);
    expect(onTags(cmp('item.tags', '_gt', 1, 'count'))).toEqual([1, 2]);
    expect(onTags(cmp('item.tags', '_eq', 1, 'count'))).toEqual([3]);
    expect(onTags(cmp('item.owner.name', '_eq', 'Bob'))).toEqual([3]);
    expect(onTags(cmp('item.owner.name', '_null', true))).toEqual([4]);
    expect(onTags(cmp('item.owner.org.name', '_eq', 'Org One'))).toEqual([1, 2]);
  });

  it('combines with root comparisons under _and / _or', () => {
    expect(matching(And.create([cmp('owner.name', '_eq', 'Ann'), cmp('n', '_gt', 1)]))).toEqual([5]);
    expect(matching(Or.create([cmp('owner.name', '_eq', 'Bob'), cmp('owner.name', '_null', true)]))).toEqual([2, 3, 4]);
  });
});

describe('the related record is looked up once per id', () => {
  const counting = () => {
    const calls: string[] = [];
    const lookup: Lookup = { ...shopLookup, one: (resource, id) => (calls.push(`${resource}:${id}`), shopLookup.one(resource, id)) };
    return { calls, lookup };
  };

  it('one hop: a found record is remembered, a miss is asked again (it may be filled later)', () => {
    const { calls, lookup } = counting();
    const p = compileFilter(cmp('owner.name', '_eq', 'Ann'), item, shop, lookup);
    expect([...items, ...items].map((r) => p(r))).toEqual([true, false, false, false, true, true, false, false, false, true]);
    const per = (id: unknown) => calls.filter((c) => c === `person:${id}`).length;
    expect(per(items[0]!.owner)).toBe(1); // Ann: items 1 and 5, twice each
    expect(per(items[1]!.owner)).toBe(1); // Bob
    expect(per(items[3]!.owner)).toBe(2); // nobody has item 4's owner id: asked on each pass
    expect(calls).toHaveLength(4);
  });

  it('two hops are not remembered at the first (each record walks the path)', () => {
    const { calls, lookup } = counting();
    const p = compileFilter(cmp('owner.org.name', '_eq', 'Org One'), item, shop, lookup);
    expect(items.map((r) => p(r))).toEqual([true, false, false, false, true]);
    expect(calls.filter((c) => c.startsWith('person:'))).toHaveLength(4); // items 1, 2, 4, 5 (3 has no owner)
  });
});

describe('_some / _none over a one-to-many field (filter[tags][_some][label][_op])', () => {
  it.each([
    ['_eq', 'hot', [1, 2], [3, 4, 5]],
    ['_neq', 'hot', [1], [2, 3, 4, 5]],
    ['_in', ['cold', 'lonely'], [1], [2, 3, 4, 5]],
    ['_nin', ['hot'], [1], [2, 3, 4, 5]],
    ['_nin', ['hot', 'cold'], [], [1, 2, 3, 4, 5]],
    ['_null', true, [], [1, 2, 3, 4, 5]],
    ['_nnull', true, [1, 2], [3, 4, 5]],
    ['_contains', 'o', [1, 2], [3, 4, 5]],
    ['_contains', 'ol', [1], [2, 3, 4, 5]],
    ['_ncontains', 'ol', [1, 2], [3, 4, 5]],
    ['_starts_with', 'c', [1], [2, 3, 4, 5]],
    ['_ends_with', 't', [1, 2], [3, 4, 5]],
    ['_icontains', 'HO', [1, 2], [3, 4, 5]],
    ['_gt', 'hot', [], [1, 2, 3, 4, 5]],
    ['_gte', 'hot', [1, 2], [3, 4, 5]],
    ['_lt', 'hot', [1], [2, 3, 4, 5]],
    ['_lte', 'cold', [1], [2, 3, 4, 5]],
  ] as const)('label %s %j: some → %j, none → %j', (op, value, some, none) => {
    expect(matching(Relation.create(['tags'], 'some', cmp('label', op, value as never)))).toEqual(some);
    expect(matching(Relation.create(['tags'], 'none', cmp('label', op, value as never)))).toEqual(none);
  });

  it('over people\'s items: numbers, booleans, a nested _some and a many-to-one inside', () => {
    const onPeople = (node: FilterNode) => matching(node, people, person);
    expect(onPeople(Relation.create(['items'], 'some', cmp('n', '_gt', 5)))).toEqual([2]);
    expect(onPeople(Relation.create(['items'], 'some', cmp('n', '_lte', 1)))).toEqual([1]);
    expect(onPeople(Relation.create(['items'], 'none', cmp('flag', '_eq', true)))).toEqual([2]);
    expect(onPeople(Relation.create(['items'], 'some', cmp('x', '_null', true)))).toEqual([2]);
    expect(onPeople(Relation.create(['items'], 'some', Relation.create(['tags'], 'some', cmp('label', '_eq', 'hot'))))).toEqual([1, 2]);
    expect(onPeople(Relation.create(['items'], 'some', Relation.create(['tags'], 'some', cmp('label', '_eq', 'cold'))))).toEqual([1]);
    expect(onPeople(Relation.create(['items'], 'none', Relation.create(['tags'], 'some', cmp('label', '_eq', 'cold'))))).toEqual([2]);
    expect(onPeople(Relation.create(['items'], 'some', cmp('owner.org.name', '_eq', 'Org One')))).toEqual([1]);
    expect(onPeople(Relation.create(['items'], 'some', And.create([cmp('n', '_gte', 1), cmp('name', '_starts_with', 'c')])))).toEqual([1]);
  });

  it('through a many-to-one step first (tags whose item has a tag …)', () => {
    expect(matching(Relation.create(['item', 'tags'], 'some', cmp('label', '_neq', 'hot')), tags, tag)).toEqual([1, 2]);
    expect(matching(Relation.create(['item', 'tags'], 'none', cmp('label', '_in', ['hot'])), tags, tag)).toEqual([4]);
    expect(matching(Relation.create(['item', 'owner', 'items'], 'some', cmp('n', '_gt', 5)), tags, tag)).toEqual([3]);
    expect(matching(Relation.create(['item', 'owner', 'items'], 'none', cmp('n', '_gt', 5)), tags, tag)).toEqual([1, 2, 4]);
  });
});

describe('the same through the query string, on the legacy resources (filter[project][title][_op])', () => {
  // renders 1, 3, 5, 7 belong to project Alpha, 2, 4, 6 to beta; render 3 has no title (test/query/fixtures.ts)
  const run = (qs: string, resource: 'render' | 'project' = 'render') => {
    const q = parseQuery({ limit: '-1', sort: 'id', ...parseQueryString(qs) }, legacy[resource]!, ctx());
    const records = resource === 'render' ? renders : projects;
    return runQuery(records, q, legacy, lookup, { numericStrings: true }).data.map((x: any) =>
      (resource === 'render' ? Number(String(x.id).slice(-2)) : x.title));
  };
  const alpha = [1, 3, 5, 7];
  const beta = [2, 4, 6];

  it.each([
    ['filter[project][title][_eq]=Alpha', alpha],
    ['filter[project][title][_eq]=alpha', []],
    ['filter[project][title][_neq]=Alpha', beta],
    ['filter[project][title][_in]=beta,Gamma', beta],
    ['filter[project][title][_nin]=Alpha', beta],
    ['filter[project][title][_null]=true', []],
    ['filter[project][title][_nnull]=true', [...alpha, ...beta].sort((a, b) => a - b)],
    ['filter[project][title][_contains]=lph', alpha],
    ['filter[project][title][_ncontains]=lph', beta],
    ['filter[project][title][_icontains]=BET', beta],
    ['filter[project][title][_starts_with]=A', alpha],
    ['filter[project][title][_nstarts_with]=A', beta],
    ['filter[project][title][_ends_with]=ta', beta],
    ['filter[project][date_created][_gt]=2026-01-15T00:00:00Z', beta],
    ['filter[project][date_created][_gt]=2026-02-01T00:00:00Z', []],
    ['filter[project][date_created][_gte]=2026-02-01T00:00:00Z', beta],
    ['filter[project][date_created][_lt]=2026-02-01T00:00:00Z', alpha],
    ['filter[project][date_created][_lte]=2026-02-01T00:00:00Z', [...alpha, ...beta].sort((a, b) => a - b)],
    ['filter[project][date_created][_between]=2026-01-01T00:00:00Z,2026-01-31T00:00:00Z', alpha],
    ['filter[project][month(date_created)][_eq]=1', alpha],
    ['filter[project][account][name][_eq]=Acme', [...alpha, ...beta].sort((a, b) => a - b)],
    ['filter[project][title][_eq]=Alpha&filter[status][_eq]=complete', [1, 5, 7]],
  ] as const)('%s → %j', (qs, expected) => {
    expect(run(qs)).toEqual(expected);
  });

  it('refuses a range operator on a related text field, as on the record\'s own', () => {
    expect(() => run('filter[project][title][_gt]=Alpha')).toThrow(/"string" field type does not contain the "_gt" filter operator/);
    expect(() => run('filter[title][_gt]=Alpha')).toThrow(/"string" field type does not contain the "_gt" filter operator/);
  });

  it.each([
    ['filter[renders][_some][status][_eq]=complete', ['Alpha']],
    ['filter[renders][_none][status][_eq]=complete', ['beta']],
    ['filter[renders][_some][status][_in]=failed,encoding', ['beta']],
    ['filter[renders][_none][status][_nin]=complete,draft', ['Alpha']], // each of Alpha's renders is complete or draft
    ['filter[renders][_some][title][_null]=true', ['Alpha']],
    ['filter[renders][_none][title][_null]=true', ['beta']],
    ['filter[renders][_some][title][_contains]=ello', ['Alpha', 'beta']],
    ['filter[renders][_some][title][_starts_with]=hello', ['beta']],
    ['filter[renders][_some][title][_empty]=true', ['Alpha', 'beta']], // render 3 (null) and render 4 ('')
    ['filter[renders][_some][date_created][_gte]=2026-06-15T11:00:00Z', ['Alpha', 'beta']],
    ['filter[renders][_some][date_created][_lt]=2026-03-01T00:00:00Z', ['Alpha']],
    ['filter[renders][_none][download_ready][_eq]=true', ['beta']],
  ] as const)('projects: %s → %j', (qs, expected) => {
    expect(run(qs, 'project')).toEqual(expected);
  });
});
