import { And, Compare, FieldRef, Or, Relation, True, type FieldFn, type FilterNode, type Scalar } from './ast.js';
import { resolveDynamic, type DynamicContext } from './dynamic.js';
import type { Issues } from './issues.js';
import { endsWithEscape } from './like.js';
import { QUERY_CAPS, TermCount } from './list-caps.js';
import {
  ALL_OPERATORS,
  DATE_FUNCTIONS,
  OPERATORS_FOR,
  type DateFunction,
  type FieldDef,
  type Operator,
  type ResourceSchema,
  type SchemaRegistry,
} from './schema.js';
import { isUuid } from '../lib/uuid.js';

const OPERATORS = new Set<string>(ALL_OPERATORS);
const LIST_OPS = new Set(['_in', '_nin', '_between', '_nbetween']);
const FLAG_OPS = new Set(['_null', '_nnull', '_empty', '_nempty']);
const MAX_LOGICAL_DEPTH = 64;

export interface FilterContext {
  readonly schemas: SchemaRegistry;
  readonly dynamic: DynamicContext;
  readonly issues: Issues;
  /** The most fields one filter path may chain (MAX_RELATIONAL_DEPTH); default 10. */
  readonly maxRelationalDepth?: number;
  /** The terms of the query's filters counted so far (QUERY_CAPS.filterTerms); parseFilter starts one when not given. */
  readonly terms?: TermCount;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Arrays from qs may arrive as objects with numeric keys; JSON arrays stay arrays. */
function asArray(v: unknown): unknown[] | undefined {
  if (Array.isArray(v)) return v;
  if (isPlainObject(v) && Object.keys(v).every((k) => /^\d+$/.test(k)))
    return Object.keys(v)
      .sort((a, b) => Number(a) - Number(b))
      .map((k) => v[k]);
  return undefined;
}

/** A list written as a JSON array in a bracket value (`filter[d][_between]=["2025-01-01","2025-06-30"]`), as Directus accepts. */
function jsonArray(v: unknown): unknown[] | undefined {
  if (typeof v !== 'string' || !v.trimStart().startsWith('[')) return undefined;
  try {
    const parsed: unknown = JSON.parse(v);
    return Array.isArray(parsed) && parsed.every((x) => x === null || ['string', 'number', 'boolean'].includes(typeof x)) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** `year(date_created)` → { fn: 'year', field: 'date_created' } */
export function splitFunction(key: string): { fn?: DateFunction; field: string; badFn?: string } {
  // (only a key ending in a parenthesis is read by the pattern: a 900 KB name is not scanned for one)
  const m = key.endsWith(')') ? /^(\w+)\(([^()]+)\)$/.exec(key) : null;
  if (!m) return { field: key };
  const fn = m[1] as string;
  if (!(DATE_FUNCTIONS as readonly string[]).includes(fn)) return { field: m[2] as string, badFn: fn };
  return { fn: fn as DateFunction, field: m[2] as string };
}

export function fieldOf(resource: ResourceSchema, name: string): FieldDef | undefined {
  return Object.hasOwn(resource.fields, name) ? resource.fields[name] : undefined;
}

/**
 * Parses a legacy `filter` (a JSON string or a bracket-notation object) into a FilterNode, normalised as
 * Directus does: a bare value means _eq, several keys mean _and, "true"/"false"/"null" are coerced,
 * comma lists split for _in/_nin/_between, logical operators under a field are hoisted, dynamic
 * variables resolved. Every problem is recorded with its path.
 */
export function parseFilter(raw: unknown, resource: ResourceSchema, ctx: FilterContext): FilterNode | null {
  if (raw === undefined || raw === null || raw === '') return null;
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      value = raw; // Directus 10.10 takes a text that is no JSON as a bare value (`_eq` at the root), as below
    }
    // Directus's words (measured on 10.10): `null` is not an object; any other bare value is an `_eq` at the root
    if (value === null) {
      ctx.issues.add('filter', '"filter" must be of type object');
      return null;
    }
  }
  if (Array.isArray(value) && value.length === 0) return null;
  if (!isPlainObject(value)) {
    ctx.issues.add('filter', `Invalid filter key "${Array.isArray(value) ? '0' : '_eq'}" on "${resource.name}"`);
    return null;
  }
  const counted = ctx.terms ? ctx : { ...ctx, terms: new TermCount(ctx.issues) };
  const node = parseLevel(value, resource, 'filter', counted, 0, 0);
  return node.kind === 'True' ? null : node;
}

function combine(kind: 'And' | 'Or', children: FilterNode[]): FilterNode {
  if (kind === 'Or' && children.some((c) => c.kind === 'True')) return True;
  const kept = children.filter((c) => c.kind !== 'True');
  if (kept.length === 0) return True;
  if (kept.length === 1) return kept[0] as FilterNode;
  return kind === 'And' ? And.create(kept) : Or.create(kept);
}

/** `_and` / `_or`: a list of filters, each parsed by `item`, combined; an empty `_or` is dropped. */
function logical(
  key: '_and' | '_or',
  val: unknown,
  path: string,
  ctx: FilterContext,
  item: (x: unknown, at: string) => FilterNode | undefined,
): FilterNode | undefined {
  const list = asArray(val);
  if (!list) {
    ctx.issues.add(path, `"${key}" has to be an array of filter objects`);
    return undefined;
  }
  if (ctx.terms?.add(list.length) === false) return undefined; // past the cap: its items are not parsed
  const children: FilterNode[] = [];
  list.forEach((x, i) => {
    const n = item(x, `${path}[${i}]`);
    if (n) children.push(n);
  });
  if (key === '_or' && children.length === 0) return undefined;
  return combine(key === '_and' ? 'And' : 'Or', children);
}

function parseLevel(
  obj: Record<string, unknown>,
  resource: ResourceSchema,
  path: string,
  ctx: FilterContext,
  depth: number,
  relDepth: number,
): FilterNode {
  if (depth > MAX_LOGICAL_DEPTH) {
    ctx.issues.add(path, 'Filter is nested too deeply');
    return True;
  }
  const parts: FilterNode[] = [];
  for (const key of Object.keys(obj)) {
    const val = obj[key];
    const here = `${path}.${key}`;
    if (key === '_and' || key === '_or') {
      const node = logical(key, val, here, ctx, (item, at) => {
        if (isPlainObject(item)) return parseLevel(item, resource, at, ctx, depth + 1, relDepth);
        ctx.issues.add(at, `Every item of "${key}" has to be a filter object`);
        return undefined;
      });
      if (node) parts.push(node);
      continue;
    }
    parts.push(parseField(key, val, resource, here, ctx, depth, relDepth));
  }
  return combine('And', parts);
}

function parseField(
  key: string,
  val: unknown,
  resource: ResourceSchema,
  path: string,
  ctx: FilterContext,
  depth: number,
  relDepth: number,
): FilterNode {
  // `_and`/`_or` under a field nest as deeply as at the top level: the same bound applies
  if (depth > MAX_LOGICAL_DEPTH) {
    ctx.issues.add(path, 'Filter is nested too deeply');
    return True;
  }
  if (ctx.terms?.add(isPlainObject(val) ? Object.keys(val).length : 1) === false) return True;
  const split = splitFunction(key);
  const { field: fieldName, badFn } = split;
  // count(<one-to-many>) compares the number of related items (Directus 10)
  const fn: FieldFn | undefined = badFn === 'count' ? 'count' : split.fn;
  if (badFn && badFn !== 'count') {
    ctx.issues.add(path, `Invalid function specified "${badFn}"`);
    return True;
  }
  const field = fieldOf(resource, fieldName);
  if (!field) {
    ctx.issues.add(path, `Invalid filter key "${key}" on "${resource.name}"`);
    return True;
  }
  if (fn === 'count' && field.relation?.kind !== 'o2m') {
    ctx.issues.add(path, `count() needs a one-to-many field, not "${field.name}"`);
    return True;
  }
  if (fn && fn !== 'count' && field.type !== 'timestamp') {
    ctx.issues.add(path, `Function "${fn}" needs a date field, not "${field.name}"`);
    return True;
  }
  // a bare value means _eq
  if (!isPlainObject(val)) {
    if (Array.isArray(val)) {
      ctx.issues.add(path, `The filter value for "${key}" has to be an object of operators`);
      return True;
    }
    return compare(FieldRef.create([fieldName], fn), field, '_eq', val, path, ctx, fn);
  }
  const parts: FilterNode[] = [];
  for (const k of Object.keys(val)) {
    const v = val[k];
    const here = `${path}.${k}`;
    if (k === '_and' || k === '_or') {
      // hoisted: {field: {_or: [A, B]}} → {_or: [{field: A}, {field: B}]}
      const node = logical(k, v, here, ctx, (item, at) => parseField(key, item, resource, at, ctx, depth + 1, relDepth));
      if (node) parts.push(node);
      continue;
    }
    if (k === '_some' || k === '_none') {
      if (field.relation?.kind !== 'o2m') {
        ctx.issues.add(here, `"${k}" can only be used with top level relational alias field`);
        continue;
      }
      if (relDepth > 0) {
        ctx.issues.add(here, `"${k}" can only be used with top level relational alias field`);
        continue;
      }
      if (!isPlainObject(v)) {
        ctx.issues.add(here, `"${k}" has to be a filter object`);
        continue;
      }
      const related = ctx.schemas[field.relation.resource] as ResourceSchema;
      parts.push(Relation.create([fieldName], k === '_some' ? 'some' : 'none', parseLevel(v, related, here, ctx, depth + 1, relDepth + 1)));
      continue;
    }
    if (k.startsWith('_')) {
      if (!OPERATORS.has(k)) {
        ctx.issues.add(here, `"${fn ? 'integer' : field.type}" field type does not contain the "${k}" filter operator`);
        continue;
      }
      parts.push(compare(FieldRef.create([fieldName], fn), field, k as Operator, v, here, ctx, fn));
      continue;
    }
    // relational nesting
    if (!field.relation) {
      ctx.issues.add(here, `"${field.type}" field type does not contain the "${k}" filter operator`);
      continue;
    }
    // this field and the one below it make relDepth + 2 fields on the path
    if (relDepth + 2 > (ctx.maxRelationalDepth ?? 10)) {
      ctx.issues.add(here, 'Max relational depth exceeded');
      continue;
    }
    const related = ctx.schemas[field.relation.resource] as ResourceSchema;
    const inner = parseLevel({ [k]: v }, related, path, ctx, depth + 1, relDepth + 1);
    if (field.relation.kind === 'o2m') parts.push(inner.kind === 'True' ? True : Relation.create([fieldName], 'some', inner));
    else parts.push(prefix(inner, fieldName));
  }
  return combine('And', parts);
}

/** Prefixes every path of a filter parsed in a related (m2o) resource with the relation field. */
function prefix(node: FilterNode, field: string): FilterNode {
  switch (node.kind) {
    case 'Compare':
      return Compare.create(FieldRef.create([field, ...node.field.path], node.field.fn), node.op, node.value);
    case 'And':
      return And.create(node.children.map((c) => prefix(c, field)));
    case 'Or':
      return Or.create(node.children.map((c) => prefix(c, field)));
    case 'Relation':
      return Relation.create([field, ...node.path], node.quantifier, node.filter);
    case 'True':
      return node;
  }
}

function coerceKeyword(v: unknown): unknown {
  if (v === 'true') return true;
  if (v === 'false') return false;
  if (v === 'null' || v === 'NULL') return null;
  return v;
}

function compare(
  ref: FieldRef,
  field: FieldDef,
  op: Operator,
  rawValue: unknown,
  path: string,
  ctx: FilterContext,
  fn: FieldFn | undefined,
): FilterNode {
  const type = fn ? 'integer' : field.type;
  if (!OPERATORS_FOR[type].has(op)) {
    ctx.issues.add(path, `"${type}" field type does not contain the "${op}" filter operator`);
    return True;
  }
  if (FLAG_OPS.has(op)) {
    const v = rawValue === '' ? true : coerceKeyword(rawValue);
    if (typeof v !== 'boolean') {
      ctx.issues.add(path, `"${op}" has to be a boolean`);
      return True;
    }
    return Compare.create(ref, op, v);
  }
  if (LIST_OPS.has(op)) {
    let list = asArray(rawValue) ?? jsonArray(rawValue);
    if (!list)
      list =
        typeof rawValue === 'string' ? rawValue.split(',') : rawValue === undefined || rawValue === null || isPlainObject(rawValue) ? [] : [rawValue];
    if (list.length === 0) {
      ctx.issues.add(path, `"${op}" has to be an array of values`);
      return True;
    }
    if (list.length > QUERY_CAPS.filterValues) {
      ctx.issues.add(path, `"${op}" has ${list.length} values; at most ${QUERY_CAPS.filterValues} are allowed`);
      return True;
    }
    if ((op === '_between' || op === '_nbetween') && list.length !== 2) {
      ctx.issues.add(path, `"${op}" has to be an array of exactly two values`);
      return True;
    }
    const out: Scalar[] = [];
    for (const [i, item] of list.entries()) {
      const c = castScalar(item, type, op, `${path}[${i}]`, field.name, ctx);
      if (c === undefined) return True;
      out.push(c);
    }
    return Compare.create(ref, op, out);
  }
  const c = castScalar(rawValue, type, op, path, field.name, ctx);
  return c === undefined ? True : Compare.create(ref, op, c);
}

/** The operators whose LIKE pattern ends with the value (`%v`). */
const ENDS_OPS = new Set(['_ends_with', '_nends_with', '_iends_with', '_niends_with']);

/** Resolves and casts one filter value for a field type; undefined after recording an issue. */
function castScalar(raw: unknown, type: string, op: string, path: string, fieldName: string, ctx: FilterContext): Scalar | undefined {
  const r = resolveDynamic(raw, ctx.dynamic);
  if (!r.ok) {
    ctx.issues.add(path, r.reason);
    return undefined;
  }
  const v = coerceKeyword(r.value);
  if (v === null) return null;
  if (typeof v === 'object' || v === undefined) {
    ctx.issues.add(path, `The filter value for "${op}" has to be a string, number, or boolean`);
    return undefined;
  }
  if (v === '') {
    ctx.issues.add(path, `You can't filter for an empty string in "${op}". Use "_empty" or "_nempty" instead`);
    return undefined;
  }
  // a text ending the LIKE pattern with its escape character (Directus answers 500: PostgreSQL refuses the pattern)
  if ((type === 'string' || type === 'text') && ENDS_OPS.has(op) && typeof v === 'string' && endsWithEscape(v)) {
    ctx.issues.add(path, `The filter value for "${op}" on "${fieldName}" ends with the escape character "\\": double it to look for a backslash`);
    return undefined;
  }
  switch (type) {
    case 'integer':
    case 'float': {
      const n = typeof v === 'number' ? v : typeof v === 'boolean' ? Number(v) : Number(v);
      if (!Number.isFinite(n)) {
        ctx.issues.add(path, `The filter value for "${op}" on "${fieldName}" has to be a number`);
        return undefined;
      }
      return n;
    }
    case 'timestamp': {
      if (op === '_contains' || op === '_ncontains') return String(v);
      const t = typeof v === 'string' ? Date.parse(v) : NaN;
      if (Number.isNaN(t)) {
        ctx.issues.add(path, `Invalid DateTime format in field "${fieldName}"`);
        return undefined;
      }
      return new Date(t).toISOString();
    }
    case 'uuid': {
      if (!isUuid(v)) {
        ctx.issues.add(path, `The filter value for "${op}" on "${fieldName}" has to be a uuid`);
        return undefined;
      }
      return v.toLowerCase();
    }
    case 'boolean': {
      if (typeof v === 'boolean') return v;
      if (v === 1 || v === '1') return true;
      if (v === 0 || v === '0') return false;
      ctx.issues.add(path, `The filter value for "${op}" on "${fieldName}" has to be a boolean`);
      return undefined;
    }
    default:
      return typeof v === 'string' ? v : String(v);
  }
}
