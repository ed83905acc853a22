import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { TextColumn } from '../../src/lib/text-column.js';
import { ASK, HOLDS, LACKS } from '../../src/lib/text-scan.js';
import { pgLower } from '../../src/query/like.js';

/**
 * A value looked for in a whole text column at once (`TextColumn.containing`: each block searched by the runtime,
 * each place found turned back into its row) against JavaScript's own `includes` on every row's string: one-byte and
 * UTF-16 rows, empty and null, rows set again (their old bytes left behind in the blocks), a column written afresh,
 * rows set after the marks were made, places met across two rows' bytes, in lower case or not.
 */
const LOWER = (() => {
  const t = new Uint8Array(256);
  for (let c = 0; c < 256; c++) t[c] = pgLower(String.fromCharCode(c)).charCodeAt(0);
  return t;
})();
const FOLD = { table: LOWER, lower: pgLower };

// ('\u6141\u4200' is bytes 41 61 00 42 in UTF-16: 'a' two bytes wide found between its two characters)
const pieces = ['\u6141\u4200', 'a', 'b', 'ab', 'ba', 'Alpha', 'ALPHA', 'ß', 'É', 'é', 'ÿ', '\u0178', 'İ', 'ı', 'Σ', 'ς', '\u212a', '😀', ' ', '7', 'x'];
const titleArb = fc.option(fc.array(fc.constantFrom(...pieces), { maxLength: 6 }).map((p) => p.join('')), { nil: null, freq: 8 });
const valueArb = fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 3 }).map((p) => p.join(''));

/** What the marks must say of a row: whether its text holds the value (lowered when folded), ASK for null. */
function truth(title: string | null, value: string, folded: boolean): number {
  if (title === null) return ASK;
  return (folded ? pgLower(title).includes(value) : title.includes(value)) ? HOLDS : LACKS;
}

