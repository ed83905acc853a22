import type { QueryNode, SortNode } from './ast.js';
import { Sort, FieldRef } from './ast.js';
import { aggregateRows, type AggregateOptions } from './aggregate.js';
import { compileFilter, compileSort, type Lookup, type Rec } from './compile.js';
import { compileSearch } from './search.js';
import { compileProjection } from './project.js';
import type { ResourceSchema, SchemaRegistry } from './schema.js';

/** `stream`, when present, replaces `data` (large answers are written as they are produced). */
export interface QueryResult {
  readonly data: unknown[];
  readonly meta?: Record<string, number>;
  readonly stream?: AsyncIterable<unknown>;
  /** The stream is a page built as it is read (its items may be large): it is held while it fits the answer memory. */
  readonly lazy?: boolean;
}

/** The order of a query: its sort, or the resource's default (newest first, id as tie-break). */
export function effectiveSort(q: QueryNode, resource: ResourceSchema): readonly SortNode[] {
  const base =
    q.sort.length > 0
      ? q.sort
      : resource.defaultSort.map((s) => Sort.create(FieldRef.create(s.replace(/^-/, '').split('.')), s.startsWith('-') ? 'desc' : 'asc'));
  // the id as the last tie-break keeps pages stable (the database order of ties is not)
  if (base.some((s) => s.field.path.length === 1 && s.field.path[0] === 'id' && !s.field.fn)) return base;
  return [...base, Sort.create(FieldRef.create(['id']), 'asc')];
}

/** A query's selection before projection: its meta, and either aggregated rows or the page of records. */
export interface Selection {
  readonly meta?: Record<string, number>;
  readonly rows?: unknown[];
  readonly page?: readonly Rec[];
}

/**
 * Filter, search, meta, then aggregation or sort + page, over a complete set of records. Shared by the
 * in-memory reference (`runQuery`) and the planner's scan path. `total` is what total_count reports.
 */
export function selectRecords(
  records: readonly Rec[],
  q: QueryNode,
  schemas: SchemaRegistry,
  lookup: Lookup,
  agg: AggregateOptions,
  total = records.length,
): Selection {
  const resource = schemas[q.resource] as ResourceSchema;
  const filter = compileFilter(q.filter, resource, schemas, lookup);
  const search = compileSearch(q.search, resource);
  const matched = records.filter((r) => filter(r) && search(r));
  const meta = buildMeta(q, total, matched.length);
  if (q.aggregate.length > 0 || q.groupBy.length > 0) {
    return {
      ...(meta ? { meta } : {}),
      rows: aggregateRows(matched, q.aggregate, q.groupBy, q.sort, q.limit, q.offset, resource, schemas, lookup, agg),
    };
  }
  const sorted = [...matched].sort(compileSort(effectiveSort(q, resource), resource, schemas, lookup));
  return { ...(meta ? { meta } : {}), page: q.limit === -1 ? sorted.slice(q.offset) : sorted.slice(q.offset, q.offset + q.limit) };
}

/**
 * Answers a query over a complete, in-memory set of records (the reference the planner's lean paths
 * are tested against).
 */
export function runQuery(records: readonly Rec[], q: QueryNode, schemas: SchemaRegistry, lookup: Lookup, agg: AggregateOptions): QueryResult {
  const sel = selectRecords(records, q, schemas, lookup, agg);
  const data = sel.rows ?? (sel.page ?? []).map(compileProjection(q.fields, schemas[q.resource] as ResourceSchema, schemas, lookup));
  return sel.meta ? { meta: sel.meta, data } : { data };
}

export function buildMeta(q: QueryNode, total: number, filtered: number): Record<string, number> | undefined {
  if (q.meta.length === 0) return undefined;
  const meta: Record<string, number> = {};
  for (const k of q.meta) meta[k] = k === 'total_count' ? total : filtered;
  return meta;
}
