import { percentDecoded } from '../lib/percent.js';

/**
 * Query-string parser with bracket notation, as Directus parses it (qs, depth 10): `filter[a][_eq]=x`,
 * `fields[]=a&fields[]=b`, `aggregate[count]=*`, `+` decoded as a space, repeated keys collected into
 * arrays. Every object it builds has a null prototype and only own keys count as existing, so a key such
 * as `toString` or `hasOwnProperty` is an ordinary key; keys named __proto__/constructor/prototype are
 * dropped. As qs, it reads the first 1 000 parameters (`parameterLimit`) and ignores the rest.
 *
 * What it builds is bounded: a query making more than MAX_CONTAINERS objects and arrays is refused (`QueryTooLarge`) —
 * 15 KB of `0[a][b][c][d][e][f][g][h]=1&1[a]…` made 12 000 of them, 750 KB of heap a request (attack pass 26, F-A).
 * Else it never throws: whatever the input, the answer is a plain tree of strings.
 */
const MAX_DEPTH = 10;
const MAX_INDEX = 20;
/** Parameters read, as qs's `parameterLimit` (Directus's parser): the rest are ignored. */
export const PARAMETER_LIMIT = 1_000;
/** Objects and arrays one query string may make, about 180 bytes each (a filter of 200 `_or` branches of a field's test makes 402). */
export const MAX_CONTAINERS = 1_000;

/** A query string that would make more than MAX_CONTAINERS objects and arrays. */
export class QueryTooLarge extends Error {
  constructor() { super(`The query string nests more than ${MAX_CONTAINERS} objects and lists`); }
}
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

export type QsValue = string | QsValue[] | { [k: string]: QsValue };
type QsObject = { [k: string]: QsValue };

const dict = (): QsObject => Object.create(null) as QsObject;
const own = (o: QsObject, k: string): QsValue | undefined => (Object.hasOwn(o, k) ? o[k] : undefined);
const isIndex = (s: string | undefined): boolean => s === '' || (s !== undefined && /^\d+$/.test(s));

function decode(s: string): string {
  // (most names and values need nothing: no pass over them)
  if (!s.includes('%') && !s.includes('+')) return s;
  const plus = s.replaceAll('+', ' ');
  return percentDecoded(plus) ?? plus; // (a malformed one as it is, told without an exception: attack pass 30, H-1)
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

/** Containers made so far by one parse. */
interface Made { n: number }

const made = (count: Made): void => {
  if (++count.n > MAX_CONTAINERS) throw new QueryTooLarge();
};

/** Assigns `value` at `path` below `node[key]`, creating or converting containers; returns the new node[key]. */
function put(existing: QsValue | undefined, path: readonly string[], at: number, value: string, count: Made): QsValue {
  if (at >= path.length) {
    if (existing === undefined) return value;
    if (Array.isArray(existing)) { existing.push(value); return existing; }
    if (typeof existing === 'string') return [existing, value];
    return existing; // a value where an object already is: qs keeps the object
  }
  const head = path[at] as string;
  if (FORBIDDEN.has(head)) return existing ?? dict();
  if (existing === undefined || typeof existing === 'string') made(count);
  let container: QsValue = existing ?? (isIndex(head) ? [] : dict());
  if (typeof container === 'string') container = isIndex(head) ? [container] : Object.assign(dict(), { [container]: '' });
  if (Array.isArray(container)) {
    // (`a[]=` appends whatever the length, as the qs of Directus 10.10 merges it: 25 `filter[id][_in][]=` values filter by
    // all 25 there — checked on the oracle, 2026-11-30 —, where an index past 20 makes an object)
    const idx = head === '' ? container.length : Number(head);
    if (head !== '' && (!Number.isInteger(idx) || idx < 0 || idx > MAX_INDEX)) { made(count); container = arrayToDict(container); }
    else {
      container[idx] = put(container[idx], path, at + 1, value, count);
      return container;
    }
  }
  const obj = container as QsObject;
  obj[head] = put(own(obj, head), path, at + 1, value, count);
  return obj;
}

export function parseQueryString(qs: string): Record<string, QsValue> {
  const out = dict();
  if (!qs) return out;
  const count: Made = { n: 0 };
  for (const pair of qs.split('&', PARAMETER_LIMIT)) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const key = decode(eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? '' : decode(pair.slice(eq + 1));
    if (!key) continue;
    const path = splitKey(key);
    const root = path[0] as string;
    if (FORBIDDEN.has(root)) continue;
    out[root] = put(own(out, root), path, 1, value, count);
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

/**
 * The query string of a URL as Directus reads one: after the first `?`, up to a `#` — a fragment is no part of it, and
 * a `#` before any `?` leaves none (the router read what follows a `#` as the query: `?fields=id#&access_token=…` and
 * `/users/me#access_token=…` authenticated with a token the access log kept in clear — attack passes 26 F-B, 27 N-2).
 */
export function queryText(url: string): string {
  const q = url.indexOf('?');
  const hash = url.indexOf('#');
  if (q < 0 || (hash >= 0 && hash < q)) return '';
  return hash < 0 ? url.slice(q + 1) : url.slice(q + 1, hash);
}

/** A query string's `access_token` parameters (as written: a credential is no part of a question). */
const TOKEN_PARAM = /(^|&)access_token=[^&]*/g;

/**
 * The question a URL asks: its query string (`queryText`) without its `access_token` — the answer cache's key and the
 * client profiles' question (a token a request holds no question apart, and is never kept as part of a key).
 */
export const questionText = (url: string): string => queryText(url).replace(TOKEN_PARAM, '');
