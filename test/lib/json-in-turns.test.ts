import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonInTurns, largeValue } from '../../src/lib/json-in-turns.js';

/** JSON.stringify's bytes, or the error it throws. */
function stringify(v: unknown): { text?: string; error?: string } {
  try {
    const t = JSON.stringify(v) as string | undefined;
    return t === undefined ? {} : { text: t };
  } catch (e) {
    return { error: (e as Error).constructor.name };
  }
}

async function inTurns(v: unknown, slice: number): Promise<{ text?: string; error?: string }> {
  try {
    const b = await jsonInTurns(v, slice);
    return b === undefined ? {} : { text: b.toString('utf8') };
  } catch (e) {
    return { error: (e as Error).constructor.name };
  }
}

describe('JSON written a slice a turn (attack pass 10, M: one 16 MB item serialised in one turn)', () => {
  it('writes exactly what JSON.stringify writes, for any value, whatever the slice', async () => {
    await fc.assert(fc.asyncProperty(fc.anything({ withDate: true, withBoxedValues: true, withNullPrototype: true, withSparseArray: true }), fc.integer({ min: 1, max: 64 }),
      async (v, slice) => { expect(await inTurns(v, slice)).toEqual(stringify(v)); }), { numRuns: 400 });
  });

  it('calls toJSON once with its key, leaves out what has no JSON, writes null for it in an array, and throws where JSON.stringify throws', async () => {
    const calls: string[] = [];
    const inner = { toJSON: () => 'inner-not-called' };
    const v = {
      a: undefined, b: () => 1, c: Symbol('s'), d: [undefined, () => 1, Symbol('t'), NaN, -0, Infinity],
      e: { toJSON(key: string) { calls.push(key); return { inner }; } },
      f: new Date(0), g: [{ toJSON(key: string) { calls.push(key); return undefined; } }], 'h"\u2028': 'é ß 😀 \u0000',
    };
    expect(await inTurns(v, 3)).toEqual(stringify(v));
    expect(calls).toEqual(['e', '0', 'e', '0']); // (each once in each writer: ours, then JSON.stringify's)
    const cycle: Record<string, unknown> = { x: 1 };
    cycle.self = { back: cycle };
    expect(await inTurns(cycle, 8)).toEqual({ error: 'TypeError' });
    expect(await inTurns({ n: 1n }, 8)).toEqual({ error: 'TypeError' });
    expect(await inTurns(undefined, 8)).toEqual({});
  });

  it('gives the event loop a turn between slices: another timer runs while a large value is written', async () => {
    const rows = Array.from({ length: 50_000 }, (_, i) => ({ n: i, name: `row ${i}`.padEnd(60, 'x'), tags: ['a', 'b'] }));
    const value = { data: { rows } };
    expect(largeValue(value)).toBe(true);
    expect(largeValue({ id: 'x', data: { rows: rows.slice(0, 10) } })).toBe(false);
    expect(largeValue({ text: 'y'.repeat(300_000) })).toBe(true);
    let ticks = 0;
    let ticking = true;
    const tick = () => { ticks++; if (ticking) setImmediate(tick); };
    setImmediate(tick);
    const bytes = await jsonInTurns(value);
    ticking = false;
    expect(bytes!.equals(Buffer.from(JSON.stringify(value)))).toBe(true);
    // (about 4.6 MB of text at 256 K characters a slice: the loop turned at least once a slice)
    expect(ticks).toBeGreaterThanOrEqual(Math.floor(bytes!.length / (256 * 1024)) - 1);
  });
});
