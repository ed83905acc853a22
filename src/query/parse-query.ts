import {
  FieldRef,
  Query,
  type DeepNode,
  type FilterNode,
  type MetaKey,
  type QueryNode,
  type SortNode,
} from './ast.js';
import type { DynamicContext } from './dynamic.js';
import { Issues } from './issues.js';
import { QUERY_CAPS, withinCap } from './list-caps.js';
import { fieldOf, parseFilter } from './parse-filter.js';
import { integer, list, objectParam, parseAggregate, parseFields, parseGroupBy, parseSort } from './parse-params.js';
import { withAliases, type ResourceSchema, type SchemaRegistry } from './schema.js';

export interface ParseContext {
  readonly schemas: SchemaRegistry;
  readonly dynamic: DynamicContext;
  readonly limitDefault: number;
  readonly limitMax?: number;
  /** MAX_RELATIONAL_DEPTH: the most fields a path may chain (fields, filter, sort), as Directus counts it. Default 10. */
  readonly maxRelationalDepth?: number;
}

export const DEFAULT_MAX_RELATIONAL_DEPTH = 10;

/**
 * `alias[name]=field` (or a JSON object): another name for a top-level field, for `fields` and `deep` — one relation
 * asked twice with different `deep` options. Names and fields are plain (no dots); the field must exist; a name must not
 * be a field already.
 */
function parseAlias(raw: unknown, resource: ResourceSchema, issues: Issues): Record<string, string> | undefined {
  const value = objectParam(raw, 'alias', '"alias" must be an object', issues);
  if (!value || !withinCap(Object.keys(value), QUERY_CAPS.alias, 'alias', 'alias', issues)) return undefined;
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, of] of Object.entries(value)) {
    const at = `alias.${name}`;
    if (typeof of !== 'string') { issues.add(at, '"alias" values must be strings'); continue; }
    if (name.includes('.') || of.includes('.')) { issues.add(at, '"alias" key/value can\'t contain a period character'); continue; }
    // a name becomes a key of the answer and of the schema lookup: plain field names only (never `__proto__` & co.)
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name) || name in Object.prototype) { issues.add(at, `"${name}" is not a valid alias name`); continue; }
    if (!fieldOf(resource, of)) { issues.add(at, `Field "${of}" does not exist on "${resource.name}"`); continue; }
    if (fieldOf(resource, name)) { issues.add(at, `"${name}" is already a field of "${resource.name}"`); continue; }
    out[name] = of;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

const DEEP_OPTIONS = new Set(['_filter', '_search', '_sort', '_limit', '_offset', '_page']);

/**
 * `deep` (bracket or JSON form): under each relational field, `_`-options chosen like top-level parameters for its
 * related items — `_filter`, `_search`, `_sort`, `_limit`, `_offset`, `_page` — and further relations below it. Paths count
 * against MAX_RELATIONAL_DEPTH; an unknown field or option is a 400 naming it.
 */
function parseDeep(raw: unknown, resource: ResourceSchema, ctx: ParseContext, issues: Issues, maxDepth: number): DeepNode | undefined {
  const value = objectParam(raw, 'deep', '"deep" must be an object', issues);
  return value ? deepLevel(value, resource, ctx, issues, 'deep', 0, maxDepth) : undefined;
}

function deepLevel(
  raw: Record<string, unknown>, resource: ResourceSchema, ctx: ParseContext, issues: Issues, path: string, depth: number, maxDepth: number,
): DeepNode {
  const children: Record<string, DeepNode> = Object.create(null) as Record<string, DeepNode>;
  let filter: FilterNode | null = null;
  let search: string | null = null;
  let sort: SortNode[] = [];
  let limit: number | undefined;
  let offset = 0;
  let page: number | undefined;
  const keys = Object.keys(raw);
  if (!withinCap(keys, QUERY_CAPS.deepKeys, 'deep', path, issues)) return { filter, search, sort, offset, children };
  for (const key of keys) {
    const v = raw[key];
    const at = `${path}.${key}`;
    if (key.startsWith('_')) {
      if (depth === 0) continue; // options belong to a relation
      if (!DEEP_OPTIONS.has(key)) { issues.add(at, `Unknown deep option "${key}"`); continue; }
      if (key === '_filter') filter = parseFilter(v, resource, { schemas: ctx.schemas, dynamic: ctx.dynamic, issues, maxRelationalDepth: maxDepth });
      else if (key === '_search') { if (typeof v === 'string') search = v.length > 0 ? v : null; else issues.add(at, '"_search" must be a string'); }
      else if (key === '_sort') sort = parseSort(v, resource, ctx.schemas, issues, null, maxDepth);
      else if (key === '_limit') limit = integer(v, '_limit', -1, issues);
      else if (key === '_offset') offset = integer(v, '_offset', 0, issues) ?? 0;
      else page = integer(v, '_page', 0, issues);
      continue;
    }
    const f = fieldOf(resource, key);
    if (!f?.relation) continue; // Directus ignores deep on a field that is not a relation (or is no field)
    if (depth + 1 >= maxDepth) { issues.add(at, 'Max relational depth exceeded'); continue; }
    if (!v || typeof v !== 'object' || Array.isArray(v)) { issues.add(at, `"${at}" must be an object`); continue; }
    children[key] = deepLevel(v as Record<string, unknown>, ctx.schemas[f.relation.resource] as ResourceSchema, ctx, issues, at, depth + 1, maxDepth);
  }
  // _page as the top level's page: 1-indexed, over the limit (the default one when none is given)
  if (page) offset = (limit === undefined ? ctx.limitDefault : limit === -1 ? 0 : limit) * (page - 1);
  return Object.freeze({ filter, search, sort, ...(limit !== undefined ? { limit } : {}), offset, children: Object.freeze(children) });
}

