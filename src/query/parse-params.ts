/** The parsers of the list-valued query parameters (fields, sort, aggregate, groupBy) and the helpers parse-query.ts shares. */
import { Aggregate, FieldRef, Select, Sort, type AggregateFn, type AggregateNode, type SelectNode, type SortNode } from './ast.js';
import type { Issues } from './issues.js';
import { QUERY_CAPS, withinCap } from './list-caps.js';
import { fieldOf, splitFunction } from './parse-filter.js';
import type { ResourceSchema, SchemaRegistry } from './schema.js';

const AGG_FNS: readonly AggregateFn[] = ['count', 'countDistinct', 'sum', 'sumDistinct', 'avg', 'avgDistinct', 'min', 'max'];
const NUMERIC = new Set(['integer', 'float']);

/** Comma string, array, or array of comma strings → trimmed non-empty items; undefined if malformed. */
export function list(raw: unknown): string[] | undefined {
  if (raw === undefined) return [];
  const items = Array.isArray(raw) ? raw : typeof raw === 'object' && raw !== null ? Object.values(raw) : [raw];
  const out: string[] = [];
  for (const it of items) {
    if (typeof it !== 'string') return undefined;
    for (const p of it.split(',')) if (p.trim()) out.push(p.trim());
  }
  return out;
}

export function integer(raw: unknown, name: string, min: number, issues: Issues): number | undefined {
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

export function parseFields(raw: unknown, resource: ResourceSchema, schemas: SchemaRegistry, issues: Issues, maxDepth: number): SelectNode[] {
  const items = list(raw);
  if (!items) {
    issues.add('fields', '"fields" must be a comma-separated string or an array of strings');
    return [Select.create(['*'])];
  }
  if (items.length === 0) return [Select.create(['*'])];
  if (!withinCap(items, QUERY_CAPS.fields, 'fields', 'fields', issues)) return [Select.create(['*'])];
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

export function parseSort(
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
  if (!withinCap(items, QUERY_CAPS.sort, 'sort', 'sort', issues)) return [];
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
    // (PostgreSQL has no order for json: Directus 10.10 answers 500, a database error; the gateway names the field)
    if (last?.type === 'json') {
      issues.add(`sort[${i}]`, `Cannot sort by the json field "${key}"`);
      return;
    }
    out.push(Sort.create(FieldRef.create(path), direction));
  });
  return out;
}

/**
 * An object parameter in either of Directus's forms: bracket notation (already an object) or a JSON string. Undefined
 * when absent or bad (the problem recorded, named after the parameter).
 */
export function objectParam(raw: unknown, name: string, notObject: string, issues: Issues): Record<string, unknown> | undefined {
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

export function parseAggregate(raw: unknown, resource: ResourceSchema, issues: Issues): AggregateNode[] {
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
    if (!withinCap(fields, QUERY_CAPS.aggregate, `aggregate[${fn}]`, `aggregate.${fn}`, issues)) continue;
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
      // (PostgreSQL has no equality or order for json: Directus 10.10 answers 500, a database error; only a count works)
      if (def.type === 'json' && fn !== 'count') {
        issues.add(`aggregate.${fn}`, `"${fn}" cannot be applied to the json field "${f}" (only count)`);
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

export function parseGroupBy(raw: unknown, resource: ResourceSchema, issues: Issues): FieldRef[] {
  const items = list(raw);
  if (!items) {
    issues.add('groupBy', '"groupBy" must be a comma-separated string or an array of strings');
    return [];
  }
  if (!withinCap(items, QUERY_CAPS.groupBy, 'groupBy', 'groupBy', issues)) return [];
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
    // (PostgreSQL has no equality for json: Directus 10.10 answers 500, a database error; the gateway names the field)
    if (def.type === 'json') {
      issues.add(`groupBy[${i}]`, `Cannot group by the json field "${field}"`);
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
