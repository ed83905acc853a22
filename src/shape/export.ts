import { errors } from '../errors/catalog.js';
import { csvExport, csvExportStream, type CsvOptions } from './export-csv.js';
import { jsonExport, jsonExportOne } from './export-json.js';
import { xmlExport, xmlExportOne } from './export-xml.js';
import { yamlExport, yamlExportOne } from './export-yaml.js';

/**
 * Directus's `?export=`: the answer's data as a file download instead of the JSON envelope — what migration scripts use
 * to pull data out — in each of Directus 10.10's four formats, byte for byte as it writes them (legacy-semantics.md §11).
 * A page is written from its items; `limit=-1` is written as it is read (csv through a scratch file: its header names
 * every column met, so every row is read before the first line).
 */
export const EXPORT_FORMATS = ['csv', 'json', 'xml', 'yaml'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The requested format, undefined without `export`; a bad value is Directus's 400. */
export function exportFormat(query: unknown): ExportFormat | undefined {
  const raw = query && typeof query === 'object' ? (query as Record<string, unknown>).export : undefined;
  if (raw === undefined) return undefined;
  if ((EXPORT_FORMATS as readonly unknown[]).includes(raw)) return raw as ExportFormat;
  throw errors.invalidQuery(['"export" must be one of [csv, json, xml, yaml]']); // Directus's words, no path
}

/** Directus's file name: `<collection> <yyyymmdd>-<h><m><s>` (local time, hours/minutes/seconds unpadded). */
export function exportFilename(collection: string, now: Date, format: ExportFormat): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  const date = `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}-${now.getHours()}${now.getMinutes()}${now.getSeconds()}`;
  return `${collection} ${date}.${format}`;
}

export const EXPORT_CONTENT_TYPE: Readonly<Record<ExportFormat, string>> = {
  csv: 'text/csv; charset=utf-8',
  json: 'application/json; charset=utf-8',
  xml: 'text/xml; charset=utf-8',
  yaml: 'text/yaml; charset=utf-8',
};

export type { CsvOptions };

/** A single item's file (an item route). */
export async function exportOne(format: ExportFormat, item: unknown, csv: CsvOptions): Promise<string> {
  switch (format) {
    case 'csv': return csvExport([item], csv);
    case 'json': return jsonExportOne(item);
    case 'xml': return xmlExportOne(item);
    case 'yaml': return yamlExportOne(item);
  }
}

/** A page's file: its items, already read. */
export async function exportPage(format: ExportFormat, items: readonly unknown[], csv: CsvOptions): Promise<string | AsyncIterable<string>> {
  switch (format) {
    // (written a row at a time, the event loop given turns: a page's columns may be many)
    case 'csv': return csvExportStream(fromArray(items), csv);
    case 'json': return jsonExport(items);
    case 'xml': return xmlExport(items);
    case 'yaml': return yamlExport(items);
  }
}

/** A streamed answer's file (`limit=-1`), written as its items are read. */
export function exportStream(format: ExportFormat, items: AsyncIterable<unknown>, csv: CsvOptions): AsyncIterable<string> {
  switch (format) {
    case 'csv': return csvExportStream(items, csv);
    case 'json': return jsonExport(items);
    case 'xml': return xmlExport(items);
    case 'yaml': return yamlExport(items);
  }
}

async function* fromArray(items: readonly unknown[]): AsyncGenerator<unknown> {
  yield* items;
}
