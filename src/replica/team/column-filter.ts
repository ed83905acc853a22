import type { TextWork } from '../../query/like.js';
import type { CompareNode, FilterNode } from '../../query/ast.js';
import type { Predicate, Rec } from '../../query/compile.js';
import { bulkTest, codedAll, mergedAll, withAll, type RowTest } from './column-bulk.js';
import { textTest } from './column-text.js';
import { DOWNLOAD_READY, STATUS_CODE, type Columns } from './columns.js';

/** One team's render columns as a column filter reads them: codes, and what a record without an overlay shows for each. */
export interface RenderColumns {
  readonly c: Columns;
  status(code: number): unknown;
  project(code: number): unknown;
  user(code: number): unknown;
  account(): unknown;
  /** A v1 time as records answer it. */
  iso(t: number | null): string | null;
  /** The record of a row (what a row with an overlay is tested on). */
  view(row: number): Rec;
  /** The live row whose uuid is `uuid` (a look-up: a row's uuid is derived, a SHA-1, when read). */
  rowOfUuid(uuid: string): number | undefined;
}

export type { RowTest } from './column-bulk.js';

/** A field whose value, on a row without an overlay, is a function of a small code read from a column. */
export interface CodedField {
  code(row: number): number;
  value(code: number): unknown;
  /** The column of codes, when it is one (what answers of every row are read from). */
  codes?(): ArrayLike<number>;
  /** Every row has code 0. */
  constant?: true;
  /** How many codes there can be, when they are few and known (each code's answer then found before any row is read). */
  count?: number;
}

/** The render fields held as codes (status, project, account, creator, download_ready, playback_id), each read off the columns. */
const CODED: Readonly<Record<string, (cols: RenderColumns) => CodedField>> = {
  status: (cols) => ({ code: (row) => cols.c.status[row] as number, value: (k) => cols.status(k), codes: () => cols.c.status, count: STATUS_CODE.size }),
  project: (cols) => ({ code: (row) => cols.c.project[row] as number, value: (k) => cols.project(k), codes: () => cols.c.project }),
  user_created: (cols) => ({ code: (row) => cols.c.user[row] as number, value: (k) => cols.user(k), codes: () => cols.c.user }),
  account: (cols) => ({ code: () => 0, value: () => cols.account(), constant: true }),
  download_ready: (cols) => ({ code: (row) => ((cols.c.flags[row] as number) & DOWNLOAD_READY) !== 0 ? 1 : 0, value: (k) => k === 1, count: 2 }),
  playback_id: () => ({ code: () => 0, value: () => null, constant: true }), // v1 has none (record-view.ts answers null alike)
};

/** A render field held as codes, or undefined for any other. */
export function codedField(cols: RenderColumns, name: string): CodedField | undefined {
  return Object.hasOwn(CODED, name) ? CODED[name]!(cols) : undefined;
}

/** Operators on a date whose answer turns once as the time grows (the ISO strings compare as the times do). */
const MONOTONE = new Set(['_gt', '_gte', '_lt', '_lte']);
/** Operators on a date whose answer rests only on whether it is null. */
const NULLNESS = new Set(['_null', '_nnull', '_empty', '_nempty']);
/** Times below this are seconds under the 'auto' unit, above it milliseconds: a column on both sides is not ordered. */
const AUTO_UNIT_TURN = 1e11;

/**
 * A comparison of a date column: the leaf is evaluated on ISO strings only at the ends of the column's span and while
 * halving the interval between them to the one instant where its answer turns; each row then compares its number to it.
 */
function dateTest(which: 'created' | 'updated', name: string, node: CompareNode, cols: RenderColumns, leaf: Predicate): RowTest | undefined {
  const c = cols.c;
  const time = which === 'created' ? (row: number) => c.created[row] as number : (row: number) => c.updated.get(row);
  const at = (x: number) => leaf({ [name]: cols.iso(Number.isNaN(x) ? null : x) });
  const ifNull = leaf({ [name]: null });
  if (NULLNESS.has(node.op)) {
    const ifSome = leaf({ [name]: '2000-01-01T00:00:00.000Z' });
    return (row) => (Number.isNaN(time(row)) ? ifNull : ifSome);
  }
  if (!MONOTONE.has(node.op) || typeof node.value !== 'string') return undefined;
  // every time the column ever held is within its span: the answer turns at most once between its ends
  const [min, max] = c.span[which] as [number, number];
  if (min > max) return (row) => at(time(row));
  const plain = (x: number) => /^\d{4}-/.test(cols.iso(x) ?? '');
  if (min < 0 || (min < AUTO_UNIT_TURN && max >= AUTO_UNIT_TURN) || !plain(min) || !plain(max)) return undefined;
  const low = at(min);
  const high = at(max);
  // the answer is `low` up to `lo` and `high` from `hi` on (lo and hi adjacent numbers once halving stops)
  let lo = min;
  let hi = max;
  if (low !== high) {
    for (;;) {
      const mid = lo + (hi - lo) / 2;
      if (mid <= lo || mid >= hi) break;
      if (at(mid) === low) lo = mid;
      else hi = mid;
    }
  } else lo = max;
  return (row) => {
    const x = time(row);
    if (Number.isNaN(x)) return ifNull;
    if (x < min || x > max) return at(x); // a row written after this test was made
    return x <= lo ? low : high;
  };
}

