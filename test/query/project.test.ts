import { describe, expect, it } from 'vitest';
import { Compare, FieldRef, Select, Sort, type DeepNode, type SelectNode } from '../../src/query/ast.js';
import { ExpansionBudget } from '../../src/query/budget.js';
import type { Lookup } from '../../src/query/compile.js';
import { compileProjection, selectsRelations, type RelatedOptions } from '../../src/query/project.js';
import { GatewayError } from '../../src/errors/catalog.js';
import { I, MISSING, O1, P1, P2, item, items, org, shop, shopLookup, tags } from './shop-fixtures.js';

const sel = (...fields: string[]): SelectNode[] =>
  fields.map((s) => {
    const fn = /^(\w+)\((\w+)\)$/.exec(s);
    if (fn) return fn[1] === 'count' ? Select.count(fn[2]!) : Select.create([fn[2]!], fn[1] as never);
    return Select.create(s.split('.'));
  });
const show = (fields: string[], n: number, related: RelatedOptions = {}, lookup: Lookup = shopLookup, budget?: ExpansionBudget) =>
  compileProjection(sel(...fields), item, shop, lookup, budget, related)(items[n - 1]!);
const T = (n: number) => tags[n - 1]!.id as string;
const deep = (o: Partial<DeepNode>): DeepNode => ({ filter: null, search: null, sort: [], offset: 0, children: {}, ...o });

describe('fields', () => {
  it('named fields in the order asked, each once; a missing value is null', () => {
    expect(show(['name', 'id'], 1)).toEqual({ name: 'apple', id: I(1) });
    expect(Object.keys(show(['name', 'id', 'name'], 1))).toEqual(['name', 'id']);
    expect(compileProjection(sel('name', 'body'), item, shop, shopLookup)({ id: 'z' })).toEqual({ name: null, body: null });
  });

  it('a name that is no field answers nothing (Directus drops unknown fields)', () => {
    expect(compileProjection([Select.create(['nope']), Select.create(['id'])], item, shop, shopLookup)(items[0]!)).toEqual({ id: I(1) });
  });

  it('* is every field: many-to-one as its id, one-to-many as the related ids', () => {
    const one = show(['*'], 1);
    expect(Object.keys(one)).toEqual(['id', 'name', 'body', 'n', 'x', 'at', 'flag', 'meta', 'owner', 'tags']);
    expect(one.owner).toBe(P1);
    expect(one.tags).toEqual([T(1), T(2)]);
    expect(show(['*'], 3).owner).toBeNull();
    expect(show(['*'], 4).owner).toBe(MISSING);
    expect(show(['*'], 5).tags).toEqual([]);
  });

  it('*.* expands each relation one level, *.*.* two levels', () => {
    const two = show(['*.*'], 1);
    expect(two.owner).toEqual({ id: P1, name: 'Ann', org: O1, items: [I(1), I(5)] });
    expect(two.tags).toEqual([{ id: T(1), label: 'hot', item: I(1) }, { id: T(2), label: 'cold', item: I(1) }]);
    expect(show(['*.*'], 3).owner).toBeNull();
    expect(show(['*.*'], 4).owner).toBeNull(); // the related record does not exist
    const three = show(['*.*.*'], 1);
    expect((three.owner as any).org).toEqual({ id: O1, name: 'Org One' });
    expect((three.tags as any)[0].item.name).toBe('apple');
  });

  it('dot paths through many-to-one relations', () => {
    expect(show(['owner.name'], 1)).toEqual({ owner: { name: 'Ann' } });
    expect(show(['owner.org.name'], 1)).toEqual({ owner: { org: { name: 'Org One' } } });
    expect(show(['owner.org.name'], 2)).toEqual({ owner: { org: null } });
    expect(show(['id', 'owner.name', 'owner.id'], 2)).toEqual({ id: I(2), owner: { name: 'Bob', id: P2 } });
    expect(show(['owner.*'], 2)).toEqual({ owner: { id: P2, name: 'Bob', org: null, items: [I(2)] } });
    expect(show(['*', 'owner.name'], 1).owner).toEqual({ name: 'Ann' });
    expect(show(['*', 'owner.name'], 1).name).toBe('apple');
  });

  it('dot paths through one-to-many relations', () => {
    expect(show(['tags.label'], 1)).toEqual({ tags: [{ label: 'hot' }, { label: 'cold' }] });
    expect(show(['tags.item.name'], 2)).toEqual({ tags: [{ item: { name: 'Banana' } }] });
  });

  it('date functions and count() answer PostgreSQL number strings', () => {
    expect(show(['id', 'month(at)', 'year(at)'], 4)).toEqual({ id: I(4), at_month: '12', at_year: '2026' });
    expect(show(['month(at)'], 3)).toEqual({ at_month: null });
    expect(show(['count(tags)'], 1)).toEqual({ tags_count: '2' });
    expect(show(['count(tags)'], 5)).toEqual({ tags_count: '0' });
    expect(show(['count(tags)'], 1, {}, { one: shopLookup.one, many: shopLookup.many })).toEqual({ tags_count: '0' });
  });
});

