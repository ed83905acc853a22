import type { CompareNode } from '../../query/ast.js';
import type { Predicate } from '../../query/compile.js';
import { hasWildcards, pgLower, TEXT_OPS, TextWork } from '../../query/like.js';
import { hashString, type TextColumn } from '../../lib/text-column.js';
import { ASK, HOLDS, type TextMarks } from '../../lib/text-scan.js';
import { allOf, allWorth, withAll, type RowTest } from './column-bulk.js';

/**
 * A comparison of a text column (the titles) tested on the kept bytes: a row kept one byte a character is compared
 * byte by byte with the value, never made a string nor a record. The answer is the record path's own (`query/compare.ts`,
 * as Directus on PostgreSQL answers: `query/like.ts`): a plain value looked for as it is, or lowered as JavaScript lowers
 * it in a title folded as PostgreSQL folds each character; a value with a LIKE wildcard, a null row, every other operator
 * and a row kept as UTF-16 (a character past Latin-1) read by the leaf itself.
 */

type Bytes = (bytes: Buffer, at: number, end: number) => boolean;

/** PostgreSQL's lower case of each Latin-1 character, when each is one Latin-1 character (undefined: tests read strings). */
const LOWER = ((): Uint8Array | undefined => {
  const t = new Uint8Array(256);
  for (let c = 0; c < 256; c++) {
    const l = pgLower(String.fromCharCode(c));
    if (l.length !== 1 || l.charCodeAt(0) > 255) return undefined;
    t[c] = l.charCodeAt(0);
  }
  return t;
})();

/** The character codes of `s` when each is below 256 (undefined: no Latin-1 text holds it). */
function latin1(s: string): Uint8Array | undefined {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 255) return undefined;
    out[i] = c;
  }
  return out;
}

/** Whether `n` is at `i` of `b`, each byte of `b` read through `map` (folded) or not. */
function at(b: Buffer, i: number, n: Uint8Array, fold: Uint8Array | undefined): boolean {
  if (fold) {
    for (let j = 0; j < n.length; j++) if (fold[b[i + j] as number] !== n[j]) return false;
  } else {
    for (let j = 0; j < n.length; j++) if (b[i + j] !== n[j]) return false;
  }
  return true;
}

type Where = 'contains' | 'starts' | 'ends' | 'eq';

/** Steps of one row's `contains` past which they are counted against the request's text work (a row's usual few are not). */
const FEW_STEPS = 64;
/** Bytes walked by a row test before they are counted against the request's text work. */
const WALK_BATCH = 65_536;

function matcher(where: Where, n: Uint8Array | undefined, fold: Uint8Array | undefined, work: TextWork, value: string): Bytes {
  if (!n) return () => false; // a character past Latin-1 is in no Latin-1 text (nor in its lower case)
  const m = n.length;
  switch (where) {
    case 'eq': return (b, s, e) => e - s === m && at(b, s, n, fold);
    case 'starts': return (b, s, e) => e - s >= m && at(b, s, n, fold);
    case 'ends': return (b, s, e) => e - s >= m && at(b, e - m, n, fold);
    case 'contains': {
      // every row's bytes walked, counted a batch at a time (attack pass 20, N1: terms failing at once on every byte)
      let walked = 0;
      return (b, s, e) => {
        if ((walked += e - s) > WALK_BATCH) {
          work.walk(walked, value);
          walked = 0;
        }
        // every place the first byte is met costs up to the value's length more: a long value nearly met all along a
        // long title costs text × value (attack pass 19, F1: 1 000 such terms held the instance 21 s) — counted past a few
        if (m === 0) return true;
        const first = n[0] as number;
        let steps = 0;
        let found = false;
        for (let i = s, last = e - m; i <= last; i++) {
          if ((fold ? fold[b[i] as number] : b[i]) !== first) continue;
          steps += m - 1;
          if (at(b, i, n, fold)) {
            found = true;
            break;
          }
        }
        if (steps > FEW_STEPS) work.spend(steps, value);
        return found;
      };
    }
  }
}

/** Each operator tested on bytes: where the value is looked for, in lower case or not, and whether the answer is negated. */
const BYTE_OPS: Readonly<Record<string, readonly [Where, boolean, boolean]>> = Object.assign(
  Object.create(null) as Record<string, readonly [Where, boolean, boolean]>,
  { _eq: ['eq', false, false], _neq: ['eq', false, true] },
  Object.fromEntries(Object.entries(TEXT_OPS).map(([name, t]) => [name, [t.at, t.ci, t.negate]])),
);

