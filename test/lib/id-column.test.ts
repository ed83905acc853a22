import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IdColumn } from '../../src/lib/id-column.js';

describe('IdColumn', () => {
  it('packs prefixed lowercase hex ids to a byte a digit pair, and gives every id back exactly', () => {
    const c = new IdColumn();
    const ids = Array.from({ length: 1000 }, (_, i) => `rend_${(i * 2654435761).toString(16).padStart(20, '0').slice(-20)}`);
    for (const id of ids) c.push(id);
    ids.forEach((id, i) => expect(c.get(i)).toBe(id));
    c.trim();
    ids.forEach((id, i) => expect(c.get(i)).toBe(id));
    expect(c.bytes).toBeLessThan(1000 * (11 + 4) + 8192); // 25 characters held in 11 bytes and one offset (+ a block part-filled)
  });

  it('keeps any other id as it is: odd digits, capitals, no prefix, Latin-1, emoji, lone surrogates, empty', () => {
    const odd = ['rend_abc', 'rend_ABCD', 'abcd', '_ab', 'a_b_0f', 'Ünï_00ff', '日本_00', 'x🎬_12', 'lone\ud800_aa', '', 'rend_'];
    const c = new IdColumn();
    for (const id of odd) c.push(id);
    odd.forEach((id, i) => expect(c.get(i)).toBe(id));
  });

  it('holds any strings in order, as an array would', () => {
    fc.assert(fc.property(fc.array(fc.oneof(fc.string({ unit: 'binary' }), fc.stringMatching(/^[a-z]{1,6}_([0-9a-f]{2}){1,12}$/)), { maxLength: 300 }), (ids) => {
      const c = new IdColumn();
      ids.forEach((id, i) => expect(c.push(id)).toBe(i));
      c.trim();
      ids.forEach((id, i) => expect(c.get(i)).toBe(id));
    }));
  });
});