describe('deep: how related items are chosen', () => {
  const tagsOf = (n: number, d: DeepNode, nestedLimit?: number) =>
    show(['tags.label'], n, { deep: deep({ children: { tags: d } }), ...(nestedLimit !== undefined ? { nestedLimit } : {}) }).tags;
  it('filter, search, sort (else by id), offset and limit', () => {
    expect(tagsOf(1, deep({ filter: Compare.create(FieldRef.create(['label']), '_eq', 'cold') }))).toEqual([{ label: 'cold' }]);
    expect(tagsOf(1, deep({ search: 'HO' }))).toEqual([{ label: 'hot' }]);
    expect(tagsOf(1, deep({}))).toEqual([{ label: 'hot' }, { label: 'cold' }]);
    expect(tagsOf(1, deep({ sort: [Sort.create(FieldRef.create(['label']), 'asc')] }))).toEqual([{ label: 'cold' }, { label: 'hot' }]);
    expect(tagsOf(1, deep({ sort: [Sort.create(FieldRef.create(['id']), 'desc')] }))).toEqual([{ label: 'cold' }, { label: 'hot' }]);
    expect(tagsOf(1, deep({ limit: 1 }))).toEqual([{ label: 'hot' }]);
    expect(tagsOf(1, deep({ offset: 1 }))).toEqual([{ label: 'cold' }]);
    expect(tagsOf(1, deep({ offset: 1, limit: -1 }))).toEqual([{ label: 'cold' }]);
    expect(tagsOf(1, deep({ limit: -1 }), 1)).toEqual([{ label: 'hot' }, { label: 'cold' }]);
    expect(tagsOf(1, deep({ limit: 0 }))).toEqual([]);
  });
  it('without a way to list every related item, deep lists none', () => {
    const noAll: Lookup = { one: shopLookup.one, many: shopLookup.many };
    expect(show(['tags'], 1, { deep: deep({ children: { tags: deep({}) } }) }, noAll)).toEqual({ tags: [] });
  });
  it('related items come in primary-key order whatever order the lookup lists them in', () => {
    const reversed: Lookup = { ...shopLookup, manyAll: (...a) => [...shopLookup.manyAll!(...a)].reverse() };
    expect(show(['tags'], 1, { deep: deep({ children: { tags: deep({}) } }) }, reversed)).toEqual({ tags: [T(1), T(2)] });
  });
  it('the default limit of related items applies when deep gives none', () => {
    expect(tagsOf(1, deep({}), 1)).toEqual([{ label: 'hot' }]);
    expect(tagsOf(1, deep({ limit: 2 }), 1)).toEqual([{ label: 'hot' }, { label: 'cold' }]);
  });
  it('deep below a many-to-one relation', () => {
    const d = deep({ children: { owner: deep({ children: { items: deep({ filter: Compare.create(FieldRef.create(['n']), '_gt', 1) }) } }) } });
    expect(show(['owner.items.name'], 1, { deep: d })).toEqual({ owner: { items: [{ name: 'cherry' }] } });
    expect(show(['owner.items'], 1, { deep: d })).toEqual({ owner: { items: [I(5)] } });
  });
});

