import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { FilterCond } from '../../src/migrate/equivalent-model.js';
import { envName } from '../../src/migrate/snippet-curl.js';
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
    `${jsFilter(a)}\nconsole.log(JSON.stringify(out.map((x) => x.id)));\n`);
  writeFileSync(join(dir, 'step.py'), 'import json\ndef f(out, params):\n' +
    '    def val(x, path):\n        for k in path.split("."):\n            x = x.get(k) if isinstance(x, dict) else None\n        return x\n' +
    `${pyFilter(a)}\n    return out\nprint(json.dumps([x["id"] for x in f(json.loads(open("items.json").read()), json.loads(${JSON.stringify(JSON.stringify(params))}))]))\n`);
  // (the curl script's environment: text as it is, a list or null as JSON)
  const env = { ...process.env, ...Object.fromEntries(Object.entries(params).map(([k, v]) => [envName(k), typeof v === 'string' ? v : JSON.stringify(v)])) };
  const [node, python, jq] = await Promise.all([
    run('node', ['step.mjs'], { cwd: dir }), run('python3', ['step.py'], { cwd: dir }),
    run('jq', ['-c', `${jqFilter(a, (f) => `.${f}`, (p) => `$ENV.${envName(p)}`)} | map(.id)`, 'items.json'], { cwd: dir, env }),
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
    ];
    for (const [cond, value, want] of cases) {
      const got = await kept([cond], items, { [cond.param]: value });
      expect(got, `${cond.test} ${JSON.stringify(value)}`).toEqual({ node: want, python: want, jq: want });
    }
  });
});