function parseMeta(raw: unknown, issues: Issues): MetaKey[] {
  const items = list(raw);
  if (!items) {
    issues.add('meta', '"meta" must be a comma-separated string or an array of strings');
    return [];
  }
  const out: MetaKey[] = [];
  items.forEach((m, i) => {
    if (m === '*') {
      for (const k of ['total_count', 'filter_count'] as const) if (!out.includes(k)) out.push(k);
    } else if (m === 'total_count' || m === 'filter_count') {
      if (!out.includes(m)) out.push(m);
    } else issues.add(`meta[${i}]`, `"meta[${i}]" must be one of [total_count, filter_count]`);
  });
  return out;
}

/**
 * Parses every legacy query parameter into one QueryNode, with Directus's semantics (page is 1-indexed
 * and wins over offset, limit -1 means all, 0 none). Throws 400 INVALID_QUERY listing every problem.
 */
export function parseQuery(raw: Readonly<Record<string, unknown>>, resource: ResourceSchema, ctx: ParseContext): QueryNode {
  const issues = new Issues();
  const maxDepth = Math.max(2, ctx.maxRelationalDepth ?? DEFAULT_MAX_RELATIONAL_DEPTH);
  const aggregate = parseAggregate(raw.aggregate, resource, issues);
  const groupBy = parseGroupBy(raw.groupBy, resource, issues);
  const aggregateKeys =
    aggregate.length > 0 || groupBy.length > 0
      ? new Set([...aggregate.flatMap((a) => (a.field === '*' ? [a.fn] : [a.fn, `${a.fn}.${a.field}`])), ...groupBy.map((g) => FieldRef.key(g))])
      : null;
  const alias = parseAlias(raw.alias, resource, issues);
  const aliased = withAliases(resource, alias);
  const fields = aggregateKeys ? [] : parseFields(raw.fields, aliased, ctx.schemas, issues, maxDepth);
  const filter = parseFilter(raw.filter, resource, { schemas: ctx.schemas, dynamic: ctx.dynamic, issues, maxRelationalDepth: maxDepth });
  let search: string | null = null;
  if (raw.search !== undefined) {
    if (typeof raw.search !== 'string') issues.add('search', '"search" must be a string');
    else if (raw.search.length > 0) search = raw.search;
  }
  const sort = parseSort(raw.sort, resource, ctx.schemas, issues, aggregateKeys, maxDepth);
  let limit = integer(raw.limit, 'limit', -1, issues);
  if (ctx.limitMax !== undefined) {
    if (limit === undefined) limit = Math.min(ctx.limitDefault, ctx.limitMax);
    else if (limit === -1) limit = ctx.limitMax;
    else if (limit > ctx.limitMax) issues.add('limit', `"limit" must be less than or equal to ${ctx.limitMax}`);
  }
  const effectiveLimit = limit ?? ctx.limitDefault;
  let offset = integer(raw.offset, 'offset', 0, issues) ?? 0;
  const page = integer(raw.page, 'page', 0, issues);
  if (page && effectiveLimit && effectiveLimit !== -1) offset = effectiveLimit * (page - 1);
  const meta = parseMeta(raw.meta, issues);
  const deep = parseDeep(raw.deep, aliased, ctx, issues, maxDepth);
  issues.throwIfAny();
  const limitOffset = { limit: effectiveLimit, offset };
  const extras = { ...(deep ? { deep } : {}), ...(alias ? { alias } : {}) };
  return Query.create({ resource: resource.key, fields, filter, search, sort, ...limitOffset, meta, aggregate, groupBy, ...extras });
}