describe('alias: a second name for a top-level field', () => {
  it('answers the aliased field under its own name, with its own deep', () => {
    const related: RelatedOptions = { alias: { hot: 'tags', who: 'owner', title: 'name' }, deep: deep({ children: { hot: deep({ filter: Compare.create(FieldRef.create(['label']), '_eq', 'hot') }) } }) };
    expect(show(['tags', 'hot', 'title'], 1, related)).toEqual({ tags: [T(1), T(2)], hot: [T(1)], title: 'apple' });
    expect(show(['who.name', 'who.org'], 1, related)).toEqual({ who: { name: 'Ann', org: O1 } });
    expect(show(['who'], 2, related)).toEqual({ who: P2 });
  });
});

describe('expansion budget (MAX_RELATED_ITEMS)', () => {
  it('charges every many-to-one object expanded and every one-to-many item listed', () => {
    const b = new ExpansionBudget(100);
    show(['*.*'], 1, {}, shopLookup, b);
    expect(b.spent).toBe(5); // the owner, the owner's two items (as ids), two tags
    const ids = new ExpansionBudget(100);
    show(['*'], 1, {}, shopLookup, ids);
    expect(ids.spent).toBe(2); // the tags' ids; the owner id is no expansion
    const missing = new ExpansionBudget(100);
    show(['owner.name'], 4, {}, shopLookup, missing);
    expect(missing.spent).toBe(0);
  });
  it('a field asked twice is listed and charged once; a null link is never looked up', () => {
    const b = new ExpansionBudget(100);
    expect(show(['tags', 'tags'], 1, {}, shopLookup, b)).toEqual({ tags: [T(1), T(2)] });
    expect(b.spent).toBe(2);
    const strict: Lookup = { ...shopLookup, one: (resource, id) => { if (typeof id !== 'string') throw new Error('non-string id'); return shopLookup.one(resource, id); } };
    expect(show(['owner.name'], 3, {}, strict)).toEqual({ owner: null });
  });
  it('refuses past the limit with a 400', () => {
    let thrown: unknown;
    try { show(['*.*'], 1, {}, shopLookup, new ExpansionBudget(4)); } catch (e) { thrown = e; }
    expect(thrown).toBeInstanceOf(GatewayError);
    expect((thrown as GatewayError).status).toBe(400);
    expect((thrown as GatewayError).messages.join(' ')).toContain('more than 4 related items');
    expect((thrown as GatewayError).entryExtensions?.[0]?.path).toBe('fields');
    expect(() => show(['*.*'], 1, {}, shopLookup, new ExpansionBudget(5))).not.toThrow();
  });
});

describe('selectsRelations', () => {
  it('is true when related items are listed or expanded', () => {
    expect(selectsRelations(sel('id', 'name'), item, shop)).toBe(false);
    expect(selectsRelations(sel('owner'), item, shop)).toBe(false);
    expect(selectsRelations(sel('owner.name'), item, shop)).toBe(true);
    expect(selectsRelations(sel('tags'), item, shop)).toBe(true);
    expect(selectsRelations(sel('*'), item, shop)).toBe(true);
    expect(selectsRelations(sel('*'), org, shop)).toBe(false);
    expect(selectsRelations(sel('count(tags)', 'month(at)'), item, shop)).toBe(false);
    expect(selectsRelations(sel('hot'), item, shop, { hot: 'tags' })).toBe(true);
    expect(selectsRelations(sel('hot'), item, shop)).toBe(false);
    expect(selectsRelations(sel('toString'), item, shop)).toBe(false);
  });
});

