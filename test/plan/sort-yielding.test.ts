import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sortYielding } from '../../src/plan/sort-yielding.js';

describe('sortYielding', () => {
  it('sorts exactly as a stable sort does, small and large', async () => {
    await fc.assert(fc.asyncProperty(fc.array(fc.tuple(fc.integer({ min: 0, max: 50 }), fc.nat()), { maxLength: 40_000 }), async (xs) => {
      const cmp = (a: [number, number], b: [number, number]) => a[0] - b[0];
      expect(await sortYielding([...xs], cmp)).toEqual([...xs].sort(cmp));
    }), { numRuns: 25 });
  });
  it('gives the event loop turns while sorting a large array', async () => {
    let turns = 0;
    const tick = setInterval(() => { turns++; }, 0);
    const xs = Array.from({ length: 100_000 }, (_, i) => (i * 7919) % 100_003);
    const sorted = await sortYielding(xs, (a, b) => a - b);
    clearInterval(tick);
    expect(sorted[0]).toBe(0);
    expect(sorted.every((x, i) => i === 0 || sorted[i - 1]! <= x)).toBe(true);
    expect(turns).toBeGreaterThan(0);
  });
});
