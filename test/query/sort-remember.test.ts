import { describe, expect, it } from 'vitest';
import { FieldRef, Sort } from '../../src/query/ast.js';
import { compileSort, type Lookup, type Rec } from '../../src/query/compile.js';
import type { ResourceSchema } from '../../src/query/schema.js';
import { schemas } from './fixtures.js';

/**
 * A request's sort over relations reads each record's keys once (`remember`), not at each comparison: 38 tied keys over
 * relations read through their look-ups at every comparison held an instance a second a sort (attack pass 17, F3).
 */
const render = schemas.render as ResourceSchema;
const projects = new Map<string, Rec>(Array.from({ length: 50 }, (_, i) => [`p${i}`, { id: `p${i}`, title: `project ${i % 5}`, status: 'active', account: null }]));
const renders: Rec[] = Array.from({ length: 2_000 }, (_, i) => ({ id: `r${String(i).padStart(5, '0')}`, title: `t${i % 3}`, project: `p${(i * 7) % 50}`, status: 'ready' }));
const keys = [
  Sort.create(FieldRef.create(['project', 'title']), 'asc'), Sort.create(FieldRef.create(['project', 'status']), 'desc'),
  Sort.create(FieldRef.create(['title']), 'desc'), Sort.create(FieldRef.create(['id']), 'asc'),
];

describe('a sort that remembers its keys', () => {
  it('orders exactly as reading them at each comparison does, and looks each record up once a relational key', () => {
    let looked = 0;
    const lookup: Lookup = { one: (_r, id) => { looked++; return projects.get(id); }, many: () => [] };
    const plain = [...renders].sort(compileSort(keys, render, schemas, lookup));
    const plainLooks = looked;
    looked = 0;
    const cmp = compileSort(keys, render, schemas, lookup, true);
    const remembered = [...renders].sort(cmp);
    expect(remembered.map((r) => r.id)).toEqual(plain.map((r) => r.id));
    expect(remembered[0]).toMatchObject({ title: 't2' });
    expect(looked).toBe(renders.length * 2); // two keys through the project, once a record
    expect(plainLooks).toBeGreaterThan(looked * 5);
    // primed: a record's keys read before it is compared, none after
    const fresh = compileSort(keys, render, schemas, lookup, true);
    looked = 0;
    for (const r of renders) fresh.prime?.(r);
    expect(looked).toBe(renders.length * 2);
    [...renders].sort(fresh);
    expect(looked).toBe(renders.length * 2);
  });

  it('keeps at most the values it may: past them a record\'s keys are read at each comparison, the order the same', () => {
    let looked = 0;
    const lookup: Lookup = { one: (_r, id) => { looked++; return projects.get(id); }, many: () => [] };
    const cmp = compileSort(keys, render, schemas, lookup, 100 * keys.length); // 100 records' values
    for (const r of renders) cmp.prime?.(r);
    expect(looked).toBe(renders.length * 2);
    looked = 0;
    for (const r of renders.slice(0, 100)) cmp.prime?.(r); // kept: no look-up
    expect(looked).toBe(0);
    for (const r of renders.slice(100, 200)) cmp.prime?.(r); // not kept: read again
    expect(looked).toBe(200);
    expect([...renders].sort(cmp).map((r) => r.id)).toEqual([...renders].sort(compileSort(keys, render, schemas, lookup)).map((r) => r.id));
  });

  it('reads the keys again once the look-ups have moved (a relation fetched since was null before)', () => {
    const moving = { version: 0, known: false, one: (_r: string, id: string) => (moving.known ? projects.get(id) : undefined), many: () => [] };
    const cmp = compileSort(keys, render, schemas, moving, true);
    const before = [...renders].sort(cmp);
    expect(before.map((r) => r.id)).toEqual([...renders].sort(compileSort(keys, render, schemas, moving)).map((r) => r.id));
    moving.known = true;
    moving.version++;
    const after = [...renders].sort(cmp);
    expect(after.map((r) => r.id)).toEqual([...renders].sort(compileSort(keys, render, schemas, moving)).map((r) => r.id));
    expect(after[0]!.project).not.toBe(before[0]!.project);
  });
});
