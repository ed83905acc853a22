/**
 * Query-string parser with bracket notation, as Directus parses it (qs, depth 10): `filter[a][_eq]=x`,
 * `fields[]=a&fields[]=b`, `aggregate[count]=*`, `+` decoded as a space, repeated keys collected into
 * arrays. Every object it builds has a null prototype and only own keys count as existing, so a key such
 * as `toString` or `hasOwnProperty` is an ordinary key; keys named __proto__/constructor/prototype are
 * dropped. It never throws: whatever the input, the answer is a plain tree of strings.
 */
const MAX_DEPTH = 10;
const MAX_INDEX = 20;
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

export type QsValue = string | QsValue[] | { [k: string]: QsValue };
type QsObject = { [k: string]: QsValue };

const dict = (): QsObject => Object.create(null) as QsObject;
const own = (o: QsObject, k: string): QsValue | undefined => (Object.hasOwn(o, k) ? o[k] : undefined);
const isIndex = (s: string | undefined): boolean => s === '' || (s !== undefined && /^\d+$/.test(s));

function decode(s: string): string {
  const plus = s.replace(/\+/g, ' ');
  try { return decodeURIComponent(plus); } catch { return plus; }
}

function splitKey(key: string): string[] {
  const first = key.indexOf('[');
  if (first <= 0) return [key];
  const parts = [key.slice(0, first)];
  const re = /\[([^[\]]*)\]/g;
  let m: RegExpExecArray | null;
  let last = first;
  re.lastIndex = first;
  while ((m = re.exec(key)) !== null && m.index === last) {
    if (parts.length > MAX_DEPTH) break;
    parts.push(m[1] as string);
    last = re.lastIndex;
  }
  if (last < key.length) parts.push(key.slice(last)); // the rest becomes a literal key, as qs does past depth
  return parts;
}

/** qs: an out-of-range or non-numeric index turns the array into an object keyed by position. */
function arrayToDict(a: QsValue[]): QsObject {
  const o = dict();
  a.forEach((v, k) => { o[String(k)] = v; });
  return o;
}

/** Assigns `value` at `path` below `node[key]`, creating or converting containers; returns the new node[key]. */
function put(existing: QsValue | undefined, path: readonly string[], value: string): QsValue {
  if (path.length === 0) {
    if (existing === undefined) return value;
    if (Array.isArray(existing)) { existing.push(value); return existing; }
    if (typeof existing === 'string') return [existing, value];
    return existing; // a value where an object already is: qs keeps the object
  }
  const [head, ...rest] = path as [string, ...string[]];
  if (FORBIDDEN.has(head)) return existing ?? dict();
  let container: QsValue = existing ?? (isIndex(head) ? [] : dict());
  if (typeof container === 'string') container = isIndex(head) ? [container] : Object.assign(dict(), { [container]: '' });
  if (Array.isArray(container)) {
    const idx = head === '' ? container.length : Number(head);
    if (!Number.isInteger(idx) || idx < 0 || idx > MAX_INDEX) container = arrayToDict(container);
    else {
      container[idx] = put(container[idx], rest, value);
      return container;
    }
  }
  const obj = container as QsObject;
  obj[head] = put(own(obj, head), rest, value);
  return obj;
}

export function parseQueryString(qs: string): Record<string, QsValue> {
  const out = dict();
  if (!qs) return out;
  for (const pair of qs.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const key = decode(eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? '' : decode(pair.slice(eq + 1));
    if (!key) continue;
    const [root, ...rest] = splitKey(key) as [string, ...string[]];
    if (FORBIDDEN.has(root)) continue;
    out[root] = put(own(out, root), rest, value);
  }
  for (const k of Object.keys(out)) out[k] = compact(out[k] as QsValue);
  return out;
}

/** qs compacts arrays once everything is read: `a[1]=x&a[3]=y` is `["x", "y"]`, holes dropped at every depth. */
function compact(v: QsValue): QsValue {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) {
    const out: QsValue[] = [];
    for (const x of v) if (x !== undefined) out.push(compact(x));
    return out;
  }
  for (const k of Object.keys(v)) v[k] = compact(v[k] as QsValue);
  return v;
}
