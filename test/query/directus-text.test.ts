import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Compare, FieldRef } from '../../src/query/ast.js';
import { compileFilter } from '../../src/query/compile.js';
import { compileSearch } from '../../src/query/search.js';
import { parseQuery } from '../../src/query/parse-query.js';
import type { Operator, ResourceSchema } from '../../src/query/schema.js';
import { TextColumn } from '../../src/lib/text-column.js';
import { textTest } from '../../src/replica/team/column-text.js';
import { ctx, schemas } from './fixtures.js';

/**
 * Every text operator and `search` against what a real Directus 10.10 on PostgreSQL answered for the same titles and
 * values (recorded by scripts/capture-directus-text.mjs on the oracle): LIKE's `%`, `_` and `\` in a value, the column
 * folded by PostgreSQL (`ΣΑΣ` is `σασ`, `İ` is `i`, `ẞ` is `ß`, `ǅ` is `ǆ`), the value by JavaScript (`ΑΣ` is `ας`, `İ`
 * is `i̇`). Held on the record path, on the replica's title column, and as a 400 where Directus answers 500.
 */
interface Answer { kind: 'filter' | 'search'; op: string; value: string; rows?: number[]; status?: number }
const fixture = JSON.parse(readFileSync('test/fixtures/directus/text-answers.json', 'utf8')) as { titles: (string | null)[]; answers: Answer[] };
const { titles, answers } = fixture;
const render = schemas.render as ResourceSchema;
// the oracle's collection: an integer id (1, 2, … in the order written) and a string title
const texts: ResourceSchema = { key: 'text', name: 'texts', defaultSort: ['id'], fields: { id: { name: 'id', type: 'integer' }, title: { name: 'title', type: 'string' } } };
const records = titles.map((title, i) => ({ id: i + 1, title }));
const rowsOf = (test: (i: number) => boolean) => titles.flatMap((_, i) => (test(i) ? [i] : []));
const NO_LOOKUP = { one: () => undefined, many: () => [] };

describe('text operators and search as Directus 10.10 on PostgreSQL answers them', () => {
  it('the fixture exercises them: many answers, each operator matching some titles and not others, wildcards and case folding met', () => {
    expect(answers.length).toBeGreaterThan(700);
    for (const op of new Set(answers.map((a) => a.op))) {
      const sizes = answers.filter((a) => a.op === op && a.rows).map((a) => a.rows!.length);
      expect(Math.max(...sizes), op).toBeGreaterThan(0);
      expect(Math.min(...sizes), op).toBeLessThan(titles.length - 1);
    }
    const rows = (op: string, value: string) => answers.find((a) => a.op === op && a.value === value)?.rows?.map((i) => titles[i]);
    expect(rows('_contains', 'r_nder')).toEqual(['render_1', 'render 1']);
    expect(rows('_icontains', 'ΑΣ')).toEqual(['σας']);
    expect(rows('_icontains', 'i')).toContain('İstanbul');
  });

  it('the record path answers each exactly', () => {
    for (const a of answers.filter((x) => x.rows)) {
      const p = a.kind === 'search' ? compileSearch(a.value, texts)
        : compileFilter(Compare.create(FieldRef.create(['title']), a.op as Operator, a.value), texts, {}, NO_LOOKUP);
      expect(rowsOf((i) => p(records[i]!)), `${a.op} ${JSON.stringify(a.value)}`).toEqual(a.rows);
    }
  });

  it("the replica's title column answers each filter exactly (Latin-1 rows on their bytes, the others as strings)", () => {
    const column = new TextColumn();
    titles.forEach((t, row) => column.set(row, t));
    for (const a of answers.filter((x) => x.rows && x.kind === 'filter')) {
      const node = Compare.create(FieldRef.create(['title']), a.op as Operator, a.value);
      const test = textTest(node, 'title', column, compileFilter(node, render, schemas, NO_LOOKUP));
      expect(rowsOf((row) => test(row)), `${a.op} ${JSON.stringify(a.value)}`).toEqual(a.rows);
    }
  });

  it('a value ending a LIKE pattern with its escape character is a 400 naming it (Directus: a 500 from PostgreSQL)', () => {
    const refused = answers.filter((a) => a.status);
    expect(refused.map((a) => [a.op, a.value, a.status])).toEqual([
      ['_ends_with', '\\', 500], ['_nends_with', '\\', 500], ['_iends_with', '\\', 500], ['_niends_with', '\\', 500],
    ]);
    for (const a of refused) {
      expect(() => parseQuery({ filter: JSON.stringify({ title: { [a.op]: `x${a.value}` } }) }, render, ctx()), a.op).toThrow(
        expect.objectContaining({ code: 'INVALID_QUERY', messages: [expect.stringMatching(/ends with the escape character "\\": double it/)] }),
      );
    }
    // doubled, it is a backslash looked for
    expect(parseQuery({ filter: JSON.stringify({ title: { _ends_with: 'x\\\\' } }) }, render, ctx()).filter).not.toBeNull();
  });
});

