import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { isGatewayError } from '../../src/errors/catalog.js';
import { canonicalJson, searchQuery } from '../../src/query/search-body.js';

const A = '59d3af91-711f-5c12-bde1-1a8e3d687603';
const B = '9604e4ce-6557-5e21-9833-c2dc7c9942bc';
const refusal = (f: () => unknown) => { try { f(); } catch (e) { if (isGatewayError(e)) return `${e.status} ${e.code} ${e.message}`; throw e; } return 'none'; };

describe('the question of a SEARCH body', () => {
  it('is the body query, typed as sent, replacing the URL query (but never its credential)', () => {
    const s = searchQuery({ query: { limit: 2, filter: { download_ready: { _eq: true } }, fields: ['id'] } }, { limit: '9', access_token: 't' });
    expect({ ...s.raw }).toEqual({ limit: 2, filter: { download_ready: { _eq: true } }, fields: ['id'] });
    expect({ ...searchQuery(undefined, { limit: '1', access_token: 't' }).raw }).toEqual({ limit: '1' });
    expect({ ...searchQuery({}, { sort: 'id' }).raw }).toEqual({ sort: 'id' });
    // null parameters are absent ones, as Directus reads a body (Python's None)
    expect({ ...searchQuery({ query: { search: null, limit: null, fields: ['id'], filter: null } }, {}).raw }).toEqual({ fields: ['id'] });
  });

  it('reads keys as id _in the keys over the rest of the filter, limited to the keys unless a limit is given', () => {
    const s = searchQuery({ keys: [A, B], query: { fields: ['id'], filter: { id: { _eq: A }, title: { _nnull: true } } } }, {});
    expect(s.raw.filter).toEqual({ id: { _in: [A, B] }, title: { _nnull: true } });
    expect(s.raw.limit).toBe(2);
    expect(searchQuery({ keys: [A], query: { limit: 5, filter: '{"title":{"_eq":"x"}}' } }, {}).raw).toMatchObject({ limit: 5, filter: { title: { _eq: 'x' }, id: { _in: [A] } } });
    expect(refusal(() => searchQuery({ keys: ['1'] }, {}))).toMatch(/^403 FORBIDDEN/);
    expect(refusal(() => searchQuery({ keys: [7] }, {}))).toMatch(/^403 FORBIDDEN/);
    expect(searchQuery({ keys: [], query: { limit: 5 } }, {}).raw.limit).toBe(0);
    // the body's shape is checked before the keys name anything
    expect(refusal(() => searchQuery({ keys: ['1'], query: 'x' }, {}))).toMatch(/^400 INVALID_PAYLOAD/);
  });

  it('refuses bodies of another shape with 400 INVALID_PAYLOAD naming the problem', () => {
    expect(refusal(() => searchQuery([], {}))).toBe('400 INVALID_PAYLOAD Invalid payload. "value" must be of type object.');
    expect(refusal(() => searchQuery({ query: {}, data: {} }, {}))).toBe('400 INVALID_PAYLOAD Invalid payload. "data" is not allowed.');
    expect(refusal(() => searchQuery({ query: 'limit=1' }, {}))).toBe('400 INVALID_PAYLOAD Invalid payload. "query" must be of type object.');
    expect(refusal(() => searchQuery({ keys: A }, {}))).toBe('400 INVALID_PAYLOAD Invalid payload. "keys" must be an array.');
    expect(refusal(() => searchQuery({ keys: [null] }, {}))).toBe('400 INVALID_PAYLOAD Invalid payload. "keys[0]" does not match any of the allowed types.');
  });

  it('has one canonical text per question, whatever the key order', () => {
    const a = searchQuery({ query: { limit: 1, filter: { b: 1, a: [{ y: 1, x: 2 }] } } }, {});
    const b = searchQuery({ query: { filter: { a: [{ x: 2, y: 1 }], b: 1 }, limit: 1 } }, {});
    expect(a.canonical).toBe(b.canonical);
    expect(a.canonical).not.toBe(searchQuery({ query: { limit: '1', filter: { b: 1, a: [{ y: 1, x: 2 }] } } }, {}).canonical);
    expect(canonicalJson({ z: [1, { b: null, a: 'x' }] })).toBe('{"z":[1,{"a":"x","b":null}]}');
  });

  it('writes a list of plain values in one pass, as JSON.stringify does (attack pass 28, M-1: 500 000 zeros in a SEARCH cost 148 ms, a call each)', () => {
    const zeros = Array(500_000).fill(0);
    const mixed = [0, -1.5e-7, 'a"b', true, null, undefined, 'é'];
    const spy = vi.spyOn(JSON, 'stringify');
    try {
      expect(canonicalJson({ x: zeros })).toBe(`{"x":${JSON.stringify(zeros)}}`);
      expect(spy.mock.calls.length).toBeLessThan(10);
    } finally { spy.mockRestore(); }
    // (one object among them wrote every value a call again: the re-check of M-1's fix)
    const withOne = [...zeros.slice(0, 250_000), { b: 1, a: 2 }, ...zeros.slice(0, 250_000)];
    const spied = vi.spyOn(JSON, 'stringify');
    try {
      expect(canonicalJson(withOne)).toBe(JSON.stringify(withOne).replace('{"b":1,"a":2}', '{"a":2,"b":1}'));
      expect(spied.mock.calls.length).toBeLessThan(10);
    } finally { spied.mockRestore(); }
    expect(canonicalJson(mixed)).toBe(JSON.stringify(mixed));
    expect(canonicalJson([{}, 1, undefined, [], 'x', { z: [undefined, 2] }])).toBe('[{},1,null,[],"x",{"z":[null,2]}]');
    // (1e400 is read as Infinity, which JSON writes as null: `_nin [1e400]` and `_nin [null]` shared one cached answer —
    // the re-check of attack pass 28, a low)
    const inf = searchQuery(JSON.parse('{"query":{"filter":{"title":{"_nin":[1e400]}}}}'), {}).canonical;
    expect(inf).not.toBe(searchQuery(JSON.parse('{"query":{"filter":{"title":{"_nin":[null]}}}}'), {}).canonical);
    expect(canonicalJson({ a: -1e400 })).not.toBe(canonicalJson({ a: null }));
    expect(canonicalJson([1, [2, { b: 1, a: 2 }]])).toBe('[1,[2,{"a":2,"b":1}]]');
  });

  it('writes a list with numbers past JSON\'s range between its values in one pass too (attack pass 30, M-1: 1e400 between every two values, 90 ms a call)', () => {
    const alternating: unknown[] = JSON.parse(`[${Array.from({ length: 110_000 }, () => '1e400,""').join(',')}]`);
    expect(alternating[0]).toBe(Infinity);
    const spy = vi.spyOn(JSON, 'stringify');
    let text = '';
    try {
      text = canonicalJson({ x: alternating });
      expect(spy.mock.calls.length).toBeLessThan(10);
    } finally { spy.mockRestore(); }
    expect(text.startsWith(`{"x":${JSON.stringify(alternating)}\u00000,2,4,`)).toBe(true);
    // (a list of plain values among them is part of the run: `0,[]` 90 000 times was a call a list — the re-check)
    const lists: unknown[] = Array.from({ length: 90_000 }, (_, i) => (i % 2 ? [] : [0, 'a', null]));
    const spied = vi.spyOn(JSON, 'stringify');
    try {
      expect(canonicalJson({ x: lists })).toBe(`{"x":${JSON.stringify(lists)}}`);
      expect(spied.mock.calls.length).toBeLessThan(10);
    } finally { spied.mockRestore(); }
    // (lists of them too: `[[1e400],…]` was a call a list — attack pass 32, M-3)
    const nested: unknown[] = JSON.parse(`[${Array(50_000).fill('[1e400]').join(',')}]`);
    const spy2 = vi.spyOn(JSON, 'stringify');
    try {
      expect(canonicalJson({ x: nested }).startsWith(`{"x":${JSON.stringify(nested)}\u00000.0,1.0,`)).toBe(true);
      expect(spy2.mock.calls.length).toBeLessThan(10);
    } finally { spy2.mockRestore(); }
    // every placement and sign of them is told apart, from null and from each other
    const keys = [[1e400], [null], [-1e400], [[], 1e400], [[0, 1e400]], [[0, null]], [[-1e400]], [1e400, [1e400], 1e400], [1e400, [null], 1e400], [1e400, null], [null, 1e400], [1e400, -1e400], [-1e400, 1e400], [[1e400]], [[null]], 1e400, -1e400, null]
      .map((x) => canonicalJson({ a: x }));
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('writes any JSON value as a plain recursive writer would, and joins its pieces once however deep (attack pass 33, M-1)', () => {
    const reference = (v: unknown): string => {
      if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : reference(x))).join(',')}]`;
      if (v !== null && typeof v === 'object') {
        const o = v as Record<string, unknown>;
        return `{${Object.keys(o).sort().filter((k) => o[k] !== undefined).map((k) => `${JSON.stringify(k)}:${reference(o[k])}`).join(',')}}`;
      }
      return JSON.stringify(v) ?? 'null';
    };
    fc.assert(fc.property(fc.jsonValue(), (v) => { expect(canonicalJson(v)).toBe(reference(v)); }), { numRuns: 2_000 });
    // a body nested 97 deep around a long string: one join, not one a level (each copied the text inside it again)
    let deep: unknown = 'x'.repeat(100_000);
    for (let i = 0; i < 97; i++) deep = i % 2 ? [0, deep] : { a: 0, b: deep };
    const joins = vi.spyOn(Array.prototype, 'join');
    let text = '';
    try {
      text = canonicalJson(deep);
      expect(joins.mock.calls.length).toBeLessThan(5);
    } finally { joins.mockRestore(); }
    expect(text).toBe(reference(deep));
  });
});

