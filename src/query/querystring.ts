/**
 * Query-string parser with bracket notation, as Directus parses it (qs, depth 10): `filter[a][_eq]=x`,
 * `fields[]=a&fields[]=b`, `aggregate[count]=*`, `+` decoded as a space, repeated keys collected into
 * arrays. Keys named __proto__/constructor/prototype are dropped.
 */
const MAX_DEPTH = 10;
const MAX_INDEX = 20;
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

export type QsValue = string | QsValue[] | { [k: string]: QsValue };

function decode(s: string): string {
  const plus = s.replace(/\+/g, ' ');
  try { return decodeURIComponent(plus); } catch { return plus; }
}

function splitKey(key: string): string[] {
  const first = key.indexOf('[');
  if (first <= 0) return [key];
  const parts = [key.slice(0, first)];
  const re = /\[([^\[\]]*)\]/g;
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

function assign(target: Record<string, QsValue>, path: string[], value: string): void {
  let node: Record<string, QsValue> | QsValue[] = target;
  for (let i = 0; i < path.length; i++) {
    const raw = path[i] as string;
    const isLast = i === path.length - 1;
    if (FORBIDDEN.has(raw)) return;
    if (Array.isArray(node)) {
      const idx = raw === '' ? node.length : Number(raw);
      if (!Number.isInteger(idx) || idx < 0 || idx > MAX_INDEX) {
        // qs: out-of-range or non-numeric index turns the array into an object
        const obj: Record<string, QsValue> = Object.fromEntries(node.map((v, k) => [String(k), v]));
        return assignConverted(target, path, i, obj, value);
      }
      if (isLast) { node[idx] = value; return; }
      const nextIsArray = path[i + 1] === '' || /^\d+$/.test(path[i + 1] as string);
      node[idx] ??= nextIsArray ? [] : {};
      const child: QsValue = node[idx] as QsValue;
      if (typeof child === 'string') return;
      node = child;
      continue;
    }
    if (isLast) {
      const existing: QsValue | undefined = node[raw];
      if (existing === undefined) node[raw] = value;
      else if (Array.isArray(existing)) existing.push(value);
      else if (typeof existing === 'string') node[raw] = [existing, value];
      return;
    }
    const nextIsArray = path[i + 1] === '' || /^\d+$/.test(path[i + 1] as string);
    let child: QsValue | undefined = node[raw];
    if (child === undefined) { child = nextIsArray ? [] : {}; node[raw] = child; }
    else if (typeof child === 'string') { child = nextIsArray ? [child] : { [child]: '' }; node[raw] = child; }
    node = child as Record<string, QsValue> | QsValue[];
  }
}

function assignConverted(target: Record<string, QsValue>, path: string[], at: number, obj: Record<string, QsValue>, value: string): void {
  // replace the array found at path[0..at) with obj, then continue assigning inside obj
  let parent: Record<string, QsValue> | QsValue[] = target;
  for (let j = 0; j < at - 1; j++) parent = (parent as Record<string, QsValue>)[path[j] as string] as Record<string, QsValue>;
  (parent as Record<string, QsValue>)[path[at - 1] as string] = obj;
  assign(obj as Record<string, QsValue>, path.slice(at), value);
}

export function parseQueryString(qs: string): Record<string, QsValue> {
  const out: Record<string, QsValue> = Object.create(null);
  if (!qs) return out;
  for (const pair of qs.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const key = decode(eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? '' : decode(pair.slice(eq + 1));
    if (!key) continue;
    assign(out, splitKey(key), value);
  }
  return { ...out };
}