describe('a value looked for in a whole text column', () => {
  it('marks each row as JavaScript answers it, through rows set again, a rewrite and rows set since', () => {
    fc.assert(fc.property(
      fc.array(titleArb, { minLength: 1, maxLength: 120 }), fc.array(fc.tuple(fc.nat(119), titleArb), { maxLength: 40 }),
      fc.array(fc.tuple(fc.nat(119), titleArb), { maxLength: 10 }), fc.array(valueArb, { minLength: 1, maxLength: 4 }), fc.boolean(),
      (titles, later, after, values, folded) => {
        const texts = new TextColumn();
        const now = [...titles];
        titles.forEach((t, row) => texts.set(row, t));
        for (const [row, t] of later) {
          if (row >= now.length) continue;
          texts.set(row, t);
          now[row] = t;
        }
        for (const raw of values) {
          const value = folded ? raw.toLowerCase() : raw;
          let walked = 0;
          const marks = texts.containing(value, folded ? FOLD : undefined, (n) => (walked += n));
          expect(now.map((_, row) => marks.at(row)), JSON.stringify({ now, value, folded })).toEqual(now.map((t) => truth(t, value, folded)));
          // (the work is counted: the bytes searched)
          if (now.some((t) => truth(t, value, folded) === HOLDS)) expect(walked).toBeGreaterThanOrEqual(value.length);
          // rows set after the marks were made are asked again, the others keep their marks
          const moved = new Set<number>();
          for (const [row, t] of after) {
            if (row >= now.length) continue;
            const before = texts.get(row);
            texts.set(row, t);
            if (before !== t) moved.add(row);
          }
          for (const [row, t] of after) if (row < now.length) now[row] = t;
          now.forEach((t, row) => {
            if (!moved.has(row)) expect(marks.at(row)).toBe(truth(t, value, folded));
            else expect(marks.at(row)).toBe(ASK);
          });
        }
      },
    ), { numRuns: 300 });
  });

  it('finds a value in every one of 6 000 rows across several blocks, and a value across two rows\' bytes in none', () => {
    const texts = new TextColumn();
    const n = 6_000;
    for (let row = 0; row < n; row++) texts.set(row, row % 3 === 0 ? `x${row}😀ab` : `ab${row}b`);
    // each row's bytes end with "b" and the next row's start with "a" or "x": "ba" and "bx" only across two rows
    for (const [value, want] of [['ab', n], ['ba', 0], ['bx', 0], ['😀a', n / 3], [`${n - 1}`, 1]] as const) {
      const marks = texts.containing(value, undefined, () => {});
      let holds = 0;
      for (let row = 0; row < n; row++) holds += marks.at(row) === HOLDS ? 1 : 0;
      expect(holds, value).toBe(want);
    }
  });

  it('looks on past a place met between two characters of a UTF-16 row', () => {
    const texts = new TextColumn();
    ['\u6141\u4200a', '\u6141\u4200', '\u6141\u4200\u6141\u4200x😀a'].forEach((t, row) => texts.set(row, t));
    for (const fold of [undefined, FOLD]) {
      const marks = texts.containing('a', fold, () => {});
      expect([0, 1, 2].map((row) => marks.at(row))).toEqual([HOLDS, LACKS, HOLDS]);
    }
  });

  it('finds a value in a title longer than a block (a block of its own) and nowhere else', () => {
    const texts = new TextColumn();
    const long = `${'x'.repeat(1_500_000)}needle`;
    ['needle', long, 'nothing', 'the needle', `${'é'.repeat(1_200_000)}😀`, 'le ne'].forEach((t, row) => texts.set(row, t));
    for (const [value, want] of [['needle', [HOLDS, HOLDS, LACKS, HOLDS, LACKS, LACKS]], ['😀', [LACKS, LACKS, LACKS, LACKS, HOLDS, LACKS]],
      ['xn', [LACKS, HOLDS, LACKS, LACKS, LACKS, LACKS]]] as const) {
      const marks = texts.containing(value, undefined, () => {});
      expect([0, 1, 2, 3, 4, 5].map((row) => marks.at(row)), value).toEqual(want);
    }
  });

  it('reads a UTF-16 title whose every place is between two characters once, not a search a place (review of 84e22ce, H1)', () => {
    const texts = new TextColumn();
    // U+6100 is bytes 00 61: 'a' two bytes wide (61 00) is met at every odd byte, never where a character starts
    for (let row = 0; row < 50; row++) texts.set(row, '\u6100'.repeat(1_000) + (row % 2 ? 'a' : ''));
    const search = vi.spyOn(Buffer.prototype, 'indexOf');
    let spent = 0;
    try {
      const marks = texts.containing('a', undefined, (n) => (spent += n));
      expect(Array.from({ length: 50 }, (_, row) => marks.at(row))).toEqual(Array.from({ length: 50 }, (_, row) => (row % 2 ? HOLDS : LACKS)));
      expect(search.mock.calls.length).toBeLessThanOrEqual(2 * 50 + 4);
    } finally {
      search.mockRestore();
    }
    // counted: the bytes searched, and each title read whole once
    expect(spent).toBeGreaterThanOrEqual((50 * 2_000) / 4);
  });

  it('keeps its marks for 4 096 rows set after them at least, and asks every row once more were set than it remembers', () => {
    const texts = new TextColumn();
    for (let row = 0; row < 10; row++) texts.set(row, row % 2 ? 'alpha' : 'beta');
    // (rows set before the marks: the list of changes nearly full when they are made)
    texts.containing('x', undefined, () => {});
    for (let n = 0; n < 8_180; n++) texts.set(9, n % 2 ? 'alpha' : 'beta');
    const marks = texts.containing('alpha', undefined, () => {});
    expect([marks.at(1), marks.at(2)]).toEqual([HOLDS, LACKS]);
    for (let row = 10; row < 10 + 4_096; row++) texts.set(row, 'gamma');
    expect([marks.at(1), marks.at(2), marks.at(9), marks.at(10)]).toEqual([HOLDS, LACKS, HOLDS, ASK]);
    for (let row = 10 + 4_096; row < 20_000; row++) texts.set(row, 'gamma');
    expect([marks.at(1), marks.at(2)]).toEqual([ASK, ASK]);
  });

  it('holds 8 bytes a row of layout and an eighth more, not up to twice it (review of 84e22ce, L3)', () => {
    const texts = new TextColumn();
    const n = 75_000;
    for (let row = 0; row < n; row++) texts.set(row, row % 10 === 3 ? `Ünïcødé 🎬 ${row}` : `Holiday render ${row}`);
    const marks = texts.containing('render 7', undefined, () => {});
    expect(marks.at(7)).toBe(HOLDS);
    expect(marks.at(8)).toBe(LACKS);
    // (one entry a row: its place and its row, 4 bytes each; before, arrays doubled from 1 024: 131 072 entries of one-byte rows, 1 MB)
    expect(texts.scanBytes).toBeGreaterThanOrEqual(8 * n);
    expect(texts.scanBytes).toBeLessThanOrEqual(8 * n * 1.125 + 2 * 8 * 1024);
    // rows set after it grow the layout by an eighth at a time
    for (let row = n; row < n + 20_000; row++) texts.set(row, `Promo render ${row}`);
    expect(texts.containing('render 7', undefined, () => {}).at(n + 7)).toBe(HOLDS);
    expect(texts.scanBytes).toBeLessThanOrEqual(8 * (n + 20_000) * 1.25 + 2 * 8 * 1024);
  });

  it('asks a UTF-16 row whose lower case is not as long as its text, and answers the others', () => {
    const texts = new TextColumn();
    ['ÄBC😀', 'abc', 'xyz😀'].forEach((t, row) => texts.set(row, t));
    const lengthening = (s: string) => s.toLowerCase().replace('ä', 'ae');
    const marks = texts.containing('bc', { table: LOWER, lower: lengthening }, () => {});
    expect([0, 1, 2].map((row) => marks.at(row))).toEqual([ASK, HOLDS, LACKS]);
  });
});
