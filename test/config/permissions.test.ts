import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMappings, MappingError } from '../../src/config/mappings.js';

const problemsWith = (edit: (p: any) => void): readonly string[] => {
  const dir = mkdtempSync(join(tmpdir(), 'map-'));
  try {
    cpSync('mappings', dir, { recursive: true });
    const p = JSON.parse(readFileSync(join(dir, 'permissions.json'), 'utf8'));
    edit(p);
    writeFileSync(join(dir, 'permissions.json'), JSON.stringify(p));
    loadMappings(dir);
    return [];
  } catch (e) {
    return (e as MappingError).problems;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

describe('mappings/permissions.json: the legacy role, checked at start-up', () => {
  it('loads: read the four collections; create renders with project, account, data, title; update titles and names; no delete', () => {
    const m = loadMappings('mappings');
    expect(m.permissions.renders).toEqual({ read: true, create: ['project', 'account', 'data', 'title'], update: ['title'], delete: false });
    expect(m.permissions.projects!.update).toEqual(['title']);
    expect(Object.values(m.permissions).every((p) => p.read && !p.delete)).toBe(true);
  });

  it('names every problem: unknown collections and fields, update of a non-overlay field, create elsewhere than renders, delete', () => {
    const problems = problemsWith((p) => {
      p.collections.nope = { read: true, create: [], update: [], delete: false };
      p.collections.renders.update.push('status', 'nope');
      p.collections.renders.delete = true;
      p.collections.projects.create = ['title'];
    });
    expect(problems).toEqual(expect.arrayContaining([
      'permissions.json: collections.nope: "nope" is not the collection of a resource in resources.json',
      'permissions.json: collections.renders: "nope" is not a field of renders',
      'permissions.json: collections.renders.update: "status" does not have the overlay write policy',
      'permissions.json: collections.renders.delete: cannot be granted (v1 cannot undo a render)',
      'permissions.json: collections.projects.create: only renders can be created',
    ]));
    expect(problemsWith((p) => { p.collections.templates.extra = 1; }).some((p) => p.startsWith('permissions.json: collections.templates'))).toBe(true);
    expect(problemsWith((p) => { p.collections.renders.update = 'title'; }).some((p) => p.startsWith('permissions.json: collections.renders.update'))).toBe(true);
  });

  it('a create without project and account, or with a field v1 cannot be sent, is refused', () => {
    expect(problemsWith((p) => { p.collections.renders.create = ['title', 'status']; })).toEqual(expect.arrayContaining([
      'permissions.json: collections.renders.create: "status" cannot be sent to v1',
      'permissions.json: collections.renders.create: needs project and account',
    ]));
  });
});