/** Operators whose answer rests on whether the text is null, empty or neither. */
const EMPTINESS = new Set(['_null', '_nnull', '_empty', '_nempty']);

/** A string equal to none of `values`. */
function outside(values: ReadonlySet<string>): string {
  let s = '\u0000';
  while (values.has(s)) s += '\u0000';
  return s;
}

/**
 * A `contains` test that turns into marks of the whole column (one search of its blocks: `TextColumn.containing`) once
 * it has been asked of a sixteenth of the rows — a question about a few rows (a project's, a page's) never pays for the
 * scan, one over many pays for it once; a row the marks do not answer (UTF-16, null, set since) is tested on its own.
 */
function scanned(texts: TextColumn, value: string, fold: boolean, work: TextWork, shown: string, negate: boolean, each: RowTest): RowTest {
  let asked = 0;
  let marks: TextMarks | undefined;
  // (past the request's MARKS_KEPT_BYTES, row by row: the marks of each search are kept while the question runs)
  let rowByRow = false;
  const lower = fold && LOWER ? { table: LOWER, lower: pgLower } : undefined;
  const scan = (): TextMarks | undefined => {
    if (marks || rowByRow) return marks;
    if (!work.mayScan(texts.size)) {
      rowByRow = true;
      return undefined;
    }
    return (marks = texts.containing(value, lower, (n) => work.walk(n, shown)));
  };
  return withAll((row) => {
    if (!marks && (rowByRow || !allWorth(++asked, texts.size) || !scan())) return each(row);
    const k = (marks as TextMarks).at(row);
    return k === ASK ? each(row) : (k === HOLDS) !== negate;
  }, (size) => {
    const m = scan();
    return m ? m.answers(size, each, negate) : allOf(each, size);
  }, true);
}

/** A comparison of the text column `name` (read by `texts`), answered as the record path's `leaf` answers it. */
export function textTest(node: CompareNode, name: string, texts: TextColumn, leaf: Predicate, work = new TextWork()): RowTest {
  const on = (v: string | null) => leaf({ [name]: v });
  const ifNull = on(null);
  const strings = (s: string) => on(s);
  const byte = BYTE_OPS[node.op];
  // (a value with a LIKE wildcard or escape is a pattern: the record path's own test, on the strings)
  if (byte && typeof node.value === 'string' && (!byte[1] || LOWER) && (byte[0] === 'eq' || !hasWildcards(node.value))) {
    const [where, fold, negate] = byte;
    const value = fold ? node.value.toLowerCase() : node.value;
    const m = matcher(where, latin1(value), fold ? LOWER : undefined, work, node.value);
    const test: Bytes = negate ? (b, s, e) => !m(b, s, e) : m;
    const each: RowTest = (row) => texts.test(row, test, strings, ifNull);
    return where === 'contains' && value.length > 0 ? scanned(texts, value, fold, work, node.value, negate, each) : each;
  }
  if (EMPTINESS.has(node.op)) {
    const ifEmpty = on('');
    const ifSome = on('x');
    return (row) => texts.test(row, (_, s, e) => (e > s ? ifSome : ifEmpty), (s) => (s === '' ? ifEmpty : ifSome), ifNull);
  }
  if ((node.op === '_in' || node.op === '_nin') && Array.isArray(node.value) && node.value.every((v) => v === null || typeof v === 'string')) {
    // each row answered as the value it equals answers, or as any text equal to none
    const values = new Set(node.value.filter((v): v is string => v !== null));
    const elsewhere = on(outside(values));
    // the Latin-1 values by their hash (`hashString`, FNV-1a over character codes: over a Latin-1 row's bytes alike)
    const byHash = new Map<number, { n: Uint8Array; answer: boolean }[]>();
    for (const v of values) {
      const n = latin1(v);
      if (!n) continue;
      const h = hashString(v);
      byHash.set(h, [...(byHash.get(h) ?? []), { n, answer: on(v) }]);
    }
    return (row) => texts.test(row, (b, s, e) => {
      let h = 0x811c9dc5;
      for (let i = s; i < e; i++) h = Math.imul(h ^ (b[i] as number), 0x01000193);
      for (const c of byHash.get(h >>> 0) ?? []) if (e - s === c.n.length && at(b, s, c.n, undefined)) return c.answer;
      return elsewhere;
    }, strings, ifNull);
  }
  return (row) => on(texts.get(row));
}
