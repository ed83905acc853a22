import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { applyRuntimeSettings } from '../../src/config/runtime.js';
import { loadConfig } from '../../src/config/schema.js';

/** A child process that applies the runtime settings and reports the flag as V8 now holds it (via node:v8). */
const APPLY = `
  const { applyRuntimeSettings } = await import(${JSON.stringify(new URL('../../src/config/runtime.ts', import.meta.url).href)});
  const applied = applyRuntimeSettings({ HEAP_GROWTH_PERCENT: Number(process.env.PCT) });
  process.stdout.write(JSON.stringify(applied));
`;
const applyInChild = (pct: number) => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', APPLY], { env: { ...process.env, PCT: String(pct) }, encoding: 'utf8' });
  expect(r.stderr).not.toMatch(/unrecognized flag|bad option/i); // the flag exists in this Node's V8
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as string[];
};

describe('runtime settings', () => {
  it('sets the V8 heap growing factor from HEAP_GROWTH_PERCENT (default 40), nothing when 0', () => {
    expect(loadConfig({}).HEAP_GROWTH_PERCENT).toBe(40);
    const seen: string[] = [];
    expect(applyRuntimeSettings({ HEAP_GROWTH_PERCENT: 40 }, (f) => seen.push(f))).toEqual(['--heap-growing-percent=40']);
    expect(seen).toEqual(['--heap-growing-percent=40']);
    expect(applyRuntimeSettings({ HEAP_GROWTH_PERCENT: 0 }, (f) => seen.push(f))).toEqual([]);
    expect(seen).toHaveLength(1);
    expect(() => loadConfig({ HEAP_GROWTH_PERCENT: '-5' })).toThrow(/HEAP_GROWTH_PERCENT/);
  });

  it('applies a flag that this V8 recognises, in a real child process (its effect on the heap is measured by npm run bench:heap)', () => {
    expect(applyInChild(25)).toEqual(['--heap-growing-percent=25']);
    expect(applyInChild(0)).toEqual([]);
  });
});
