import { describe, expect, it } from 'vitest';
import { Compare, FieldRef } from '../../src/query/ast.js';
import { compileFilter } from '../../src/query/compile.js';
import type { Operator, ResourceSchema } from '../../src/query/schema.js';
import { TextColumn } from '../../src/lib/text-column.js';
import { textTest } from '../../src/replica/team/column-text.js';
import { MARKS_KEPT_BYTES, TextWork } from '../../src/query/like.js';
import { vi } from 'vitest';
import { schemas } from '../query/fixtures.js';

/**
 * Every text operator on the kept bytes against the record path's own comparison, over every pair of a title and a value
 * from one set: titles kept one byte a character and as UTF-16, empty and null; values equal to whole titles, their
 * starts, ends and middles, in other cases, and characters whose lower case is past (or back into) Latin-1.
 */
const render = schemas.render as ResourceSchema;
const TITLES = [
  null, '', 'a', 'A', 'alpha', 'Alpha', 'ALPHA', 'beta', 'Beta ß', 'ÉTÉ', 'été', 'ÿ', '\u0178', 'İstanbul', 'istanbul', 'ıi', 'ΣΑΣ', 'σας',
  '\u212aelvin', 'kelvin', 'x😀y', '😀', 'a-b a', 'aaa', 'ab', 'ba',
];
const VALUES = [
  'a', 'A', 'alpha', 'ALPHA', 'lph', 'ha', 'al', 'alphas', 'ß', 'SS', 'é', 'É', 'ÿ', '\u0178', 'i̇', '\u0130', 'ı', 'i', 'σ', 'Σ', 'ς', 'k', 'K', '\u212a',
  '😀', 'x😀', ' a', 'aa', 'b', 'ba', 'Beta ß', 'été',
];
const OPS: Operator[] = ['_eq', '_neq', '_contains', '_ncontains', '_icontains', '_starts_with', '_nstarts_with', '_istarts_with', '_nistarts_with',
  '_ends_with', '_nends_with', '_iends_with', '_niends_with'];

describe('text comparisons on the kept bytes', () => {
  const texts = new TextColumn();
  TITLES.forEach((t, row) => texts.set(row, t));
  const rows = TITLES.map((_, row) => row);
  const check = (node: ReturnType<typeof Compare.create>) => {
    const leaf = compileFilter(node, render, schemas, { one: () => undefined, many: () => [] });
    const test = textTest(node, 'title', texts, leaf);
    const got = rows.map((row) => test(row));
    expect(got, JSON.stringify(node)).toEqual(TITLES.map((title) => leaf({ title })));
    return got;
  };

  it('answers each operator and value on every title as the record path does (and each answer both ways somewhere)', () => {
    for (const op of OPS) {
      const seen = new Set<boolean>();
      for (const v of VALUES) for (const a of check(Compare.create(FieldRef.create(['title']), op, v))) seen.add(a);
      expect([...seen].sort(), op).toEqual([false, true]);
    }
  });

  it('answers lists, emptiness and nullness as the record path does', () => {
    for (const op of ['_in', '_nin'] as const) {
      const seen = new Set<boolean>();
      for (const list of [['alpha'], ['alpha', 'ÉTÉ', '😀'], ['Alpha', null], ['nothing'], ['x😀y', 'ΣΑΣ', 'a']]) {
        for (const a of check(Compare.create(FieldRef.create(['title']), op, list))) seen.add(a);
      }
      expect([...seen].sort(), op).toEqual([false, true]);
    }
    for (const op of ['_null', '_nnull', '_empty', '_nempty'] as const) for (const v of [true, false]) check(Compare.create(FieldRef.create(['title']), op, v));
  });

  it('reads a Latin-1 row without making its string', () => {
    const node = Compare.create(FieldRef.create(['title']), '_icontains', 'LPH');
    const leaf = compileFilter(node, render, schemas, { one: () => undefined, many: () => [] });
    const test = textTest(node, 'title', texts, leaf);
    const get = texts.get;
    let made = 0;
    texts.get = function (row: number) {
      made++;
      return get.call(this, row);
    };
    try {
      const latin1 = TITLES.flatMap((t, row) => (t !== null && [...t].every((c) => c.charCodeAt(0) < 256) ? [row] : []));
      expect(latin1.map((row) => test(row)).filter(Boolean).length).toBe(3); // alpha, Alpha, ALPHA
      expect(made).toBe(0);
    } finally {
      texts.get = get;
    }
  });

  it('keeps the marks of whole-column searches up to MARKS_KEPT_BYTES a request, its other terms answered row by row alike', () => {
    // (review of 84e22ce, H2: each term kept a byte a row — 2 000 terms over 100 000 titles held 206 MB)
    const big = new TextColumn();
    const n = 20_000;
    const titles = Array.from({ length: n }, (_, i) => `t${i % 997} alpha ${i}`);
    titles.forEach((t, row) => big.set(row, t));
    const work = new TextWork();
    const searched = vi.spyOn(TextColumn.prototype, 'containing');
    try {
      for (let k = 0; k < 220; k++) {
        const node = Compare.create(FieldRef.create(['title']), '_contains', `t${k} `);
        const leaf = compileFilter(node, render, schemas, { one: () => undefined, many: () => [] });
        const all = textTest(node, 'title', big, leaf, work).all!(n);
        const want = titles.map((t) => t.includes(`t${k} `));
        expect([...all].map((a) => a === 1), `t${k}`).toEqual(want);
      }
      // as many searches as their marks fit in the bytes (20 000 a search), not one a term
      expect(searched.mock.calls.length).toBe(Math.floor(MARKS_KEPT_BYTES / n));
    } finally {
      searched.mockRestore();
    }
  });
});
