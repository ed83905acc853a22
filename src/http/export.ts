import { errors } from '../errors/catalog.js';
import { Spool } from '../store/spool.js';
import { pace } from '../lib/pace.js';

/**
 * Directus's `?export=`: the answer's data as a file download instead of the JSON envelope — what migration scripts use
 * to pull data out. `json` is Directus's tab-indented array (streamed item by item); `csv` is its flattened table
 * (nested objects as dot-path columns, arrays as JSON, strings quoted, the header naming every column met — a streamed
 * answer goes through a scratch file first). `xml` and `yaml` are accepted by Directus but not served here (a clear 400).
 * Unlike Directus, a CSV string cell a spreadsheet would run as a formula is neutralised by default (see `cell`).
 */
export type ExportFormat = 'json' | 'csv';

/** The requested format, undefined without `export`; a bad value is Directus's 400. */
export function exportFormat(query: unknown): ExportFormat | undefined {
  const raw = query && typeof query === 'object' ? (query as Record<string, unknown>).export : undefined;
  if (raw === undefined) return undefined;
  if (raw === 'json' || raw === 'csv') return raw;
  if (raw === 'xml' || raw === 'yaml') {
    throw errors.invalidQuery([{ path: 'export', reason: `"export" as ${raw} is not served by this gateway: use json or csv` }]);
  }
  throw errors.invalidQuery(['"export" must be one of [csv, json, xml, yaml]']); // Directus's words, no path
}

/** Directus's file name: `<collection> <yyyymmdd>-<h><m><s>` (local time, hours/minutes/seconds unpadded). */
export function exportFilename(collection: string, now: Date, format: ExportFormat): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  const date = `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}-${now.getHours()}${now.getMinutes()}${now.getSeconds()}`;
  return `${collection} ${date}.${format}`;
}

export const EXPORT_CONTENT_TYPE: Readonly<Record<ExportFormat, string>> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
};

/** A single item's file (an item route): the object itself, as Directus writes `data`. */
export function jsonExportOne(item: unknown): string {
  return JSON.stringify(item ?? null, null, '\t');
}

/** `JSON.stringify(items, null, '\t')`, written an item at a time. */
export async function* jsonExport(items: AsyncIterable<unknown> | Iterable<unknown>): AsyncGenerator<string> {
  let first = true;
  for await (const item of items) {
    const turn = pace();
    if (turn) await turn;
    const body = JSON.stringify(item, null, '\t').replace(/\n/g, '\n\t');
    yield `${first ? '[\n\t' : ',\n\t'}${body}`;
    first = false;
  }
  yield first ? '[]' : '\n]';
}

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
    yield header.map((k) => cell(k, o)).join(',');
    for await (const value of spool.read()) {
      const turn = pace();
      if (turn) await turn;
      const row = value as Record<string, unknown>;
      if (header.some((k) => row[k] !== null && row[k] !== undefined)) yield `\n${header.map((k) => cell(row[k], o)).join(',')}`;
    }
  } finally {
    await spool.remove();
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
