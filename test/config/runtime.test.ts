import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { applyRuntimeSettings } from '../../src/config/runtime.js';
import { loadConfig } from '../../src/config/schema.js';

/**
 * A child process that keeps ~30 MB live and churns garbage that lives long enough to be promoted
 * (as entries waiting in merge buffers do), after applying the runtime settings; prints its peak heap.
 */
const CHURN = `
  const { applyRuntimeSettings } = await import(${JSON.stringify(new URL('../../src/config/runtime.ts', import.meta.url).href)});
  applyRuntimeSettings({ HEAP_GROWTH_PERCENT: Number(process.env.PCT) });
  const live = Array.from({ length: 200000 }, (_, i) => ({ i, s: 'live-' + i }));
  let peak = 0;
  let window = [];
  for (let i = 0; i < 3000000; i++) {
    window.push({ i, s: 'entry-' + i });
    if (window.length === 100000) window = [];
    if (i % 1000 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
  }
  process.stdout.write(String(Math.round(peak / 1048576) + live.length * 0));
`;
const peakHeapMb = (pct: number) => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHURN], { env: { ...process.env, PCT: String(pct) }, encoding: 'utf8' });
  expect(r.stderr).not.toMatch(/unrecognized flag/i); // the flag exists in this Node's V8
  expect(r.status).toBe(0);
  return Number(r.stdout);
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
    expect(peakHeapMb(25)).toBeGreaterThan(20); // ran, with the live set really there, and no unrecognised-flag warning
  });
});
