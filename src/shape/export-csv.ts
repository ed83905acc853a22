import { pace } from '../lib/pace.js';
import { Spool } from '../store/spool.js';

/**
 * Directus 10.10's `?export=csv` (its CSV writer with the dot-path flattening): nested non-empty plain objects become
 * `a.b` columns, arrays and empty objects stay values (as JSON); the header names every column met, in the order met;
 * every string cell quoted, numbers and booleans bare, null empty; a row with no value at all left out; no items, an
 * empty file. Unlike Directus, a string cell a spreadsheet would run as a formula is neutralised by default (`cell`).
 */

/** A row flattened: nested non-empty plain objects become `a.b` columns; arrays and empty objects stay values. */
function flatten(value: Readonly<Record<string, unknown>>, out: Record<string, unknown> = {}, prefix = ''): Record<string, unknown> {
  for (const key of Object.keys(value)) {
    const v = value[key];
    const path = prefix ? `${prefix}.${key}` : key;
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length > 0) flatten(v as Record<string, unknown>, out, path);
    else out[path] = v;
  }
  return out;
}

/** How CSV cells are written. */
export interface CsvOptions {
  /**
   * A string cell a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return)
   * gets a leading `'` — EXPORT_CSV_ESCAPE_FORMULAS, default true; false writes Directus's exact bytes. Numbers, and
   * strings that are a plain number (`"-5"`, aggregates' PostgreSQL number strings), are never touched.
   */
  readonly escapeFormulas: boolean;
}

const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** One CSV cell: empty for null, numbers and booleans as they are, anything else quoted (objects as JSON). */
function cell(v: unknown, o: CsvOptions): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  let s: string;
  if (typeof v === 'string') {
    s = o.escapeFormulas && FORMULA_START.test(v) && !PLAIN_NUMBER.test(v) ? `'${v}` : v;
  } else {
    const json = JSON.stringify(v);
    if (json === undefined) return '';
    s = json;
  }
  return `"${s.replace(/"/g, '""')}"`;
}

/**
 * The CSV of many items (a `limit=-1` export), written as it is read: the rows go to a scratch file while their columns
 * are learned, then the header and every row are written from it — memory stays bounded whatever the size.
 */
export async function* csvExportStream(items: AsyncIterable<unknown>, o: CsvOptions): AsyncGenerator<string> {
  const spool = await Spool.open();
  try {
    const columns = new Map<string, true>();
    let count = 0;
    for await (const item of items) {
      const turn = pace();
      if (turn) await turn;
      const row = item !== null && typeof item === 'object' ? flatten(item as Record<string, unknown>) : {};
      for (const k of Object.keys(row)) columns.set(k, true);
      await spool.write(row);
      count++;
    }
    if (count === 0) return;
    const header = [...columns.keys()];
    yield* line(header, (k) => cell(k, o), '');
    for await (const value of spool.read()) {
      const turn = pace();
      if (turn) await turn;
      const row = value as Record<string, unknown>;
      if (header.some((k) => row[k] !== null && row[k] !== undefined)) yield* line(header, (k) => cell(row[k], o), '\n');
    }
  } finally {
    await spool.remove();
  }
}

/** Cells written at a time: a line of many columns (a render's data keys) is written in parts, the event loop turning between them. */
const CELLS = 2_000;

async function* line(header: readonly string[], cellOf: (k: string) => string, before: string): AsyncGenerator<string> {
  for (let i = 0; i < header.length; i += CELLS) {
    if (i > 0) {
      const turn = pace();
      if (turn) await turn;
    }
    yield `${i === 0 ? before : ','}${header.slice(i, i + CELLS).map(cellOf).join(',')}`;
  }
}

/** The CSV of the items (an empty answer is an empty file). */
export async function csvExport(items: AsyncIterable<unknown> | Iterable<unknown>, o: CsvOptions): Promise<string> {
  const rows: Record<string, unknown>[] = [];
  const columns = new Map<string, true>();
  for await (const item of items) {
    const row = item !== null && typeof item === 'object' ? flatten(item as Record<string, unknown>) : {};
    for (const k of Object.keys(row)) columns.set(k, true);
    rows.push(row);
  }
  if (rows.length === 0) return '';
  const header = [...columns.keys()];
  const lines = [header.map((k) => cell(k, o)).join(',')];
  // a row with no value at all is left out, as Directus's CSV writer does
  for (const row of rows) if (header.some((k) => row[k] !== null && row[k] !== undefined)) lines.push(header.map((k) => cell(row[k], o)).join(','));
  return lines.join('\n');
}
