import {
  Aggregate,
  FieldRef,
  Query,
  Select,
  Sort,
  type AggregateFn,
  type AggregateNode,
  type DeepNode,
  type FilterNode,
  type MetaKey,
  type QueryNode,
  type SelectNode,
  type SortNode,
} from './ast.js';
import type { DynamicContext } from './dynamic.js';
import { Issues } from './issues.js';
import { fieldOf, parseFilter, splitFunction } from './parse-filter.js';
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

const AGG_FNS: readonly AggregateFn[] = ['count', 'countDistinct', 'sum', 'sumDistinct', 'avg', 'avgDistinct', 'min', 'max'];
const NUMERIC = new Set(['integer', 'float']);

/** Comma string, array, or array of comma strings → trimmed non-empty items; undefined if malformed. */
function list(raw: unknown): string[] | undefined {
  if (raw === undefined) return [];
  const items = Array.isArray(raw) ? raw : typeof raw === 'object' && raw !== null ? Object.values(raw) : [raw];
  const out: string[] = [];
  for (const it of items) {
    if (typeof it !== 'string') return undefined;
    for (const p of it.split(',')) if (p.trim()) out.push(p.trim());
  }
  return out;
}

function integer(raw: unknown, name: string, min: number, issues: Issues): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' && typeof raw !== 'number') {
    issues.add(name, `"${name}" must be a number`);
    return undefined;
  }
  const n = Number(raw);
  if (Number.isNaN(n)) {
    issues.add(name, `"${name}" must be a number`);
    return undefined;
  }
  if (!Number.isInteger(n)) {
    issues.add(name, `"${name}" must be an integer`);
    return undefined;
  }
  if (n < min) {
    issues.add(name, `"${name}" must be greater than or equal to ${min}`);
    return undefined;
  }
  return n;
}

/** Checks a dotted path through relations; `allowO2m` for fields selection. Returns false after an issue. */
function checkPath(
  path: string[],
  resource: ResourceSchema,
  schemas: SchemaRegistry,
  where: string,
  issues: Issues,
  allowO2m: boolean,
  allowStar: boolean,
): boolean {
  let current: ResourceSchema = resource;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i] as string;
    const last = i === path.length - 1;
    if (seg === '*' && allowStar && last) return true;
    const f = fieldOf(current, seg);
    if (!f) {
      issues.add(where, `Field "${path.slice(0, i + 1).join('.')}" does not exist on "${resource.name}"`);
      return false;
    }
    if (last) return true;
    if (!f.relation || (f.relation.kind === 'o2m' && !allowO2m)) {
      issues.add(
        where,
        f.relation ? `"${seg}" is a one-to-many field and cannot be used in ${where.split('[')[0]}` : `"${seg}" is not a relational field`,
      );
      return false;
    }
    current = schemas[f.relation.resource] as ResourceSchema;
  }
  return true;
}

function parseFields(raw: unknown, resource: ResourceSchema, schemas: SchemaRegistry, issues: Issues, maxDepth: number): SelectNode[] {
  const items = list(raw);
  if (!items) {
    issues.add('fields', '"fields" must be a comma-separated string or an array of strings');
    return [Select.create(['*'])];
  }
  if (items.length === 0) return [Select.create(['*'])];
  const out: SelectNode[] = [];
  items.forEach((item, i) => {
    const { fn, field, badFn } = splitFunction(item);
    if (badFn === 'count') {
      // count(<one-to-many>): the number of related items (Directus 10)
      if (fieldOf(resource, field)?.relation?.kind !== 'o2m') issues.add(`fields[${i}]`, `count() needs a one-to-many field, not "${field}"`);
      else out.push(Select.count(field));
      return;
    }
    if (badFn) {
      issues.add(`fields[${i}]`, `Invalid function specified "${badFn}"`);
      return;
    }
    if (fn) {
      const f = fieldOf(resource, field);
      if (!f || f.type !== 'timestamp') {
        issues.add(`fields[${i}]`, `Function "${fn}" needs a date field, not "${field}"`);
        return;
      }
      out.push(Select.create([field], fn));
      return;
    }
    const path = item.split('.');
    if (path.some((p) => p === '')) {
      issues.add(`fields[${i}]`, `Invalid field "${item}"`);
      return;
    }
    if (path.length > maxDepth) {
      issues.add(`fields[${i}]`, 'Max relational depth exceeded');
      return;
    }
    if (path.slice(0, -1).includes('*')) {
      if (path.every((p) => p === '*')) {
        out.push(Select.create(path));
        return;
      }
      issues.add(`fields[${i}]`, `Invalid field "${item}"`);
      return;
    }
    const unknownAt = firstUnknown(path, resource, schemas);
    // an unknown field selects nothing, as Directus drops it (behind a relation the related object stays: {})
    if (unknownAt >= 0) {
      out.push(Select.create(path.slice(0, unknownAt + 1)));
      return;
    }
    if (checkPath(path, resource, schemas, `fields[${i}]`, issues, true, true)) out.push(Select.create(path));
  });
  return out;
}