describe('the key of a selection that reads the record alone (answered items kept by the replica under it)', () => {
  const keyOf = (fields: SelectNode[], alias?: Record<string, string>) =>
    compileProjection(fields, item, shop, shopLookup, undefined, alias ? { alias } : {}).key;
  it('names each field with the field it answers, in the order asked; an unknown name is marked', () => {
    expect(keyOf(sel('name', 'id'))).toBe('items:name=name,id=id');
    expect(keyOf(sel('id', 'name'))).toBe('items:id=id,name=name');
    expect(keyOf([Select.create(['nope']), Select.create(['id'])])).toBe('items:nope!,id=id');
    expect(keyOf(sel('label', 'id'), { label: 'name' })).toBe('items:label=name,id=id');
    expect(keyOf(sel('owner'))).toBe('items:owner=owner'); // a many-to-one's id is the record's own value
  });
  it('is undefined for anything read beyond the record: a relation, a one-to-many list, a function, a count, * with a list', () => {
    expect(keyOf(sel('id', 'owner.name'))).toBeUndefined();
    expect(keyOf(sel('id', 'tags'))).toBeUndefined();
    expect(keyOf(sel('id', 'year(at)'))).toBeUndefined();
    expect(keyOf(sel('id', 'count(tags)'))).toBeUndefined();
    expect(keyOf(sel('*'))).toBeUndefined(); // items have tags: a one-to-many list
    const plain = compileProjection(sel('*'), org, shop, shopLookup).key;
    expect(plain).toBe('orgs:id=id,name=name');
  });
});

describe('MAX_ITEM_MB: the values one item copies from related records, bounded while the item is built', () => {
  // an item whose owner's items each carry 1 MB, reached again and again through the relations: its JSON would be
  // hundreds of MB (attack pass 2026-11-28, F1: one 900 KB render, nested and aliased, ended the gateway in JSON.stringify)
  const big = 'é'.repeat(1_048_576);
  const heavy: Lookup = {
    one: (resource, id) => (resource === 'person' ? { id, name: 'p', org: null } : shopLookup.one(resource, id)),
    many: (resource, parent, field, parentResource) => (parentResource === 'person' && field === 'items'
      ? Array.from({ length: 8 }, (_, i) => ({ ...items[0]!, id: `${i}`, body: big, owner: parent.id }))
      : shopLookup.many(resource, parent, field, parentResource)),
  };
  const deepPath = (levels: number) => `owner${'.items.owner'.repeat(levels)}.items.body`;

  it('refuses with a 400 naming the bound before the item is built past it', () => {
    const b = new ExpansionBudget(1_000_000, 16);
    const refused = (() => { try { show([deepPath(3)], 1, {}, heavy, b); return undefined; } catch (e) { return e; } })();
    expect(refused).toBeInstanceOf(GatewayError);
    expect(refused).toMatchObject({ status: 400, code: 'INVALID_QUERY' });
    expect(String((refused as GatewayError).message)).toMatch(/more than one item may be \(16 MB, MAX_ITEM_MB\)/);
  });

  it('counts each item on its own, and only what related records copy in', () => {
    const b = new ExpansionBudget(1_000_000, 10);
    const project = compileProjection(sel('owner.items.body'), item, shop, heavy, b);
    for (const n of [1, 2, 5]) expect(() => project(items[n - 1]!)).not.toThrow(); // 8 MB an item: each within 10 MB
    // the root record's own values are not counted (bounded by what is stored)
    const root = compileProjection(sel('body', 'owner.name'), item, shop, heavy, new ExpansionBudget(1_000_000, 0.001));
    expect(root({ ...items[0]!, body: big }).body).toBe(big);
    expect(() => compileProjection(sel('owner.items.body'), item, shop, heavy, new ExpansionBudget(1_000_000, 7))(items[0]!)).toThrow(/MAX_ITEM_MB/);
  });

  it('an alias of the root record\'s field counts too: the same stored value copied again under every alias (attack pass 4, N1)', () => {
    const big = { ...items[0]!, body: 'x'.repeat(1_048_576) };
    const alias = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`b${i}`, 'body']));
    const fields = sel('id', ...Object.keys(alias));
    const refused = (() => {
      try { compileProjection(fields, item, shop, shopLookup, new ExpansionBudget(1_000_000, 16), { alias })(big); return undefined; } catch (e) { return e; }
    })();
    expect(refused).toMatchObject({ status: 400, code: 'INVALID_QUERY' });
    // ten aliases of 1 MB fit 16 MB; the root's own field is not counted
    const ten = Object.fromEntries(Object.entries(alias).slice(0, 10));
    const out = compileProjection(sel('id', 'body', ...Object.keys(ten)), item, shop, shopLookup, new ExpansionBudget(1_000_000, 11), { alias: ten })(big);
    expect(Object.keys(out)).toHaveLength(12);
  });
});
