import { describe, expect, it } from 'vitest';
import { loadMappings } from '../../src/config/mappings.js';
import { GatewayError } from '../../src/errors/catalog.js';
import { cast, collectionFor, itemBody, writableValues } from '../../src/write/permissions.js';

const m = loadMappings('mappings');
const code = (f: () => unknown) => { try { f(); } catch (e) { return `${(e as GatewayError).status} ${(e as GatewayError).code}`; } return 'ok'; };

describe('the legacy role (mappings/permissions.json)', () => {
  it('unknown, system and not-permitted collections are 403 for every action', () => {
    for (const name of ['nope', 'directus_users', 'directus_roles', '__proto__', 'constructor', 'toString'])
      for (const action of ['read', 'create', 'update', 'delete'] as const) expect(code(() => collectionFor(m, name, action)), `${name} ${action}`).toBe('403 FORBIDDEN');
    expect(code(() => collectionFor(m, 'renders', 'delete'))).toBe('403 FORBIDDEN');
    expect(code(() => collectionFor(m, 'projects', 'create'))).toBe('403 FORBIDDEN');
    expect(code(() => collectionFor(m, 'templates', 'update'))).toBe('403 FORBIDDEN');
    expect(collectionFor(m, 'renders', 'create').resource).toBe('render');
    expect(collectionFor(m, 'accounts', 'update').resource).toBe('account');
  });

  it('a field the role may not set, or that does not exist, is 403; allowed fields are cast as Directus casts them', () => {
    const renders = collectionFor(m, 'renders', 'create');
    expect(code(() => writableValues(renders, 'create', { status: 'complete' }))).toBe('403 FORBIDDEN');
    expect(code(() => writableValues(renders, 'create', { nope: 1 }))).toBe('403 FORBIDDEN');
    expect(code(() => writableValues(renders, 'create', { hasOwnProperty: 1 }))).toBe('403 FORBIDDEN');
    expect(code(() => writableValues(collectionFor(m, 'renders', 'update'), 'update', { project: 'x' }))).toBe('403 FORBIDDEN');
    expect(writableValues(renders, 'create', { title: 123, data: { a: 1 } })).toEqual({ title: '123', data: { a: 1 } });
    expect(writableValues(renders, 'create', { title: true })).toEqual({ title: 'true' });
  });

  it('casts only numbers and booleans for text fields', () => {
    expect(cast(1.5, 'string')).toBe('1.5');
    expect(cast(false, 'text')).toBe('false');
    expect(cast({ a: 1 }, 'string')).toEqual({ a: 1 });
    expect(cast(5, 'json')).toBe(5);
    expect(cast(null, 'string')).toBeNull();
  });

  it('an item body is an object', () => {
    for (const b of ['hello', 5, null, undefined, [1]]) expect(code(() => itemBody(b))).toBe('400 INVALID_PAYLOAD');
    expect(itemBody({ a: 1 })).toEqual({ a: 1 });
  });
});
