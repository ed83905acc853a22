/**
 * A column filter answered for every row at once: each comparison a tight loop over its column (a code's answer looked
 * up, a time compared, a text's marks read), `_and`/`_or` byte by byte — where testing row by row calls a chain of
 * closures a row (about a hundred nanoseconds a row at 200 000 rows, against a few). A question over a few rows (a page
 * walked until it is full) stays row by row: the answers of all are made once it has asked a sixteenth of them, and made
 * again if the team's rows change while it runs. Pure memory.
 */

import { OVERLAY, type Columns } from './columns.js';

/** A test of one row of the columns, with the answers of all rows below `size` when it has a faster way to them. */
export interface RowTest {
  (row: number): boolean;
  all?: (size: number) => Uint8Array;
  /** Whether `all` is a loop over a column or a search, not a call of the test a row (what an `_and` makes first). */
  cheap?: boolean;
  /** The test's answer for every row, when it is known before any is read. */
  always?: 'always' | 'never';
}

/** Teams smaller than this are tested row by row only (answers of all, or a search of all, save little there). */
export const ALL_FROM = 4096;

/** Whether a test asked of `asked` rows of a team of `size` is worth answering for all of them now: a sixteenth asked. */
export const allWorth = (asked: number, size: number): boolean => size >= ALL_FROM && asked >= size >> 4;

/** `test` given `all` (`cheap`: see RowTest). */
export function withAll(test: (row: number) => boolean, all: (size: number) => Uint8Array, cheap = false, always?: RowTest['always']): RowTest {
  const t = test as RowTest;
  t.all = all;
  if (cheap) t.cheap = true;
  if (always) t.always = always;
  return t;
}

/** The answers of rows below `size` (1: passes): the test's own way, or row by row. */
export function allOf(test: RowTest, size: number): Uint8Array {
  if (test.all) return test.all(size);
  const out = new Uint8Array(size);
  for (let row = 0; row < size; row++) if (test(row)) out[row] = 1;
  return out;
}

/**
 * Answers of an `_and` (every child) or an `_or` (any): an `_or`'s children each answered whole and merged; an
 * `_and`'s cheap children first (`cheap`: a search of the titles, a loop over codes), the others then asked only of
 * the rows still passing — a search box's few matches are all a date bound is tested on.
 */
export function mergedAll(tests: readonly RowTest[], and: boolean): (size: number) => Uint8Array {
  // (a child answering every row alike decides an _and or an _or alone, or changes nothing in it)
  const decides = and ? 'never' : 'always';
  if (tests.some((t) => t.always === decides)) return (size) => new Uint8Array(size).fill(and ? 0 : 1);
  const rest = tests.filter((t) => t.always === undefined);
  if (rest.length < tests.length && rest.length > 0) return mergedAll(rest, and);
  const order = and ? [...tests.filter((t) => t.cheap), ...tests.filter((t) => !t.cheap)] : tests;
  return (size) => {
    if (order.length === 0) return new Uint8Array(size).fill(and ? 1 : 0);
    const out = allOf(order[0] as RowTest, size);
    for (let k = 1; k < order.length; k++) {
      const t = order[k] as RowTest;
      if (and && !t.cheap) {
        for (let row = 0; row < size; row++) if (out[row] === 1 && !t(row)) out[row] = 0;
        continue;
      }
      const next = allOf(t, size);
      if (and) for (let row = 0; row < size; row++) out[row] = (out[row] as number) & (next[row] as number);
      else for (let row = 0; row < size; row++) out[row] = (out[row] as number) | (next[row] as number);
    }
    return out;
  };
}

/** Answers of a comparison of a field held as codes: each code's answer found once (`answer`), then looked up a row. */
export function codedAll(column: () => ArrayLike<number>, answer: (code: number) => boolean): (size: number) => Uint8Array {
  return (size) => {
    const codes = column();
    const out = new Uint8Array(size);
    // each code's answer + 1 (0: not found yet), in a table as long as the codes met so far need
    let byCode = new Uint8Array(256);
    for (let row = 0; row < size; row++) {
      const k = codes[row] as number;
      if (k >= byCode.length) {
        const wider = new Uint8Array(Math.max(k + 1, byCode.length * 2));
        wider.set(byCode);
        byCode = wider;
      }
      let a = byCode[k] as number;
      if (a === 0) byCode[k] = a = answer(k) ? 2 : 1;
      out[row] = a - 1;
    }
    return out;
  };
}

/**
 * A team's filter test (`test` on rows without an overlay, `overlaid` on a row with one) that answers from every row's
 * answers once asked about a sixteenth of the team, as long as the team's rows have not changed since they were made.
 */
export function bulkTest(test: RowTest, c: Columns, overlaid: (row: number) => boolean): RowTest {
  let asked = 0;
  let answers: Uint8Array | undefined;
  let madeAt = -1;
  const one = (row: number): boolean => (((c.flags[row] as number) & OVERLAY) !== 0 ? overlaid(row) : test(row));
  const make = (): Uint8Array => {
    const n = c.size;
    const out = allOf(test, n);
    const flags = c.flags;
    for (let row = 0; row < n; row++) if (((flags[row] as number) & OVERLAY) !== 0) out[row] = overlaid(row) ? 1 : 0;
    return out;
  };
  const current = (): Uint8Array => {
    if (!answers || madeAt !== c.writes) {
      madeAt = c.writes;
      answers = make();
    }
    return answers;
  };
  const tested = (row: number): boolean => {
    if (answers && madeAt !== c.writes) {
      answers = undefined;
      asked = 0;
    }
    if (!answers) {
      if (!allWorth(++asked, c.size)) return one(row);
      current();
    }
    const a = answers as Uint8Array;
    return row < a.length ? a[row] === 1 : one(row);
  };
  // (a pass over every row asks for the answers of all at once; a team too small for them has none)
  return c.size < ALL_FROM ? tested : withAll(tested, current);
}
