import { describe, expect, it } from 'vitest';
import type { Lookup, Rec } from '../../src/query/compile.js';
import { compileCompare } from '../../src/query/compare.js';
import { parseQuery } from '../../src/query/parse-query.js';
import { runQuery } from '../../src/query/run.js';
import { ctx, schemas } from './fixtures.js';

/**
 * Every comparison operator of the legacy document on a text field, each on values that tell it from its neighbours: a
 * reference written here from the document's definitions (PostgreSQL's LIKE and ILIKE as Directus uses them) is held
 * against the compiled filter for every pair of record value and operand, on a root field and through a many-to-one
 * relation, and through the general predicate builder (compileCompare, which root fields skip for a faster path:
 * a value behind a date function or a getter uses it). A first test proves the matrix can tell every two operators apart,
 * so an operator answered as another — `_starts_with` as `_contains`, say — fails here.
 */
type Ref = (v: string | null, s: string) => boolean;
const lower = (s: string) => s.toLowerCase();
const TEXT: Record<string, Ref> = {
  _eq: (v, s) => v === s,
  _neq: (v, s) => v !== null && v !== s,
  _contains: (v, s) => v !== null && v.includes(s),
  _ncontains: (v, s) => v !== null && !v.includes(s),
  _icontains: (v, s) => v !== null && lower(v).includes(lower(s)),
  _starts_with: (v, s) => v !== null && v.startsWith(s),
  _nstarts_with: (v, s) => v !== null && !v.startsWith(s),
  _istarts_with: (v, s) => v !== null && lower(v).startsWith(lower(s)),
  _nistarts_with: (v, s) => v !== null && !lower(v).startsWith(lower(s)),
  _ends_with: (v, s) => v !== null && v.endsWith(s),
  _nends_with: (v, s) => v !== null && !v.endsWith(s),
  _iends_with: (v, s) => v !== null && lower(v).endsWith(lower(s)),
  _niends_with: (v, s) => v !== null && !lower(v).endsWith(lower(s)),
};
/** The operators whose operand is a flag or a list. */
const FLAG: Record<string, (v: string | null, on: boolean) => boolean> = {
  _null: (v, on) => (v === null) === on,
  _nnull: (v, on) => (v !== null) === on,
  _empty: (v, on) => (v === null || v === '') === on,
  _nempty: (v, on) => (v !== null && v !== '') === on,
};
const LIST: Record<string, (v: string | null, list: string[]) => boolean> = {
  _in: (v, list) => v !== null && list.includes(v),
  _nin: (v, list) => v !== null && !list.includes(v),
};

const VALUES: (string | null)[] = ['abcab', 'xabc', 'ABCd', 'bcab', 'ab', 'AB', '', null, 'Ærø abc', 'cab'];
const OPERANDS = ['ab', 'bc', 'ABC', 'abc', 'c', 'AB'];
const LISTS = [['ab', 'cab'], ['AB'], ['zzz']];

/** Renders titled with each value, each in a project of the same title (the relation's path). */
const projects: Rec[] = VALUES.map((v, i) => ({ id: `p${i}`, title: v }));
const renders: Rec[] = VALUES.map((v, i) => ({ id: `r${String(i).padStart(2, '0')}`, title: v, project: `p${i}` }));
const lookup: Lookup = {
  one: (resource, id) => (resource === 'project' ? projects.find((p) => p.id === id) : undefined),
  many: () => [],
};

/** The values (by index) the filter `{field: {op: operand}}` keeps, through the gateway's parser and compiler. */
function kept(field: 'title' | 'project.title', op: string, operand: unknown): number[] {
  const filter = field === 'title' ? { title: { [op]: operand } } : { project: { title: { [op]: operand } } };
  const q = parseQuery({ limit: '-1', sort: 'id', fields: 'id', filter: JSON.stringify(filter) }, schemas.render!, ctx());
  return runQuery(renders, q, schemas, lookup, { numericStrings: true }).data.map((x) => Number(String((x as Rec).id).slice(1)));
}
const expected = (test: (v: string | null) => boolean) => VALUES.flatMap((v, i) => (test(v) ? [i] : []));

/** The values the general predicate builder keeps, over a getter (the path a function or a relation hop reaches it by). */
function keptByGetter(op: string, operand: unknown): number[] {
  const p = compileCompare((r) => r.title, 'string', op, operand as never);
  return renders.flatMap((r, i) => (p(r) ? [i] : []));
}

describe('text operators, each told from its neighbours', () => {
  it('the values and operands tell every two text operators apart', () => {
    const answers = Object.entries(TEXT).map(([op, ref]) => [op, OPERANDS.map((s) => expected((v) => ref(v, s)).join()).join('|')] as const);
    for (const [a, x] of answers) for (const [b, y] of answers) if (a < b) expect(x, `${a} vs ${b}`).not.toBe(y);
    const flags = Object.entries(FLAG).map(([op, ref]) => [op, [true, false].map((on) => expected((v) => ref(v, on)).join()).join('|')] as const);
    for (const [a, x] of flags) for (const [b, y] of flags) if (a < b && !((a === '_nnull' && b === '_null') || (a === '_nempty' && b === '_empty'))) {
      expect(x, `${a} vs ${b}`).not.toBe(y);
    }
  });

  describe('through a getter (compileCompare)', () => {
    for (const [op, ref] of Object.entries(TEXT)) {
      it(op, () => {
        for (const s of OPERANDS) expect(keptByGetter(op, s), `${op} ${s}`).toEqual(expected((v) => ref(v, s)));
        expect(keptByGetter(op, null), `${op} null`).toEqual(op === '_neq' ? expected((v) => v !== null) : []);
      });
    }
    for (const [op, ref] of Object.entries(FLAG)) {
      it(op, () => {
        for (const on of [true, false]) expect(keptByGetter(op, on), `${op} ${on}`).toEqual(expected((v) => ref(v, on)));
      });
    }
    for (const [op, ref] of Object.entries(LIST)) {
      it(op, () => {
        for (const list of LISTS) expect(keptByGetter(op, list), `${op} ${list}`).toEqual(expected((v) => ref(v, list)));
      });
    }
  });

  for (const field of ['title', 'project.title'] as const) {
    for (const [op, ref] of Object.entries(TEXT)) {
      it(`${field} ${op}`, () => {
        for (const s of OPERANDS) expect(kept(field, op, s), `${op} ${s}`).toEqual(expected((v) => ref(v, s)));
      });
    }
    for (const [op, ref] of Object.entries(FLAG)) {
      it(`${field} ${op}`, () => {
        for (const on of [true, false]) expect(kept(field, op, on), `${op} ${on}`).toEqual(expected((v) => ref(v, on)));
      });
    }
    for (const [op, ref] of Object.entries(LIST)) {
      it(`${field} ${op}`, () => {
        for (const list of LISTS) expect(kept(field, op, list), `${op} ${list}`).toEqual(expected((v) => ref(v, list)));
      });
    }
  }
});