/**
 * The index of a `fields` path's first unknown segment reached through relations (what Directus drops), or -1 — also
 * when the path meets `*` or a field that is not a relation first (checkPath judges those).
 */
function firstUnknown(path: readonly string[], resource: ResourceSchema, schemas: SchemaRegistry): number {
  let current: ResourceSchema = resource;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i] as string;
    if (seg === '*') return -1;
    const f = fieldOf(current, seg);
    if (!f) return i;
    if (!f.relation) return -1;
    current = schemas[f.relation.resource] as ResourceSchema;
  }
  return -1;
}

function parseSort(
  raw: unknown,
  resource: ResourceSchema,
  schemas: SchemaRegistry,
  issues: Issues,
  aggregateKeys: Set<string> | null,
  maxDepth: number,
): SortNode[] {
  const items = list(raw);
  if (!items) {
    issues.add('sort', '"sort" must be a comma-separated string or an array of strings');
    return [];
  }
  const out: SortNode[] = [];
  items.forEach((item, i) => {
    const direction = item.startsWith('-') ? 'desc' : 'asc';
    const key = item.replace(/^[-+]/, '');
    if (aggregateKeys && aggregateKeys.has(key)) {
      out.push(Sort.create(FieldRef.create(key.split('.')), direction));
      return;
    }
    const { fn, field, badFn } = splitFunction(key);
    if (badFn === 'count') {
      // count(<one-to-many>): by the number of related items (Directus 10)
      if (fieldOf(resource, field)?.relation?.kind !== 'o2m') issues.add(`sort[${i}]`, `count() needs a one-to-many field, not "${field}"`);
      else out.push(Sort.create(FieldRef.create([field], 'count'), direction));
      return;
    }
    if (badFn) {
      issues.add(`sort[${i}]`, `Invalid function specified "${badFn}"`);
      return;
    }
    if (fn) {
      const f = fieldOf(resource, field);
      if (!f || f.type !== 'timestamp') {
        issues.add(`sort[${i}]`, `Function "${fn}" needs a date field, not "${field}"`);
        return;
      }
      out.push(Sort.create(FieldRef.create([field], fn), direction));
      return;
    }
    const path = key.split('.');
    if (path.length > maxDepth) {
      issues.add(`sort[${i}]`, 'Max relational depth exceeded');
      return;
    }
    if (!checkPath(path, resource, schemas, `sort[${i}]`, issues, false, false)) return;
    // the field the path ends at (a one-to-many one, at any depth, has no single value to sort by)
    let owner: ResourceSchema | undefined = resource;
    for (const seg of path.slice(0, -1)) owner = owner ? schemas[fieldOf(owner, seg)?.relation?.resource ?? ''] : undefined;
    const last = owner ? fieldOf(owner, path[path.length - 1] as string) : undefined;
    if (last?.relation?.kind === 'o2m') {
      issues.add(`sort[${i}]`, `Cannot sort by the one-to-many field "${key}"`);
      return;
    }
    out.push(Sort.create(FieldRef.create(path), direction));
  });
  return out;
}

