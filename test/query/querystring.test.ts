import { describe, expect, it } from 'vitest';
import { MAX_CONTAINERS, PARAMETER_LIMIT, parseQueryString, QueryTooLarge } from '../../src/query/querystring.js';
import { prototypeQueries } from '../helpers/prototype-keys.js';

const MEMBERS = Object.getOwnPropertyNames(Object.prototype);
const FUNCTION_MEMBERS = Object.getOwnPropertyNames(Function.prototype);

/** Every own property of the shared prototypes, with its descriptor's value identity. */
function snapshot(): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const proto of [Object.prototype, Function.prototype, Array.prototype, String.prototype]) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const d = Object.getOwnPropertyDescriptor(proto, name)!;
      out.set(`${proto === Object.prototype ? 'O' : proto === Function.prototype ? 'F' : proto === Array.prototype ? 'A' : 'S'}.${name}`, d.value ?? d.get);
      if (typeof d.value === 'function') for (const k of Object.keys(d.value)) out.set(`${name}#${k}`, (d.value as Record<string, unknown>)[k]);
    }
  }
  return out;
}

describe('parseQueryString', () => {
  it('treats every Object.prototype member name as an ordinary own key and never touches a shared prototype', () => {
    const before = snapshot();
    for (const name of [...MEMBERS, ...FUNCTION_MEMBERS, 'length', 'name', 'caller']) {
      for (const qs of prototypeQueries(name)) {
        const parsed = parseQueryString(qs);
        // every container is a null-prototype object or an array: no inherited member is visible
        const walk = (v: unknown): void => {
          if (Array.isArray(v)) { v.forEach(walk); return; }
          if (v && typeof v === 'object') {
            expect(Object.getPrototypeOf(v)).toBeNull();
            for (const k of Object.keys(v)) walk((v as Record<string, unknown>)[k]);
            return;
          }
          expect(typeof v).toBe('string');
        };
        walk(parsed);
      }
    }
    expect(snapshot()).toEqual(before);
  });

  it('keeps the member name as data where it is not one of the dropped keys', () => {
    expect(parseQueryString('a[toString][name]=x')).toEqual({ a: { toString: { name: 'x' } } });
    expect(parseQueryString('a[hasOwnProperty]=1').a).toEqual({ hasOwnProperty: '1' });
    expect(parseQueryString('valueOf=2').valueOf).toBe('2');
    expect(Object.keys(parseQueryString('a[__proto__][x]=1&constructor[prototype][y]=2'))).toEqual(['a']);
  });

  it('still reads Directus bracket forms', () => {
    expect(parseQueryString('filter[a][_eq]=x&fields[]=a&fields[]=b&aggregate[count]=*')).toEqual({
      filter: { a: { _eq: 'x' } }, fields: ['a', 'b'], aggregate: { count: '*' },
    });
    expect(parseQueryString('a[0]=x&a[1]=y&a[30]=z')).toEqual({ a: { 0: 'x', 1: 'y', 30: 'z' } });
    expect(parseQueryString('a=1&a=2&a=3')).toEqual({ a: ['1', '2', '3'] });
    expect(parseQueryString('a[b]=1&a=2')).toEqual({ a: { b: '1' } });
    // arrays are compacted once everything is read, as qs does: gaps in indexes leave no holes
    expect(parseQueryString('filter[status][_in][1]=complete')).toEqual({ filter: { status: { _in: ['complete'] } } });
    expect(parseQueryString('a[3]=y&a[1]=x')).toEqual({ a: ['x', 'y'] });
    expect(parseQueryString('a[b][2]=z&a[b][0]=w')).toEqual({ a: { b: ['w', 'z'] } });
    // `[]` appends past 20 too (Directus 10.10 filters by all 25 `filter[id][_in][]=` values: the oracle, 2026-11-30; it
    // was an object of 21 indexes and a '' key holding the rest — a 400 "has to be an array of values")
    const many = Array.from({ length: 25 }, (_, i) => `filter[id][_in][]=v${i}`).join('&');
    expect(parseQueryString(many)).toEqual({ filter: { id: { _in: Array.from({ length: 25 }, (_, i) => `v${i}`) } } });
  });

});

describe('what a query string may make (attack pass 26, F-A)', () => {
  /** `n` parameters each nesting `depth` objects under its own root (`0[a][b]…=1&1[a][b]…=1`). */
  const nested = (n: number, depth: number) =>
    Array.from({ length: n }, (_, i) => `${i}${'abcdefghij'.slice(0, depth).split('').map((c) => `[${c}]`).join('')}=1`).join('&');

  it('reads the first 1 000 parameters and ignores the rest, as qs (Directus\'s parser) does', () => {
    const q = Array.from({ length: PARAMETER_LIMIT + 5 }, (_, i) => `p${i}=${i}`).join('&');
    const out = parseQueryString(q);
    expect(Object.keys(out)).toHaveLength(PARAMETER_LIMIT);
    expect(out[`p${PARAMETER_LIMIT - 1}`]).toBe(String(PARAMETER_LIMIT - 1));
    expect(out[`p${PARAMETER_LIMIT}`]).toBeUndefined();
  });

  it('refuses a query that would make more than MAX_CONTAINERS objects and lists: 15 KB made 4 500 (750 KB) before', () => {
    const attack = nested(500, 8);
    expect(attack.length).toBeLessThan(16_000);
    expect(() => parseQueryString(attack)).toThrow(QueryTooLarge);
    // at the bound it is read
    const at = nested(MAX_CONTAINERS / 4, 4);
    expect(Object.keys(parseQueryString(at))).toHaveLength(MAX_CONTAINERS / 4);
    expect(() => parseQueryString(`${at}&x[y]=1`)).toThrow(QueryTooLarge);
  });

  it('reads what real clients send well within it: a filter of 200 branches, a long _in list, deep fields', () => {
    const or = Array.from({ length: 200 }, (_, i) => `filter[_or][${i}][title][_eq]=t${i}`).join('&');
    // (indexes past 20 make an object keyed by position, as qs's arrayLimit does)
    expect(Object.keys((parseQueryString(or).filter as { _or: object })._or)).toHaveLength(200);
    const inList = `filter[id][_in]=${Array.from({ length: 5_000 }, (_, i) => i).join(',')}`;
    expect((parseQueryString(inList).filter as any).id._in.split(',')).toHaveLength(5_000);
    expect(parseQueryString('deep[a][b][c][d][e][f][g][h][_limit]=1').deep).toBeDefined();
  });
});
