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
  it('sorts fewer elements a turn when comparisons are costly (a count alone held the loop a second: attack pass 17, F3)', async () => {
    // each comparison busy for 20 µs: a turn aims at a few ms, so a few hundred comparisons — not a whole slice's 48 000
    let inTurn = 0;
    let most = 0;
    let turns = 0;
    let live = true;
    const tick = () => { most = Math.max(most, inTurn); inTurn = 0; turns++; if (live) setImmediate(tick); };
    setImmediate(tick);
    const cmp = (a: number, b: number) => {
      inTurn++;
      const until = performance.now() + 0.02;
      while (performance.now() < until);
      return a - b;
    };
    const xs = Array.from({ length: 4_000 }, (_, i) => (i * 7919) % 4_001);
    const sorted = await sortYielding([...xs], cmp);
    live = false;
    most = Math.max(most, inTurn);
    expect(sorted).toEqual([...xs].sort((a, b) => a - b));
    expect(turns).toBeGreaterThan(10);
    expect(most).toBeLessThan(3_000);
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
