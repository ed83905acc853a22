import type { Lookup, Rec } from '../../src/query/compile.js';
import type { ResourceSchema, SchemaRegistry } from '../../src/query/schema.js';

/**
 * A small hand-made world with every field type the evaluator distinguishes (the legacy resources have no
 * numbers or text fields): items owned by people (many-to-one), people in orgs, tags of items (one-to-many).
 * Expected answers in the tests are worked out by hand from these records.
 */
const f = (name: string, type: string, relation?: { kind: 'm2o' | 'o2m'; resource: string }) => ({ name, type, ...(relation ? { relation } : {}) }) as never;

export const item: ResourceSchema = {
  key: 'item', name: 'items', defaultSort: ['id'],
  fields: {
    id: f('id', 'uuid'), name: f('name', 'string'), body: f('body', 'text'), n: f('n', 'integer'), x: f('x', 'float'),
    at: f('at', 'timestamp'), flag: f('flag', 'boolean'), meta: f('meta', 'json'),
    owner: f('owner', 'uuid', { kind: 'm2o', resource: 'person' }), tags: f('tags', 'alias', { kind: 'o2m', resource: 'tag' }),
  },
};
export const person: ResourceSchema = {
  key: 'person', name: 'people', defaultSort: ['id'],
  fields: {
    id: f('id', 'uuid'), name: f('name', 'string'), org: f('org', 'uuid', { kind: 'm2o', resource: 'org' }),
    items: f('items', 'alias', { kind: 'o2m', resource: 'item' }),
  },
};
export const org: ResourceSchema = { key: 'org', name: 'orgs', defaultSort: ['id'], fields: { id: f('id', 'uuid'), name: f('name', 'string') } };
export const tag: ResourceSchema = {
  key: 'tag', name: 'tags', defaultSort: ['id'],
  fields: { id: f('id', 'uuid'), label: f('label', 'string'), item: f('item', 'uuid', { kind: 'm2o', resource: 'item' }) },
};
export const shop: SchemaRegistry = { item, person, org, tag };

const uid = (prefix: string, n: number) => `${prefix}-0000-4000-8000-${String(n).padStart(12, '0')}`;
export const O1 = uid('0000000a', 1);
export const P1 = uid('0000000b', 1);
export const P2 = uid('0000000b', 2);
export const MISSING = uid('0000000b', 9);

export const orgs: Rec[] = [{ id: O1, name: 'Org One' }];
export const people: Rec[] = [
  { id: P1, name: 'Ann', org: O1 },
  { id: P2, name: 'Bob', org: null },
];
export const items: Rec[] = [
  { id: uid('0000000c', 1), name: 'apple', body: 'Red Fruit', n: 1, x: 1.5, at: '2026-01-01T00:00:00.000Z', flag: true, meta: null, owner: P1 },
  { id: uid('0000000c', 2), name: 'Banana', body: null, n: 10, x: null, at: '2026-03-15T08:30:45.000Z', flag: false, meta: { a: 1 }, owner: P2 },
  { id: uid('0000000c', 3), name: null, body: 'green', n: null, x: 2.5, at: null, flag: null, meta: null, owner: null },
  { id: uid('0000000c', 4), name: '', body: '', n: 0, x: 0, at: '2026-12-31T23:59:59.000Z', flag: false, meta: null, owner: MISSING },
  { id: uid('0000000c', 5), name: 'cherry', body: 'Dark RED', n: 5, x: -1, at: '2027-01-01T00:00:00.000Z', flag: true, meta: null, owner: P1 },
];
export const I = (n: number) => items[n - 1]!.id as string;
export const tags: Rec[] = [
  { id: uid('0000000d', 1), label: 'hot', item: I(1) },
  { id: uid('0000000d', 2), label: 'cold', item: I(1) },
  { id: uid('0000000d', 3), label: 'hot', item: I(2) },
  { id: uid('0000000d', 4), label: 'lonely', item: null },
];

/** Item number (1-5) or tag number (1-4) of a record, for readable expectations. */
export const num = (r: Rec): number => Number(String(r.id).slice(-2));

const tables: Record<string, Rec[]> = { item: items, person: people, org: orgs, tag: tags };

export const related = (resource: string, parent: Rec, field: string, parentResource: string): Rec[] => {
  if (parentResource === 'item' && field === 'tags') return tags.filter((t) => t.item === parent.id);
  if (parentResource === 'person' && field === 'items') return items.filter((t) => t.owner === parent.id);
  throw new Error(`no relation ${parentResource}.${field} → ${resource}`);
};

export const shopLookup: Lookup = {
  one: (resource, id) => tables[resource]?.find((r) => r.id === id),
  many: related,
  manyAll: related,
};
