import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JQ_TEXT } from '../../src/migrate/snippet-curl.js';
import { JQ_LIKE, NODE_LIKE, PY_LIKE } from '../../src/migrate/snippet-like.js';

/**
 * The text test each snippet language carries (`like`), run in node, python3 and jq over what a real Directus 10.10 on
 * PostgreSQL answered (test/fixtures/directus/text-answers.json): LIKE's `%`, `_` and `\`, PostgreSQL's folding of the
 * title and JavaScript's of the value — 620 answers, every text operator and search.
 */
interface Answer { kind: string; op: string; value: string; rows?: number[] }
const fixture = JSON.parse(readFileSync('test/fixtures/directus/text-answers.json', 'utf8')) as { titles: (string | null)[]; answers: Answer[] };
const RULES: Record<string, [string, boolean, boolean]> = {
  _contains: ['in', false, false], _ncontains: ['in', false, true], _icontains: ['in', true, false], _starts_with: ['start', false, false],
  _nstarts_with: ['start', false, true], _istarts_with: ['start', true, false], _nistarts_with: ['start', true, true], _ends_with: ['end', false, false],
  _nends_with: ['end', false, true], _iends_with: ['end', true, false], _niends_with: ['end', true, true], search: ['in', true, false],
};
const cases = fixture.answers.filter((a) => a.rows && RULES[a.op]).map((a) => ({ rule: RULES[a.op]!, value: a.value, rows: a.rows! }));
const dir = mkdtempSync(join(tmpdir(), 'snippet-like-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'cases.json'), JSON.stringify({ titles: fixture.titles, cases }));
describe('the snippets\' text test, run in each language against the oracle', () => {
  it('the cases exercise it: every rule, wildcards, folds, and both answers', () => {
    expect(cases.length).toBeGreaterThan(600);
    expect(new Set(cases.map((c) => c.rule.join()))).toHaveProperty('size', 11);
    expect(cases.some((c) => c.value.includes('_') && c.rows.length > 0)).toBe(true);
  });

  it('node', () => {
    const like = new Function(`${NODE_LIKE.join('\n')}\nreturn like;`)() as (t: string, v: string, at: string, ci: boolean) => boolean;
    for (const c of cases) {
      const [at, ci, neg] = c.rule;
      const got = fixture.titles.flatMap((t, i) => (t !== null && like(t, c.value, at, ci) !== neg ? [i] : []));
      expect(got, `${c.rule.join()} ${JSON.stringify(c.value)}`).toEqual(c.rows);
    }
  });

  it('python', () => {
    const py = ['import json, re', 'def f():', ...PY_LIKE, '    return like', 'like = f()', `d = json.load(open(${JSON.stringify(join(dir, 'cases.json'))}))`,
      'out = []', "for c in d['cases']:", "    at, ci, neg = c['rule']",
      "    out.append([i for i, t in enumerate(d['titles']) if t is not None and like(t, c['value'], at, ci) != neg])", 'print(json.dumps(out))'];
    writeFileSync(join(dir, 'like.py'), py.join('\n'));
    const got = JSON.parse(execFileSync('python3', [join(dir, 'like.py')], { encoding: 'utf8' })) as number[][];
    cases.forEach((c, k) => expect(got[k], `${c.rule.join()} ${JSON.stringify(c.value)}`).toEqual(c.rows));
  });

  it('node and python match without backtracking: many % against a long title that almost matches is answered', () => {
    const like = new Function(`${NODE_LIKE.join('\n')}\nreturn like;`)() as (t: string, v: string, at: string, ci: boolean) => boolean;
    const value = `${'a%'.repeat(40)}b`;
    expect(like('a'.repeat(250), value, 'in', false)).toBe(false);
    expect(like('a'.repeat(250), 'a%'.repeat(40), 'in', true)).toBe(true);
    const py = ['def f():', ...PY_LIKE, '    return like', 'like = f()', `print(like("a" * 250, ${JSON.stringify(value)}, "in", False), like("a" * 250, "a%" * 40, "in", True))`];
    writeFileSync(join(dir, 'slow.py'), py.join('\n'));
    expect(execFileSync('python3', [join(dir, 'slow.py')], { encoding: 'utf8', timeout: 20_000 }).trim()).toBe('False True');
  });

  it('jq', () => {
    const program = `${JQ_TEXT}${JQ_LIKE} .titles as $T | [.cases[] | . as $c | [range(0; $T | length) | . as $i | ` +
      'select($T[$i] != null and (($T[$i] | like($c.value; $c.rule[0]; $c.rule[1])) != $c.rule[2]))]]';
    const got = JSON.parse(execFileSync('jq', ['-c', program, join(dir, 'cases.json')], { encoding: 'utf8' })) as number[][];
    cases.forEach((c, k) => expect(got[k], `${c.rule.join()} ${JSON.stringify(c.value)}`).toEqual(c.rows));
  });
});
