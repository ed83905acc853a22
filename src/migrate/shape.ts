import type { FieldRef, FilterNode, QueryNode, SelectNode, SortNode } from '../query/ast.js';
import { own } from '../lib/own.js';
import type { SchemaRegistry } from '../query/schema.js';
import type { GuideResource } from './v1-resources.js';

/**
 * A query shape: one legacy request with its values taken out — what a client asks, never with what. Search strings,
 * filter values, ids, limits and bodies' values are values; field names, operators, the sort, the pagination style,
 * aggregates and meta are the shape. Pure.
 */
export interface Shape {
  readonly method: string;
  /** The route template the router matched (`/renders`, `/items/renders/:id`). */
  readonly route: string;
  /** The legacy resource key (`render`, `project`, `account`, `template`, `user`), null for another route. */
  readonly resource: string | null;
  readonly kind: 'list' | 'one' | 'create' | 'update' | 'delete' | 'me' | 'other';
  readonly fields: readonly string[];
  /** Filter paths and operators (`status _eq`, `project.account _in`), sorted, each once. */
  readonly filter: readonly string[];
  /** The filter's tree with every value a `?` (`and(status _eq ?,project _eq ?)`), null without a filter. */
  readonly filterTree: string | null;
  /** The same filter in Directus's JSON form, every value `"?"` (what the proof fills with values of its own). */
  readonly filterJson: unknown;
  readonly search: boolean;
  readonly sort: readonly string[];
  /** How the client pages: `default` (no limit given), `limit`, `offset`, `page`, `all` (limit=-1). */
  readonly pagination: 'default' | 'limit' | 'offset' | 'page' | 'all' | 'none';
  readonly aggregate: readonly string[];
  readonly groupBy: readonly string[];
  readonly meta: readonly string[];
  /** Relations with `deep` options. */
  readonly deep: readonly string[];
  /** A write's top-level body keys (names only), sorted. */
  readonly body: readonly string[];
  /** The query could not be read (the client got a 400): only the route and the parameter names are known. */
  readonly invalid?: readonly string[];
  /** Too large to keep whole: its lists were cut to SHAPE_BYTES (their last item says how many were left out). */
  readonly cut?: true;
}

/** The longest name a shape keeps (a field, a filter path, a body key, a parameter); a longer one is cut with a marker. */
export const NAME_MAX = 120;
/** The most bytes (UTF-8, as JSON) a shape's lists and filter keep together; past it they are cut and the shape says so. */
export const SHAPE_BYTES = 4096;

/**
 * A name as a shape keeps it: on one line (control characters and line separators as U+FFFD, so no report, snippet or log
 * line is split by one), whole up to NAME_MAX characters, else its start and a marker (`title…[cut: 921600 characters]`).
 */
export const cutName = (s: string): string => {
  const line = s.length <= NAME_MAX ? s : `${s.slice(0, NAME_MAX)}…[cut: ${s.length} characters]`;
  return line.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, '\ufffd');
};

/** Where a request landed: its method and route template, and the names of its query parameters. */
export interface RequestPlace {
  readonly method: string;
  readonly route: string;
  readonly params: readonly string[];
}

const dotted = (path: readonly string[]): string => cutName(path.join('.'));
const ref = (f: FieldRef): string => (f.fn ? `${f.fn}(${dotted(f.path)})` : dotted(f.path));
const sel = (s: SelectNode): string => (s.count ? `count(${dotted(s.path)})` : s.fn ? `${s.fn}(${dotted(s.path)})` : dotted(s.path));
const sortKey = (s: SortNode): string => `${s.direction === 'desc' ? '-' : ''}${ref(s.field)}`;
const uniqSorted = (xs: Iterable<string>): string[] => [...new Set(xs)].sort();