/** Operators on the id answered by equality alone. */
const ID_OPS = new Set(['_eq', '_neq', '_in', '_nin']);

/**
 * An equality comparison of the id, answered by looking up the rows holding its values (a row's uuid is derived when
 * read, a SHA-1: not read row by row): those rows are answered by the leaf on their uuid, every other row as any uuid
 * equal to no value is. A row added after the test was made reads its uuid.
 */
function idTest(node: CompareNode, cols: RenderColumns, leaf: Predicate): RowTest | undefined {
  if (!ID_OPS.has(node.op)) return undefined;
  const values: unknown[] = Array.isArray(node.value) ? node.value : [node.value];
  if (values.some((v) => v !== null && typeof v !== 'string')) return undefined;
  const strings = values.filter((v): v is string => typeof v === 'string');
  const c = cols.c;
  const known = c.size;
  const rows = new Map<number, boolean>();
  for (const v of strings) {
    for (const u of new Set([v, v.toLowerCase()])) {
      const row = cols.rowOfUuid(u);
      if (row !== undefined) rows.set(row, leaf({ id: c.uuid(row) }));
    }
  }
  let other = 0;
  const unheld = () => `${other.toString(16).padStart(8, '0')}-ffff-4fff-bfff-ffffffffffff`;
  while (strings.some((v) => v.toLowerCase() === unheld())) other++;
  const elsewhere = leaf({ id: unheld() });
  return (row) => (row >= known ? leaf({ id: c.uuid(row) }) : (rows.get(row) ?? elsewhere));
}

/** A test answering `a` for every row, its answers of all rows made without reading one. */
function constantly(a: boolean): RowTest {
  return withAll(a ? () => true : () => false, (size) => new Uint8Array(size).fill(a ? 1 : 0), true, a ? 'always' : 'never');
}

/** A comparison of one column field (undefined: not a column comparison). */
function compareTest(node: CompareNode, cols: RenderColumns, leaf: (n: CompareNode) => Predicate, work?: TextWork): RowTest | undefined {
  if (node.field.path.length !== 1 || node.field.fn) return undefined;
  const name = node.field.path[0] as string;
  const p = leaf(node);
  if (name === 'date_created') return dateTest('created', name, node, cols, p);
  if (name === 'date_updated') return dateTest('updated', name, node, cols, p);
  if (name === 'id') return idTest(node, cols, p);
  if (name === 'title') return textTest(node, name, cols.c.titles, p, work);
  const f = codedField(cols, name);
  if (!f) return undefined;
  // the leaf's answer for each code, found on first need (codes are few; one may appear after this test was made)
  const answers: (boolean | undefined)[] = [];
  const answer = (k: number): boolean => {
    let a = answers[k];
    if (a === undefined) answers[k] = a = p({ [name]: f.value(k) });
    return a;
  };
  const test = (row: number) => answer(f.code(row));
  if (f.constant) return constantly(answer(0));
  // every code answered alike: no row need be read (a search's _icontains of the status, false for every status)
  if (f.count !== undefined) {
    const first = answer(0);
    let same = true;
    for (let k = 1; k < f.count && same; k++) same = answer(k) === first;
    if (same) return constantly(first);
  }
  if (!f.codes) return test;
  return withAll(test, codedAll(f.codes, answer), true);
}

function compileNode(node: FilterNode, cols: RenderColumns, leaf: (n: CompareNode) => Predicate, work?: TextWork): RowTest | undefined {
  switch (node.kind) {
    case 'True': return () => true;
    case 'Compare': return compareTest(node, cols, leaf, work);
    case 'And':
    case 'Or': {
      const tests: RowTest[] = [];
      for (const child of node.children) {
        const t = compileNode(child, cols, leaf, work);
        if (!t) return undefined;
        tests.push(t);
      }
      // (an _and is cheap when one child is: the rest are asked of its rows; an _or when every child is)
      if (node.kind === 'And') {
        return withAll((row) => {
          for (const t of tests) if (!t(row)) return false;
          return true;
        }, mergedAll(tests, true), tests.some((t) => t.cheap));
      }
      return withAll((row) => {
        for (const t of tests) if (t(row)) return true;
        return false;
      }, mergedAll(tests, false), tests.every((t) => t.cheap));
    }
    default: return undefined; // a relation's items are records
  }
}

