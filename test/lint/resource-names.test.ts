import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Issue 40: resources as a table. A comparison of a resource's name (`=== 'render'`, `case 'project'`) is a rule a new
 * resource must be found in by hand; the planner, the executor and the live source read `RESOURCE_TRAITS` and
 * exhaustive `Record`s instead (src/query/resources.ts). The count over src/ (the simulator left out: it is v1's side)
 * is the figure docs/architecture.md gives, which may only go down.
 */
const NAME = /(===|!==) '(render|project|account|template|user)'|case '(render|project|account|template|user)'/g;
const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true })
  .flatMap((e) => (e.isDirectory() ? (e.name === 'sim' ? [] : files(join(dir, e.name))) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
const count = (text: string) => [...text.matchAll(NAME)].length;

describe('resource names in the code', () => {
  const byFile = new Map(files('src').map((f) => [f, count(readFileSync(f, 'utf8'))]));

  it('are compared nowhere in the planner, the executor or the live source', () => {
    for (const f of ['src/plan/plan.ts', 'src/exec/execute.ts', 'src/exec/live-source.ts']) expect(byFile.get(f), f).toBe(0);
    // (the check reads what it counts)
    expect(count("if (resource === 'render') {} switch (x) { case 'project': }")).toBe(2);
  });

  it('are compared as often as docs/architecture.md says, in as many files', () => {
    const total = [...byFile.values()].reduce((a, b) => a + b, 0);
    const doc = readFileSync('docs/architecture.md', 'utf8').replace(/\s+/g, ' ');
    const stated = /The rest are still string checks — (\d+) comparisons of a resource's name in (\d+) files/.exec(doc);
    expect(stated).not.toBeNull();
    const counted = [...byFile.values()].filter((n) => n > 0).length;
    // (the figure is the code's: a change that removes comparisons updates it, one that adds them is refused)
    expect(total).toBe(Number(stated![1]));
    expect(counted).toBe(Number(stated![2]));
  });
});
