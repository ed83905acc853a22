/** A CSV row with where it was: its line in the file and how many cells it had (to catch shifted columns). */
export interface CsvRecord extends Record<string, string> {}
export const LINE = Symbol('line');
export const WIDTH = Symbol('width');
export const HEADER_WIDTH = Symbol('header width');

/**
 * Minimal RFC 4180 CSV parsing (quoted fields, doubled quotes, CRLF) into objects keyed by the header. Each object also
 * carries its line number, its cell count and the header's (symbols, not columns).
 */
export function parseCsv(text: string): Record<string, string>[] {
  const rows: { cells: string[]; line: number }[] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '\n') line++;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') { i++; line++; }
      row.push(field);
      field = '';
      if (row.some((x) => x !== '')) rows.push({ cells: row, line: rowLine });
      row = [];
      rowLine = line;
    } else field += c;
  }
  row.push(field);
  if (row.some((x) => x !== '')) rows.push({ cells: row, line: rowLine });
  const [header, ...body] = rows;
  if (!header) return [];
  const keys = header.cells.map((h) => h.trim());
  return body.map((r) => Object.assign(Object.fromEntries(keys.map((k, i) => [k, r.cells[i] ?? ''])), {
    [LINE]: r.line, [WIDTH]: r.cells.length, [HEADER_WIDTH]: keys.length,
  }));
}

export function readRecords(text: string, file: string): Record<string, unknown>[] {
  if (file.endsWith('.csv')) return parseCsv(text);
  const data = JSON.parse(text) as unknown;
  const list = Array.isArray(data)
    ? data
    : data && typeof data === 'object' && Array.isArray((data as { data?: unknown }).data)
      ? (data as { data: unknown[] }).data
      : undefined;
  if (!list) throw new Error(`${file}: expected a JSON array (or {data: [...]})`);
  return list as Record<string, unknown>[];
}
