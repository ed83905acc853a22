import { describe, expect, it } from 'vitest';
import { DataAtHand, READ_SLICE_CHARS, readMissed, type RenderDataReader } from '../../src/translate/data-at-hand.js';

/** A reader over `sizes` (id → stored characters) that records each read and the turns of the event loop between them. */
function reader(sizes: Record<string, number>) {
  const reads: { ids: string[]; turn: number }[] = [];
  let turn = 0;
  let ticking = true;
  const tick = () => { if (!ticking) return; turn++; setImmediate(tick); };
  setImmediate(tick);
  const from: RenderDataReader = {
    sizes: async (ids) => new Map(ids.filter((id) => id in sizes).map((id) => [id, sizes[id]!])),
    many: async (ids) => {
      reads.push({ ids: [...ids], turn });
      return new Map(ids.filter((id) => id in sizes).map((id) => [id, { of: id }]));
    },
  };
  return { from, reads, stop: () => { ticking = false; } };
}

function missing(ids: readonly string[]): DataAtHand {
  const hand = new DataAtHand();
  for (const id of ids) hand.get(id);
  return hand;
}

describe('render data read into a hand (attack pass 10, M: 16 MB read and parsed in one turn held every other request)', () => {
  it('data past a slice is read a slice at a time, by stored size, a turn of the event loop between reads; every render is filled', async () => {
    const third = Math.floor(READ_SLICE_CHARS / 3);
    const sizes: Record<string, number> = { a: third, b: third, c: third, d: third, big: 3 * READ_SLICE_CHARS, e: third };
    const ids = ['a', 'b', 'c', 'd', 'big', 'e', 'none'];
    const { from, reads, stop } = reader(sizes);
    const hand = missing(ids);
    try {
      expect(await readMissed(hand, from)).toBe(true);
    } finally {
      stop();
    }
    // a, b, c fit one slice; d alone (big would pass it); big alone (one row at least); e and none
    expect(reads.map((r) => r.ids)).toEqual([['a', 'b', 'c'], ['d'], ['big'], ['e', 'none']]);
    for (let i = 1; i < reads.length; i++) expect(reads[i]!.turn).toBeGreaterThan(reads[i - 1]!.turn);
    for (const id of ids.filter((x) => x !== 'none')) expect(hand.get(id)).toEqual({ of: id });
    expect(hand.get('none')).toEqual({});
    expect(hand.bytes).toBe(4 * third + 3 * READ_SLICE_CHARS + third);
  });

  it('data within a slice is one read', async () => {
    const { from, reads, stop } = reader({ a: 10, b: 20 });
    try {
      await readMissed(missing(['a', 'b']), from);
    } finally {
      stop();
    }
    expect(reads.map((r) => r.ids)).toEqual([['a', 'b']]);
  });
});