/** The filter tree with values replaced by `?`; children of and/or sorted so the order a client wrote them in is not a shape. */
export function filterTree(f: FilterNode, prefix = ''): string {
  switch (f.kind) {
    case 'Compare':
      return `${prefix}${ref(f.field)} ${f.op} ?`;
    case 'And':
    case 'Or':
      return `${f.kind.toLowerCase()}(${f.children.map((c) => filterTree(c, prefix)).sort().join(',')})`;
    case 'Relation':
      return `${f.quantifier}(${dotted(f.path)}:${filterTree(f.filter)})`;
    case 'True':
      return 'true';
  }
}

/** A filter as Directus JSON with every value `"?"` (`{"status":{"_eq":"?"}}`); o2m conditions as `_some` / `_none`. */
export function filterJson(f: FilterNode): unknown {
  switch (f.kind) {
    case 'Compare': {
      const path = f.field.path.map(cutName);
      if (f.field.fn) path[path.length - 1] = `${f.field.fn}(${path.at(-1) ?? ''})`;
      let node: unknown = { [f.op]: '?' };
      for (let i = path.length - 1; i >= 0; i--) node = { [path[i] as string]: node };
      return node;
    }
    case 'And':
    case 'Or':
      return { [`_${f.kind.toLowerCase()}`]: f.children.map(filterJson) };
    case 'Relation': {
      let node: unknown = { [`_${f.quantifier}`]: filterJson(f.filter) };
      for (let i = f.path.length - 1; i >= 0; i--) node = { [cutName(f.path[i] as string)]: node };
      return node;
    }
    case 'True':
      return {};
  }
}

/** Every `path op` a filter names (relation conditions as `renders.status _eq`). */
export function filterPaths(f: FilterNode | null, prefix = ''): string[] {
  if (!f) return [];
  switch (f.kind) {
    case 'Compare':
      return [`${prefix}${ref(f.field)} ${f.op}`];
    case 'And':
    case 'Or':
      return f.children.flatMap((c) => filterPaths(c, prefix));
    case 'Relation':
      return filterPaths(f.filter, `${prefix}${dotted(f.path)}.`);
    case 'True':
      return [];
  }
}

/** The legacy document's singular paths (`PATCH /render/:id`), by their first segment: the resource each writes. */
const SINGULAR_PATHS: Readonly<Record<string, GuideResource>> = { render: 'render' };

/** The legacy resource of a route template, by its collection (`/items/renders/:id` → render); null for any other. */
export function resourceOfRoute(route: string, schemas: SchemaRegistry): { resource: string | null; byId: boolean } {
  if (route === '/users/me') return { resource: 'user', byId: true };
  const parts = route.replace(/^\/items\//, '/').split('/').filter(Boolean);
  const collection = parts[0] ?? '';
  const byId = parts.length > 1;
  for (const s of Object.values(schemas)) if (s.name === collection) return { resource: s.key, byId };
  // the legacy document's singular write path (/render/:id)
  return { resource: own(SINGULAR_PATHS, collection) ?? null, byId };
}

function kindOf(method: string, route: string, resource: string | null, byId: boolean): Shape['kind'] {
  if (route === '/users/me') return method === 'GET' ? 'me' : 'update';
  if (!resource) return 'other';
  if (method === 'GET' || method === 'SEARCH') return byId ? 'one' : 'list';
  if (method === 'POST') return 'create';
  if (method === 'PATCH') return 'update';
  if (method === 'DELETE') return 'delete';
  return 'other';
}

function paginationOf(q: QueryNode | null, params: readonly string[]): Shape['pagination'] {
  if (!q) return 'none';
  if (q.limit === -1) return 'all';
  if (params.includes('page')) return 'page';
  if (params.includes('offset')) return 'offset';
  return params.includes('limit') ? 'limit' : 'default';
}

const EMPTY: readonly string[] = Object.freeze([]);

/** The shape of a read whose query parsed (`q`), or of any other request (`q` null: a write, an unreadable query). */
export function shapeOf(
  place: RequestPlace,
  q: QueryNode | null,
  schemas: SchemaRegistry,
  extra: { bodyKeys?: readonly string[]; invalid?: boolean } = {},
): Shape {
  const { resource, byId } = resourceOfRoute(place.route, schemas);
  const kind = kindOf(place.method, place.route, resource, byId);
  const reads = q !== null && (kind === 'list' || kind === 'one' || kind === 'me');
  const shape: Shape = {
    method: place.method,
    route: place.route,
    resource,
    kind,
    fields: reads ? uniqSorted(q.fields.map(sel)) : EMPTY,
    filter: reads ? uniqSorted(filterPaths(q.filter)) : EMPTY,
    filterTree: reads && q.filter ? filterTree(q.filter) : null,
    filterJson: reads && q.filter ? filterJson(q.filter) : null,
    search: reads ? q.search !== null : false,
    sort: reads ? q.sort.map(sortKey) : EMPTY,
    pagination: reads && kind === 'list' ? paginationOf(q, place.params) : 'none',
    aggregate: reads ? uniqSorted(q.aggregate.map((a) => `${a.fn}(${cutName(a.field)})`)) : EMPTY,
    groupBy: reads ? q.groupBy.map(ref) : EMPTY,
    meta: reads ? uniqSorted(q.meta.map(cutName)) : EMPTY,
    deep: reads ? uniqSorted(Object.keys(q.deep?.children ?? {}).map(cutName)) : EMPTY,
    body: uniqSorted((extra.bodyKeys ?? []).map(cutName)),
    ...(extra.invalid ? { invalid: uniqSorted(place.params.filter((p) => p !== 'access_token').map(cutName)) } : {}),
  };
  return Object.freeze(bounded(shape));
}

const jsonBytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v) ?? '');
const LISTS = ['fields', 'filter', 'sort', 'aggregate', 'groupBy', 'meta', 'deep', 'body', 'invalid'] as const;