describe('a LIKE pattern is matched without backtracking', () => {
  it('a pattern of many % against a long title that almost matches is answered (a regular expression took forever)', async () => {
    const { likeTest } = await import('../../src/query/like.js');
    const title = 'a'.repeat(250);
    expect(likeTest(`${'%a'.repeat(40)}%b`)(title)).toBe(false);
    expect(likeTest(`${'%a'.repeat(40)}%`)(title)).toBe(true);
    expect(likeTest(`${'%_'.repeat(60)}%b`)(title)).toBe(false);
    expect(likeTest('%\\%%')('100%')).toBe(true);
    expect(likeTest('a%%b')('ab')).toBe(true);
  });
});

describe('a LIKE test bounded in work', () => {
  it('a long pattern that goes back over long titles is refused as too costly (a 400), a wildcard value of ordinary size answers', async () => {
    const { likeTest, LIKE_EXTRA_STEPS } = await import('../../src/query/like.js');
    const title = 'a'.repeat(10_000);
    const costly = likeTest(`%${'a'.repeat(5_000)}b%`);
    let thrown: unknown;
    try {
      for (let i = 0; i < 5 && !thrown; i++) costly(title);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toMatchObject({ code: 'INVALID_QUERY', messages: [expect.stringMatching(/too costly to look for/)] });
    expect(LIKE_EXTRA_STEPS).toBeLessThan(5 * 5_000 * 5_000);
    // the usual: 100 000 titles, a value with a wildcard, answered
    const usual = likeTest('%render_7%');
    let n = 0;
    for (let i = 0; i < 100_000; i++) if (usual(`Holiday render ${i} of the summer`)) n++;
    expect(n).toBe(11_111);
  });
});

describe('a request\'s text tests walk a bounded number of characters, on records too', () => {
  it('many terms met nowhere over long titles, with or without a wildcard: too costly together (attack pass 20, N1)', async () => {
    const { compileFilter } = await import('../../src/query/compile.js');
    const { TextWork, TEXT_WALK_STEPS } = await import('../../src/query/like.js');
    const { loadMappings } = await import('../../src/config/mappings.js');
    const { schemas } = loadMappings('mappings');
    const lookup = { one: () => undefined, many: () => [] };
    const records = Array.from({ length: 1_400 }, (_, i) => ({ id: `r${i}`, title: 'a'.repeat(250) }));
    for (const value of [(i: number) => `bz${i}`, (i: number) => `b_${i}`]) {
      const filter = { kind: 'Or', children: Array.from({ length: 400 }, (_, i) => ({ kind: 'Compare', field: { path: ['title'] }, op: '_contains', value: value(i) })) };
      expect(400 * 1_400 * 250).toBeGreaterThan(TEXT_WALK_STEPS);
      const test = compileFilter(filter as never, schemas.render!, schemas, lookup, new TextWork());
      expect(() => { for (const r of records) test(r); }, value(0)).toThrow(/too costly to look for/);
      // one term: answered
      const one = compileFilter(filter.children[0] as never, schemas.render!, schemas, lookup, new TextWork());
      expect(records.filter(one)).toEqual([]);
    }
  });
});
