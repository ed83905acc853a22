import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashString, TextColumn } from '../../src/lib/text-column.js';

const LONG = 'A very long render name that keeps going '.repeat(10).slice(0, 250);
const ODD = ['', 'rend_0123456789abcdef0123', 'Ünïcødé Café 🎬', '日本語のプロジェクト', 'Ñandú «quoted» & <tags>', LONG, 'lone \ud800 surrogate', '\u00ff\u0100', '\u0000nul'];

describe('TextColumn', () => {
  it('gives back exactly what each row was given: Latin-1, emoji, 250 characters, lone surrogates, empty and null', () => {
    const c = new TextColumn();
    ODD.forEach((s, i) => c.set(i, s));
    c.set(ODD.length, null);
    ODD.forEach((s, i) => expect(c.get(i)).toBe(s));
    expect(c.get(ODD.length)).toBeNull();
    expect(c.get(ODD.length + 5)).toBeNull(); // never set
  });

  it('compares in place and hashes a row as hashString hashes its string', () => {
    const c = new TextColumn();
    ODD.forEach((s, i) => c.set(i, s));
    ODD.forEach((s, i) => {
      expect(c.equals(i, s)).toBe(true);
      expect(c.equals(i, `${s}x`)).toBe(false);
      expect(c.hash(i)).toBe(hashString(s));
    });
    expect(c.equals(0, 'x')).toBe(false);
    expect(c.equals(1, 'rend_0123456789abcdef0124')).toBe(false);
    expect(c.equals(3, '日本語のプロジェクトx'.slice(0, 10))).toBe(true);
    expect(c.equals(7, '\u00ff\u0101')).toBe(false); // same length, one character past Latin-1
  });

  it('a row set again to what it holds writes nothing', () => {
    const c = new TextColumn();
    for (let i = 0; i < 3000; i++) c.set(i, ODD[i % ODD.length] as string);
    const bytes = c.bytes;
    for (let round = 0; round < 20; round++) for (let i = 0; i < 3000; i++) c.set(i, ODD[i % ODD.length] as string);
    expect(c.bytes).toBe(bytes);
    c.set(5, null);
    c.set(5, null);
    expect(c.get(5)).toBeNull();
  });

  it('rows set again keep only their last value; the garbage is rewritten away and trim keeps every row', () => {
    const c = new TextColumn();
    for (let round = 0; round < 50; round++) for (let i = 0; i < 200; i++) c.set(i, `${ODD[(i + round) % ODD.length]}-${round}`);
    const before = c.bytes;
    c.trim();
    expect(c.bytes).toBeLessThanOrEqual(before);
    for (let i = 0; i < 200; i++) expect(c.get(i)).toBe(`${ODD[(i + 49) % ODD.length]}-49`);
    // the arena holds about the live rows, not 50 rounds of them
    const live = Array.from({ length: 200 }, (_, i) => Buffer.byteLength(c.get(i) as string, 'utf16le')).reduce((a, b) => a + b, 0);
    expect(c.bytes).toBeLessThan(live + 200 * 8 + 4096);
  });

  it('holds any strings, set in any order, as a Map would', () => {
    fc.assert(fc.property(fc.array(fc.tuple(fc.nat(300), fc.option(fc.string({ unit: 'binary' }), { nil: null })), { maxLength: 400 }), (writes) => {
      const c = new TextColumn();
      const m = new Map<number, string | null>();
      for (const [row, s] of writes) {
        c.set(row, s);
        m.set(row, s);
      }
      c.trim();
      for (let row = 0; row <= 300; row++) expect(c.get(row)).toBe(m.get(row) ?? null);
    }));
  });
});

describe('ByteBlocks under a column', () => {
  it('a column past one block, with entries larger than a block, reads every row back (no entry spans two blocks)', () => {
    const c = new TextColumn();
    const big = 'x'.repeat((1 << 20) + 5);
    const rows = Array.from({ length: 60_000 }, (_, i) => (i % 20_000 === 7 ? big : `${LONG.slice(0, i % 250)}|${i}`));
    rows.forEach((s, i) => c.set(i, s));
    rows.forEach((s, i) => expect(c.get(i)).toBe(s));
    expect(c.equals(7, big)).toBe(true);
  });
});
