import type { Mappings } from '../config/mappings.js';
import { ID_TYPES } from '../translate/ids.js';
import { planQuery, type Plan } from '../plan/plan.js';
import type { QueryNode } from '../query/ast.js';
import { parseQuery } from '../query/parse-query.js';
import { equivalentOf, type Equivalent } from './equivalent.js';
import { datePartOf } from './equivalent-model.js';
import { bare, own } from '../lib/own.js';
import type { Shape } from './shape.js';

/** Values to fill a shape with: per filter path and operator, the search string, paging. */
export interface Values {
  value(path: string, op: string): unknown;
  readonly search?: string;
  readonly limit?: number;
  readonly offset?: number;
  readonly page?: number;
}

function fill(node: unknown, path: string[], values: Values): unknown {
  if (Array.isArray(node)) return node.map((n) => fill(n, path, values));
  if (!node || typeof node !== 'object') return node;
  const out = bare<unknown>();
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    if (k === '_and' || k === '_or') out[k] = fill(v, path, values);
    // (a relation under another, project.renders, is `_some` implicitly: Directus refuses the word below the top level)
    else if (k === '_some' && path.length > 1) Object.assign(out, fill(v, path, values));
    else if (k === '_some' || k === '_none') out[k] = fill(v, path, values);
    else if (k.startsWith('_') && v === '?') out[k] = values.value(path.join('.'), k);
    else out[k] = fill(v, [...path, k], values);
  }
  return out;
}

/** A shape made a legacy query again, with values of the caller's choosing (the proof's, a test's). Pure. */
export function instantiate(shape: Shape, values: Values): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  if (shape.fields.length) raw.fields = shape.fields.join(',');
  if (shape.filterJson) raw.filter = JSON.stringify(fill(shape.filterJson, [], values));
  if (shape.search) raw.search = values.search ?? 'a';
  if (shape.sort.length) raw.sort = shape.sort.join(',');
  const limit = values.limit ?? 5;
  if (shape.pagination === 'all') raw.limit = '-1';
  else if (shape.pagination === 'limit') raw.limit = String(limit);
  else if (shape.pagination === 'offset') Object.assign(raw, { limit: String(limit), offset: String(values.offset ?? limit) });
  else if (shape.pagination === 'page') Object.assign(raw, { limit: String(limit), page: String(values.page ?? 2) });
  if (shape.aggregate.length) {
    const agg = bare<string[]>();
    for (const a of shape.aggregate) {
      const m = /^(\w+)\((.*)\)$/.exec(a);
      if (m) (agg[m[1] as string] ??= []).push(m[2] as string);
    }
    raw.aggregate = Object.fromEntries(Object.entries(agg).map(([k, v]) => [k, v.join(',')]));
  }
  if (shape.groupBy.length) raw.groupBy = shape.groupBy.join(',');
  if (shape.meta.length) raw.meta = shape.meta.join(',');
  return raw;
}

/** A raw query as a URL query string (the bracket form for objects, as the legacy clients send it). */
export function queryString(raw: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(raw)) {
    if (v && typeof v === 'object') for (const [sk, sv] of Object.entries(v)) parts.push(`${k}[${encodeURIComponent(sk)}]=${encodeURIComponent(String(sv))}`);
    else parts.push(`${k}=${encodeURIComponent(String(v))}`);
  }
  return parts.join('&');
}

/** The type of the field a filter path ends on (through many-to-one relations), when the mappings know it. */
function typeAt(m: Mappings, resource: string, path: string): string | undefined {
  const parts = path.split('.');
  let type = resource;
  for (let i = 0; i < parts.length - 1; i++) {
    const next = own(own(m.schemas, type)?.fields, parts[i])?.relation?.resource;
    if (!next) return undefined;
    type = next;
  }
  return own(own(m.schemas, type)?.fields, parts.at(-1))?.type;
}

/**
 * Placeholder values for the equivalent alone (a shape's equivalent does not depend on them), of each field's type (a
 * date filter is planned as a date filter): an `_in` names two values (a shape's list may hold any number: its
 * equivalent walks each).
 */
const placeholders = (m: Mappings, resource: string): Values => ({
  value: (path, op) => {
    // (a part of a date, `year(date_created)`, is a number)
    const type = datePartOf(path) ? 'integer' : typeAt(m, resource, path);
    // (a field named after a type, `project`, `project.account`, holds its id)
    const ids = type === 'uuid' || path.endsWith('id') || Object.hasOwn(ID_TYPES, path.slice(path.lastIndexOf('.') + 1));
    const pair = type === 'timestamp' ? ['2020-01-01T00:00:00.000Z', '2020-02-01T00:00:00.000Z']
      : type === 'integer' || type === 'float' ? [1, 2]
        : type === 'boolean' ? [true, false]
          : ids ? ['00000000-0000-4000-8000-000000000000', '00000000-0000-4000-8000-000000000001']
            : path === 'status' || path.endsWith('.status') ? ['complete', 'failed'] : ['x', 'y'];
    return op === '_in' || op === '_nin' || op === '_between' || op === '_nbetween' ? pair
      : op === '_null' || op === '_nnull' || op === '_empty' || op === '_nempty' ? true : pair[0];
  },
});

/** The parsed query and the gateway's plan for a shape, with the given values (placeholders by default); null for writes. */
export function planOf(shape: Shape, m: Mappings, limitDefault: number, given?: Values): { q: QueryNode; plan: Plan } | null {
  if (!shape.resource || shape.invalid || shape.cut || !(shape.kind === 'list' || shape.kind === 'one' || shape.kind === 'me')) return null;
  const schema = own(m.schemas, shape.resource);
  if (!schema) return null;
  const raw = instantiate(shape, given ?? placeholders(m, shape.resource));
  const dynamic = { now: new Date(0), userId: null, roleId: null };
  try {
    const q = parseQuery(raw, schema, { schemas: m.schemas, dynamic, limitDefault });
    return { q, plan: planQuery(q, shape.resource, { statusToV1: m.status.toV1, schemas: m.schemas }) };
  } catch {
    return null;
  }
}

/** A shape's v1 equivalent. */
export function equivalentOfShape(shape: Shape, m: Mappings, limitDefault: number): Equivalent {
  const p = planOf(shape, m, limitDefault);
  return equivalentOf(shape, p?.q ?? null, p?.plan ?? null, m, limitDefault);
}
