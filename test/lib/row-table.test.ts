import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RowTable } from '../../src/lib/row-table.js';
import { hashString } from '../../src/lib/text-column.js';

/** Keys held by rows, as the replica's columns hold them; the table only holds row numbers. */
function table(hash: (s: string) => number = hashString) {
  const keys: string[] = [];
  let calls = 0;
  const t = new RowTable<string>((row) => hash(keys[row] as string), (row, k) => {
    calls++;
    return keys[row] === k;
  });
  const put = (k: string) => {
    keys.push(k);
    t.add(hash(k), keys.length - 1);
  };
  const find = (k: string) => t.find(hash(k), k);
  return { t, keys, put, find, calls: () => calls };
}

describe('RowTable', () => {
  it('finds every row by its key through growth, and misses unknown keys', () => {
    const h = table();
    for (let i = 0; i < 5000; i++) h.put(`rend_${i.toString(16).padStart(20, '0')}`);
    expect(h.t.size).toBe(5000);
    for (let i = 0; i < 5000; i++) expect(h.find(`rend_${i.toString(16).padStart(20, '0')}`)).toBe(i);
    expect(h.find('rend_x')).toBe(-1);
    expect(h.t.bytes).toBeLessThanOrEqual(5000 * 4 * 4); // a few Int32 slots a row, no object a key
  });

  it('tells colliding keys apart (every key with the same hash)', () => {
    const h = table(() => 7);
    const keys = ['Ünïcødé Café 🎬', 'emoji 🚀✨ render', 'a', 'b', 'c', ''];
    keys.forEach((k) => h.put(k));
    keys.forEach((k, i) => expect(h.find(k)).toBe(i));
    expect(h.find('d')).toBe(-1);
  });

  it('removes rows (a removed slot is probed past, then reused) and forgets everything on clear', () => {
    const h = table(() => 1);
    ['a', 'b', 'c'].forEach((k) => h.put(k));
    expect(h.t.remove(1, 0)).toBe(true);
    expect(h.t.remove(1, 0)).toBe(false);
    expect(h.find('a')).toBe(-1);
    expect(h.find('c')).toBe(2); // found past the removed slot
    h.put('d');
    expect(h.find('d')).toBe(3);
    expect(h.t.size).toBe(3);
    h.t.clear();
    expect(h.find('c')).toBe(-1);
    expect(h.t.size).toBe(0);
  });

  it('asks the key test rarely: a look-up compares a few rows, not a scan; trim keeps every row findable in fewer slots', () => {
    const h = table();
    for (let i = 0; i < 20_000; i++) h.put(`k${i}`);
    let before = h.calls();
    for (let i = 0; i < 20_000; i++) h.find(`k${i}`);
    expect(h.calls() - before).toBeLessThan(20_000 * 3);
    const bytes = h.t.bytes;
    h.t.trim();
    expect(h.t.bytes).toBeLessThanOrEqual(bytes);
    expect(h.t.bytes).toBeLessThanOrEqual(Math.ceil(20_000 / 0.7) * 4 + 64);
    before = h.calls();
    for (let i = 0; i < 20_000; i++) expect(h.find(`k${i}`)).toBe(i);
    expect(h.calls() - before).toBeLessThan(20_000 * 3);
    h.put('after trim');
    expect(h.find('after trim')).toBe(20_000);
  });

  it('answers as a Map over any adds and removes (removal and re-adding churn included), hashes kept or not', () => {
    fc.assert(fc.property(fc.array(fc.tuple(fc.boolean(), fc.nat(60)), { maxLength: 500 }), fc.boolean(), (ops, keep) => {
      const keys: (string | null)[] = [];
      const t = new RowTable<string>((row) => hashString(keys[row] as string) & 3, (row, k) => keys[row] === k, keep);
      const m = new Map<string, number>();
      for (const [add, n] of ops) {
        const k = `key${n}`;
        const at = m.get(k);
        if (add && at === undefined) {
          keys.push(k);
          t.add(hashString(k) & 3, keys.length - 1);
          m.set(k, keys.length - 1);
        } else if (!add && at !== undefined) {
          expect(t.remove(hashString(k) & 3, at)).toBe(true);
          keys[at] = null;
          m.delete(k);
        }
      }
      expect(t.size).toBe(m.size);
      for (let n = 0; n <= 60; n++) expect(t.find(hashString(`key${n}`) & 3, `key${n}`)).toBe(m.get(`key${n}`) ?? -1);
      t.trim();
      for (let n = 0; n <= 60; n++) expect(t.find(hashString(`key${n}`) & 3, `key${n}`)).toBe(m.get(`key${n}`) ?? -1);
    }));
  });

  it('with kept hashes, grows and trims without asking a row its hash again (4 bytes a row more)', () => {
    const keys: string[] = [];
    let asked = 0;
    const t = new RowTable<string>((row) => { asked++; return hashString(keys[row] as string); }, (row, k) => keys[row] === k, true);
    for (let i = 0; i < 50_000; i++) {
      keys.push(`rend_${i}`);
      t.add(hashString(`rend_${i}`), i);
    }
    t.trim();
    expect(asked).toBe(0);
    for (let i = 0; i < 50_000; i += 7) expect(t.find(hashString(`rend_${i}`), `rend_${i}`)).toBe(i);
    expect(t.bytes).toBeLessThanOrEqual(Math.ceil(50_000 / 0.7) * 4 + 64 + 50_000 * 4 + 64);
  });
});