/**
 * `alias[name]=field` (or a JSON object): another name for a top-level field, for `fields` and `deep` — one relation
 * asked twice with different `deep` options. Names and fields are plain (no dots); the field must exist; a name must not
 * be a field already.
 */
function parseAlias(raw: unknown, resource: ResourceSchema, issues: Issues): Record<string, string> | undefined {
  const value = objectParam(raw, 'alias', '"alias" must be an object', issues);
  if (!value) return undefined;
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

/**
 * An object parameter in either of Directus's forms: bracket notation (already an object) or a JSON string. Undefined
 * when absent or bad (the problem recorded, named after the parameter).
 */
function objectParam(raw: unknown, name: string, notObject: string, issues: Issues): Record<string, unknown> | undefined {
  if (raw === undefined || raw === '') return undefined;
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      issues.add(name, `Invalid JSON for ${name} object`);
      return undefined;
    }
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    issues.add(name, notObject);
    return undefined;
  }
  return value as Record<string, unknown>;
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
  for (const key of Object.keys(raw)) {
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

function parseAggregate(raw: unknown, resource: ResourceSchema, issues: Issues): AggregateNode[] {
  const value = objectParam(raw, 'aggregate', 'Invalid aggregate object', issues);
  if (!value) return [];
  const out: AggregateNode[] = [];
  for (const [fn, fieldsRaw] of Object.entries(value)) {
    if (!(AGG_FNS as readonly string[]).includes(fn)) {
      issues.add(`aggregate.${fn}`, `Invalid aggregate function "${fn}"`);
      continue;
    }
    const fields = list(fieldsRaw);
    if (!fields || fields.length === 0) {
      issues.add(`aggregate.${fn}`, `"aggregate[${fn}]" needs one or more field names`);
      continue;
    }
    for (const f of fields) {
      if (f === '*') {
        if (fn !== 'count') {
          issues.add(`aggregate.${fn}`, `"*" can only be used with count`);
          continue;
        }
        out.push(Aggregate.create('count', '*'));
        continue;
      }
      const def = fieldOf(resource, f);
      if (!def) {
        issues.add(`aggregate.${fn}`, `Field "${f}" does not exist on "${resource.name}"`);
        continue;
      }
      if (def.type === 'alias') {
        issues.add(`aggregate.${fn}`, `Cannot aggregate the relational field "${f}"`);
        continue;
      }
      if (/^(sum|avg)/.test(fn) && !NUMERIC.has(def.type)) {
        issues.add(`aggregate.${fn}`, `"${fn}" needs a numeric field, and "${f}" is ${def.type}`);
        continue;
      }
      out.push(Aggregate.create(fn as AggregateFn, f));
    }
  }
  return out;
}

function parseGroupBy(raw: unknown, resource: ResourceSchema, issues: Issues): FieldRef[] {
  const items = list(raw);
  if (!items) {
    issues.add('groupBy', '"groupBy" must be a comma-separated string or an array of strings');
    return [];
  }
  const out: FieldRef[] = [];
  items.forEach((item, i) => {
    const { fn, field, badFn } = splitFunction(item);
    if (badFn) {
      issues.add(`groupBy[${i}]`, `Invalid function specified "${badFn}"`);
      return;
    }
    const def = fieldOf(resource, field);
    if (!def) {
      issues.add(`groupBy[${i}]`, `Field "${field}" does not exist on "${resource.name}"`);
      return;
    }
    if (def.type === 'alias') {
      issues.add(`groupBy[${i}]`, `Cannot group by the relational field "${field}"`);
      return;
    }
    if (fn && def.type !== 'timestamp') {
      issues.add(`groupBy[${i}]`, `Function "${fn}" needs a date field, not "${field}"`);
      return;
    }
    out.push(FieldRef.create([field], fn));
  });
  return out;
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
