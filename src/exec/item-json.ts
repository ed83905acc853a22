/**
 * The JSON text of answered items, kept beside items that are given again unchanged (a replica render's projected
 * record, kept until its row changes): a body is written from the kept texts instead of serialising every item again.
 * Every text is exactly JSON.stringify of its item, so a body is byte for byte what JSON.stringify of it gives.
 */
const texts = new WeakMap<object, string>();

/** Keeps `item`'s JSON text with it (the item must not change afterwards: it is frozen). */
export function keepJson<T extends object>(item: T): T {
  texts.set(item, JSON.stringify(item));
  return Object.freeze(item);
}

/** JSON.stringify(item), from the kept text when there is one. */
export function itemJson(item: unknown): string | undefined {
  if (typeof item === 'object' && item !== null) {
    const kept = texts.get(item);
    if (kept !== undefined) return kept;
  }
  return JSON.stringify(item);
}

/**
 * JSON.stringify(body) for an answer body (`{meta?, data, …}`): `data`, an item or an array of items, written from
 * the items' kept texts; every other member serialised as it is.
 */
export function bodyJson(body: unknown): string {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || !Object.hasOwn(body, 'data')) return JSON.stringify(body);
  if (typeof (body as { toJSON?: unknown }).toJSON === 'function') return JSON.stringify(body);
  const parts: string[] = [];
  for (const [k, v] of Object.entries(body)) {
    const text = k === 'data' ? dataJson(v) : JSON.stringify(v);
    // (JSON.stringify leaves out a member whose value has no JSON: undefined, a function, a symbol)
    if (text !== undefined) parts.push(`${JSON.stringify(k)}:${text}`);
  }
  return `{${parts.join(',')}}`;
}

function dataJson(data: unknown): string | undefined {
  if (!Array.isArray(data)) return itemJson(data);
  if ((data as { toJSON?: unknown }).toJSON !== undefined) return JSON.stringify(data);
  let out = '[';
  for (let i = 0; i < data.length; i++) {
    if (i > 0) out += ',';
    // an array member with no JSON is written null
    out += itemJson(data[i]) ?? 'null';
  }
  return `${out}]`;
}
