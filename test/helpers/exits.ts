import { XMLParser } from 'fast-xml-parser';
import { parse as parseYaml } from 'yaml';

/**
 * Readers of every way an answer leaves the gateway, written independently of the gateway's writers: a CSV parser
 * (RFC 4180), an XML reader (fast-xml-parser), a YAML reader (the `yaml` package; the gateway writes with js-yaml), and
 * the forms each exit's items are compared in.
 */

/** Signed URLs carry a signature minted per read: compared without it. */
export const unsigned = (s: string): string => s.replace(/expires=\d+&signature=[0-9a-f]+/g, 'expires=…&signature=…');
export const unsignedValue = <T>(v: T): T => JSON.parse(unsigned(JSON.stringify(v))) as T;

/** A CSV cell as written: its text and whether it was quoted (a quoted cell is a string; a bare one a number, a boolean or empty). */
export interface CsvCell { readonly text: string; readonly quoted: boolean }

/** RFC 4180: rows of cells, `""` inside quotes for a quote, newlines inside quotes kept. */
export function parseCsv(text: string): CsvCell[][] {
  const rows: CsvCell[][] = [];
  if (text === '') return rows;
  let row: CsvCell[] = [];
  let i = 0;
  for (;;) {
    let cell: CsvCell;
    if (text[i] === '"') {
      let s = '';
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q < 0) throw new Error(`CSV: an unclosed quote at ${i}`);
        s += text.slice(i, q);
        if (text[q + 1] === '"') { s += '"'; i = q + 2; continue; }
        i = q + 1;
        break;
      }
      cell = { text: s, quoted: true };
    } else {
      let j = i;
      while (j < text.length && text[j] !== ',' && text[j] !== '\n') j++;
      cell = { text: text.slice(i, j), quoted: false };
      i = j;
    }
    row.push(cell);
    if (i >= text.length) { rows.push(row); return rows; }
    if (text[i] === ',') { i++; continue; }
    if (text[i] === '\n') { rows.push(row); row = []; i++; continue; }
    throw new Error(`CSV: unexpected ${JSON.stringify(text[i])} at ${i}`);
  }
}

/** An item flattened the way a CSV export's columns are named: `a.b` for nested non-empty objects. */
export function flattenItem(v: Record<string, unknown>, out: Record<string, unknown> = {}, prefix = ''): Record<string, unknown> {
  for (const [k, x] of Object.entries(v)) {
    const path = prefix ? `${prefix}.${k}` : k;
    if (x !== null && typeof x === 'object' && !Array.isArray(x) && Object.keys(x).length > 0) flattenItem(x as Record<string, unknown>, out, path);
    else out[path] = x;
  }
  return out;
}

/** What a CSV cell of value `v` must read back as (formula-looking strings carry a leading `'` by default). */
export function expectedCell(v: unknown, escapeFormulas: boolean): CsvCell {
  if (v === null || v === undefined) return { text: '', quoted: false };
  if (typeof v === 'number' || typeof v === 'boolean') return { text: String(v), quoted: false };
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  const formula = typeof v === 'string' && /^[=+\-@\t\r]/.test(s) && !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s);
  return { text: escapeFormulas && formula ? `'${s}` : s, quoted: true };
}

/** The CSV a list of items must be: the header of every column met in order, then each row that has a value. */
export function expectedCsv(items: readonly Record<string, unknown>[], escapeFormulas: boolean): CsvCell[][] {
  if (items.length === 0) return [];
  const flat = items.map((i) => flattenItem(i));
  const header: string[] = [];
  for (const f of flat) for (const k of Object.keys(f)) if (!header.includes(k)) header.push(k);
  const rows = flat.filter((f) => header.some((k) => f[k] !== null && f[k] !== undefined));
  return [header.map((h) => ({ text: h, quoted: true })), ...rows.map((f) => header.map((h) => expectedCell(f[h], escapeFormulas)))];
}

const xml = new XMLParser({ ignoreAttributes: true, parseTagValue: false, trimValues: false, ignoreDeclaration: true, processEntities: true });

/**
 * An XML export read back: `data` holding `data` elements. Text only (XML has no types), so the items are compared in
 * their text form (`asXmlText`).
 */
export function parseXmlItems(text: string): unknown[] {
  const doc = xml.parse(text) as { data?: unknown };
  const root = doc.data;
  if (root === '' || root === undefined) return [];
  const items = (root as { data?: unknown }).data;
  return (Array.isArray(items) ? items : [items]).map(stripWhitespace);
}

/** Indentation between elements is not content: text nodes of only white space around elements dropped. */
function stripWhitespace(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripWhitespace);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (!(k === '#text' && typeof x === 'string' && x.trim() === '')) out[k] = stripWhitespace(x);
    return Object.keys(out).length === 0 ? '' : out;
  }
  return v;
}

/**
 * An item in the form XML can carry: every scalar as its text (`null` as "null"), an empty string or object as "",
 * an array as its members repeated under its key (one member: the member itself; none: no key).
 */
export function asXmlText(v: unknown): unknown {
  if (v === null) return 'null';
  if (Array.isArray(v)) return v.map(asXmlText);
  if (typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (Array.isArray(x)) {
        const members = x.flat(Infinity).map(asXmlText);
        if (members.length === 1) out[k] = members[0];
        else if (members.length > 1) out[k] = members;
      } else out[k] = asXmlText(x);
    }
    return Object.keys(out).length === 0 ? '' : out;
  }
  return String(v);
}

/** A YAML export read back (by another YAML implementation than the one that wrote it). */
export function parseYamlItems(text: string): unknown {
  return parseYaml(text, { version: '1.1' });
}
