import { jsonInTurns, largeValue } from './json-in-turns.js';

/**
 * The JSON text of answered items, kept beside items that are given again unchanged (a replica render's projected
 * record, kept until its row changes) as UTF-8 bytes: a body is copied together from the kept bytes instead of
 * serialising every item again, and sent as bytes (no string to join, measure and encode again on the socket). Every
 * kept text is exactly JSON.stringify of its item, so a body is byte for byte what JSON.stringify of it gives.
 */
const texts = new WeakMap<object, Buffer>();
/**
 * The text of an answer's own item (made for one answer, gone with it) is kept on the item, a property no JSON, spread or
 * key list sees: a WeakMap entry and a memory of its own for each item of each answer made every scavenge slower —
 * GC was a fifth of a 20-item page's cost (issue 40's measure).
 */
const TEXT = Symbol('the item\'s JSON text');
type Texted = { readonly [TEXT]?: Buffer };

/** The JSON text kept with `item`, if any. */
const keptText = (item: object): Buffer | undefined => (item as Texted)[TEXT] ?? texts.get(item);

/** Keeps `bytes` on an answer's own item, and freezes it. */
function keepOn(item: object, bytes: Buffer): number {
  // (an item that takes no new property — never one the gateway made — is kept in the map, as a long-kept one)
  if (Object.isExtensible(item)) Object.defineProperty(item, TEXT, { value: bytes });
  else texts.set(item, bytes);
  Object.freeze(item);
  return bytes.length;
}

/** UTF-8 bytes of `s` in a memory of their own (a kept text never holds a shared pool slab alive). */
function ownBytes(s: string): Buffer {
  const b = Buffer.allocUnsafeSlow(Buffer.byteLength(s));
  b.write(s, 'utf8');
  return b;
}

/**
 * Keeps `item`'s JSON text with it (the item must not change afterwards: it is frozen), in a memory of its own: for items
 * kept long (a replica's projected records). An answer's own item: `keepAnswerJson`.
 */
export function keepJson<T extends object>(item: T): T {
  texts.set(item, ownBytes(JSON.stringify(item)));
  return Object.freeze(item);
}

/**
 * Keeps the JSON text of an answer's own item with it (frozen), its bytes returned — or, for an item that may be large
 * (src/lib/json-in-turns.ts), a promise of them: its text is written a slice a turn of the event loop at a time, so one
 * item of many MB holds no other request back while it is serialised.
 */
export function keepAnswerJson(item: object): number | Promise<number> {
  if (!largeValue(item)) return keepOn(item, Buffer.from(JSON.stringify(item)));
  return jsonInTurns(item).then((b) => keepOn(item, b ?? Buffer.from('null')));
}

/**
 * The JSON texts of a page's items, kept on the page's array (made for one answer): `texts[i]` is JSON.stringify of
 * item i as it was measured, or undefined where the item's text is kept otherwise (a replica's kept record) or not at all.
 * One property an answer, where a text on each item (a symbol and a freeze an item) cost a 20-item page a third of the
 * JSON it wrote (issue 40's measure); the array is the answer's own and nothing changes its items once measured.
 */
const PAGE = Symbol('the page\'s JSON texts');
type Paged = { readonly [PAGE]?: readonly (string | undefined)[] };

/** Keeps `texts` (as `PAGE` says) on `items`, returned. */
export function keepPageJson<T extends unknown[]>(items: T, texts: readonly (string | undefined)[]): T {
  Object.defineProperty(items, PAGE, { value: texts });
  return items;
}

/** `itemBytes` for an item that may be large: a large one is written a slice a turn at a time (not kept). */
export async function itemBytesInTurns(item: unknown): Promise<Buffer | undefined> {
  if (typeof item === 'object' && item !== null) {
    const kept = keptText(item);
    if (kept !== undefined) return kept;
    if (largeValue(item)) return jsonInTurns(item);
  }
  return itemBytes(item);
}

/** JSON.stringify(item) as UTF-8 bytes, the kept ones when there are (undefined: the item has no JSON). */
export function itemBytes(item: unknown): Buffer | undefined {
  if (typeof item === 'object' && item !== null) {
    const kept = keptText(item);
    if (kept !== undefined) return kept;
  }
  const s = JSON.stringify(item) as string | undefined;
  return s === undefined ? undefined : Buffer.from(s);
}

const COMMA = Buffer.from(',');
const NULL = Buffer.from('null');

/**
 * JSON.stringify(body) as UTF-8 bytes for an answer body (`{meta?, data, …}`): `data`, an item or an array of items,
 * copied from the items' kept texts; every other member serialised as it is.
 */
export function bodyJson(body: unknown): Buffer {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || !Object.hasOwn(body, 'data')) return Buffer.from(JSON.stringify(body) ?? '');
  if (typeof (body as { toJSON?: unknown }).toJSON === 'function') return Buffer.from(JSON.stringify(body) ?? '');
  const parts: Buffer[] = [];
  let text = '{'; // what is written before the next part
  let members = 0;
  for (const [k, v] of Object.entries(body)) {
    const value = k === 'data' ? dataParts(v) : (JSON.stringify(v) as string | undefined);
    // (JSON.stringify leaves out a member whose value has no JSON: undefined, a function, a symbol)
    if (value === undefined) continue;
    text += `${members++ > 0 ? ',' : ''}${JSON.stringify(k)}:`;
    if (typeof value === 'string') {
      text += value;
      continue;
    }
    // (one at a time: spreading 160 000 parts into push overflowed the call stack — a 500 for a limit=-1 aggregate of
    // 80 000 groups, attack pass 15's re-check)
    parts.push(Buffer.from(text));
    for (const p of value) parts.push(p);
    text = '';
  }
  parts.push(Buffer.from(`${text}}`));
  return Buffer.concat(parts);
}

function dataParts(data: unknown): Buffer[] | undefined {
  if (!Array.isArray(data) || (data as { toJSON?: unknown }).toJSON !== undefined) {
    const one = itemBytes(data);
    return one === undefined ? undefined : [one];
  }
  const kept = (data as Paged)[PAGE];
  const texts = kept !== undefined && kept.length === data.length ? kept : undefined;
  const out: Buffer[] = [];
  let run = '['; // texts written one after the other, turned into bytes once
  for (let i = 0; i < data.length; i++) {
    if (i > 0) run += ',';
    const text = texts?.[i];
    if (text !== undefined) {
      run += text;
      continue;
    }
    out.push(run === ',' ? COMMA : Buffer.from(run));
    run = '';
    // an array member with no JSON is written null
    out.push(itemBytes(data[i]) ?? NULL);
  }
  out.push(Buffer.from(`${run}]`));
  return out;
}