/**
 * A render filter compiled to a test of rows of one team's columns, or undefined when some part of it is not a column
 * comparison (the caller then tests records). `leaf` compiles a comparison as records are filtered, so a code's answer
 * is the record path's own; `whole` is the record filter, which a row with an overlay (whose fields may differ from its
 * columns) is tested on.
 */
export function compileColumnFilter(
  filter: FilterNode | null, cols: RenderColumns, leaf: (n: CompareNode) => Predicate, whole: Predicate, work?: TextWork,
): RowTest | undefined {
  const test = filter ? compileNode(filter, cols, leaf, work) : () => true;
  if (!test) return undefined;
  return bulkTest(test, cols.c, (row) => whole(cols.view(row)));
}

/**
 * A filter that rests on the status code alone (or on nothing) on rows without an overlay: its answer per status code,
 * valid while `holds()` (a date comparison is constant only over the span its test was made for). Counts kept per
 * status code then answer it without testing a row.
 */
export interface StatusForm {
  readonly byStatus: (code: number) => boolean;
  readonly holds: () => boolean;
}

const ALWAYS = () => true;

/** A date comparison whose answer is the same for every time the column holds (and for none): that answer. */
function constantDate(which: 'created' | 'updated', name: string, node: CompareNode, cols: RenderColumns, leaf: Predicate): StatusForm | undefined {
  const c = cols.c;
  const ifNull = leaf({ [name]: null });
  if (NULLNESS.has(node.op)) {
    const ifSome = leaf({ [name]: '2000-01-01T00:00:00.000Z' });
    return ifSome === ifNull ? { byStatus: () => ifNull, holds: ALWAYS } : undefined;
  }
  if (!MONOTONE.has(node.op) || typeof node.value !== 'string') return undefined;
  const [min, max] = c.span[which] as [number, number];
  if (min > max) return undefined;
  const plain = (x: number) => /^\d{4}-/.test(cols.iso(x) ?? '');
  if (min < 0 || (min < AUTO_UNIT_TURN && max >= AUTO_UNIT_TURN) || !plain(min) || !plain(max)) return undefined;
  const at = (x: number) => leaf({ [name]: cols.iso(x) });
  // monotone between the span's ends: equal answers at both ends are every row's answer (and no time's, for a column
  // that may hold none: every render has a created_at, not always an updated_at)
  const low = at(min);
  if (at(max) !== low || (which === 'updated' && ifNull !== low)) return undefined;
  const span = c.span[which] as [number, number];
  return { byStatus: () => low, holds: () => span[0] === min && span[1] === max };
}

function formOf(node: FilterNode, cols: RenderColumns, leaf: (n: CompareNode) => Predicate): StatusForm | undefined {
  switch (node.kind) {
    case 'True': return { byStatus: () => true, holds: ALWAYS };
    case 'Compare': {
      if (node.field.path.length !== 1 || node.field.fn) return undefined;
      const name = node.field.path[0] as string;
      if (name === 'date_created') return constantDate('created', name, node, cols, leaf(node));
      if (name === 'date_updated') return constantDate('updated', name, node, cols, leaf(node));
      if (name !== 'status') return undefined;
      const p = leaf(node);
      const answers: (boolean | undefined)[] = [];
      return {
        byStatus: (k) => {
          let a = answers[k];
          if (a === undefined) answers[k] = a = p({ status: cols.status(k) });
          return a;
        },
        holds: ALWAYS,
      };
    }
    case 'And':
    case 'Or': {
      const forms: StatusForm[] = [];
      for (const child of node.children) {
        const f = formOf(child, cols, leaf);
        if (!f) return undefined;
        forms.push(f);
      }
      const and = node.kind === 'And';
      return {
        byStatus: (k) => (and ? forms.every((f) => f.byStatus(k)) : forms.some((f) => f.byStatus(k))),
        holds: () => forms.every((f) => f.holds()),
      };
    }
    default: return undefined;
  }
}

/** The filter as a test of the status code alone, when it is one (undefined otherwise: rows are tested one by one). */
export function statusForm(filter: FilterNode | null, cols: RenderColumns, leaf: (n: CompareNode) => Predicate): StatusForm | undefined {
  return filter ? formOf(filter, cols, leaf) : { byStatus: () => true, holds: ALWAYS };
}
