import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TimeColumn } from '../../src/lib/time-column.js';

describe('TimeColumn', () => {
  it('holds seconds as 4-byte offsets, NaN as none, and reads them back exactly', () => {
    const c = new TimeColumn(8);
    const times = [1_750_000_000, 1_750_000_001, 1_600_000_000, Number.NaN, 1_900_000_000];
    times.forEach((t, i) => c.set(i, t));
    times.forEach((t, i) => expect(Object.is(c.get(i), t)).toBe(true));
    expect(c.width).toBe(4);
    expect(Number.isNaN(c.get(7))).toBe(true); // never set: none
  });

  it('widens to Float64 for good at a time an offset cannot hold, keeping every earlier value', () => {
    for (const odd of [1_750_000_000_123.5, 1_750_000_000 + 2 ** 31, 1_750_000_000 - 2 ** 31, -0, Number.POSITIVE_INFINITY]) {
      const c = new TimeColumn(4);
      c.set(0, 1_750_000_000);
      c.set(1, Number.NaN);
      c.set(2, odd);
      expect(c.width).toBe(8);
      expect(c.get(0)).toBe(1_750_000_000);
      expect(Number.isNaN(c.get(1))).toBe(true);
      expect(Object.is(c.get(2), odd)).toBe(true);
      c.resize(16, 3);
      expect(Object.is(c.get(2), odd)).toBe(true);
      expect(Number.isNaN(c.get(9))).toBe(true);
    }
  });

  it('milliseconds within a few weeks stay 4 bytes; any numbers read back as written', () => {
    const ms = new TimeColumn(4);
    ms.set(0, 1_750_000_000_000);
    ms.set(1, 1_750_000_000_000 + 20 * 86_400_000);
    expect(ms.width).toBe(4);
    expect(ms.get(1)).toBe(1_750_000_000_000 + 20 * 86_400_000);
    fc.assert(fc.property(fc.array(fc.oneof(fc.double(), fc.integer(), fc.constant(Number.NaN)), { maxLength: 50 }), (xs) => {
      const c = new TimeColumn(2);
      xs.forEach((x, i) => {
        if (i >= c.length) c.resize(c.length * 2, i);
        c.set(i, x);
      });
      xs.forEach((x, i) => expect(Object.is(c.get(i), x)).toBe(true));
    }));
  });
});
