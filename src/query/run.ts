import type { QueryNode, SortNode } from './ast.js';
import { Sort, FieldRef } from './ast.js';
import { aggregateRows, type AggregateOptions } from './aggregate.js';
import { compileFilter, compileProjection, compileSearch, compileSort, type Lookup, type Rec } from './compile.js';
import type { ResourceSchema, SchemaRegistry } from './schema.js';

export interface QueryResult { readonly data: unknown[]; readonly meta?: Record<string, number> }

/** The resource's default order when the request has none (e.g. newest first, id as tie-break). */
export function effectiveSort(q: QueryNode, resource: ResourceSchema): readonly SortNode[] {
  if (q.sort.length > 0) return q.sort;
  return resource.defaultSort.map((s) => Sort.create(FieldRef.create(s.replace(/^-/, '').split('.')), s.startsWith('-') ? 'desc' : 'asc'));
}

/**
 * Answers a query over a complete, in-memory set of records (the full-scan path and the reference the
 * planner's lean paths are tested against).
 */
export function runQuery(records: readonly Rec[], q: QueryNode, schemas: SchemaRegistry, lookup: Lookup, agg: AggregateOptions): QueryResult {
  const resource = schemas[q.resource] as ResourceSchema;
  const filter = compileFilter(q.filter, resource, schemas, lookup);
  const search = compileSearch(q.search, resource);
  const matched = records.filter((r) => filter(r) && search(r));
  const meta = buildMeta(q, records.length, matched.length);
  if (q.aggregate.length > 0 || q.groupBy.length > 0) {
    const rows = aggregateRows(matched, q.aggregate, q.groupBy, q.sort, q.limit, q.offset, resource, schemas, lookup, agg);
    return meta ? { meta, data: rows } : { data: rows };
  }
  const sorted = [...matched].sort(compileSort(effectiveSort(q, resource), resource, schemas, lookup));
  const page = q.limit === -1 ? sorted.slice(q.offset) : sorted.slice(q.offset, q.offset + q.limit);
  const project = compileProjection(q.fields, resource, schemas, lookup);
  const data = page.map(project);
  return meta ? { meta, data } : { data };
}

export function buildMeta(q: QueryNode, total: number, filtered: number): Record<string, number> | undefined {
  if (q.meta.length === 0) return undefined;
  const meta: Record<string, number> = {};
  for (const k of q.meta) meta[k] = k === 'total_count' ? total : filtered;
  return meta;
}