/** A shape within SHAPE_BYTES: as it is when it fits, else its lists and filter tree cut in order, `cut` set, no filter JSON. */
function bounded(s: Shape): Shape {
  if (jsonBytes([s.fields, s.filter, s.filterTree, s.filterJson, s.sort, s.aggregate, s.groupBy, s.meta, s.deep, s.body, s.invalid]) <= SHAPE_BYTES) return s;
  let left = SHAPE_BYTES;
  const take = (xs: readonly string[]): string[] => {
    const out: string[] = [];
    for (const [i, x] of xs.entries()) {
      const n = jsonBytes(x) + 1;
      if (n > left) { out.push(`…[cut: ${xs.length - i} more]`); left = 0; break; }
      left -= n;
      out.push(x);
    }
    return out;
  };
  const out: Record<string, unknown> = { ...s, filterJson: null, cut: true };
  for (const k of LISTS) { const xs = s[k]; if (xs) out[k] = take(xs); }
  if (s.filterTree !== null) {
    const keep = Math.max(0, Math.min(s.filterTree.length, Math.floor(left / 3)));
    out.filterTree = keep < s.filterTree.length ? `${s.filterTree.slice(0, keep)}…[cut]` : s.filterTree;
  }
  return out as unknown as Shape;
}

/** The canonical text of a shape: equal for equal shapes, the key it is stored and counted under. */
export function shapeKey(s: Shape): string {
  const parts = [`${s.method} ${s.route}`];
  const add = (name: string, xs: readonly string[] | string | null | boolean) => {
    if (xs === null || xs === false || (Array.isArray(xs) && xs.length === 0)) return;
    parts.push(xs === true ? name : `${name}=${Array.isArray(xs) ? xs.join(',') : String(xs)}`);
  };
  add('fields', s.fields);
  add('filter', s.filterTree);
  add('search', s.search);
  add('sort', s.sort);
  if (s.pagination !== 'none' && s.pagination !== 'default') add('paging', s.pagination);
  add('aggregate', s.aggregate);
  add('groupBy', s.groupBy);
  add('meta', s.meta);
  add('deep', s.deep);
  add('body', s.body);
  if (s.invalid) add('invalid', s.invalid.length ? s.invalid : 'query');
  add('cut', s.cut === true);
  return parts.join(' ');
}
