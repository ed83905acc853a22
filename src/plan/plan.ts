import type { CompareNode, DeepNode, FilterNode, QueryNode } from '../query/ast.js';
import { traitsOf } from '../query/resources.js';
import type { ResourceSchema, SchemaRegistry } from '../query/schema.js';
import { V1_PAGE_MAX, type RenderStatus } from '../v1/schemas.js';

/**
 * A plain, inspectable plan: which scope to read, what is pushed down to v1, what stays in memory, and
 * when to stop. Pure: no I/O, no uuid resolution (scope is expressed in legacy uuids).
 */
export interface Plan {
  readonly resource: string;
  /** direct: GET by id; merge: k-way merge of per-project streams in v1 order; scan: read the whole scope. */
  readonly strategy: 'direct' | 'merge' | 'scan';
  /** Legacy uuids for direct GETs (id _eq/_in). */
  readonly ids: readonly string[] | null;
  readonly scope: {
    /** Account (team) uuids the filter restricts to, or null for every reachable team. */
    readonly accounts: readonly string[] | null;
    /** Project uuids the filter restricts to, or null for every project in the team scope. */
    readonly projects: readonly string[] | null;
  };
  readonly pushdown: {
    /** A status filter that maps to exactly one v1 status. */
    readonly status: RenderStatus | null;
    /** A date_created sort (the request's, or its resource's default) becomes v1's order. */
    readonly order: 'asc' | 'desc' | null;
  };
  /** v1 statuses a status filter allows (null: any); an empty list means nothing can match. */
  readonly statuses: readonly RenderStatus[] | null;
  /** Always the full filter: pushed-down parts are re-checked in memory (Trino's "partially enforced"). */
  readonly residual: FilterNode | null;
  /** Stop once this many results are settled; null means the whole scope is needed. */
  readonly stopAfter: number | null;
  /** v1 list page sizes on the live path: the first page of each project's stream, then the rest (null: by id). */
  readonly pages: { readonly first: number; readonly next: number } | null;
  /** The relations the query reads (filter, sort, groupBy, fields, count, deep), as paths from the resource. */
  readonly relations: readonly string[];
  readonly reasons: readonly string[];
}

export interface PlanContext {
  /** legacy status → v1 statuses */
  readonly statusToV1: Readonly<Record<string, readonly RenderStatus[]>>;
  /** The resources' schemas: a request without `sort` is in its resource's default order (mappings). */
  readonly schemas: SchemaRegistry;
}

/** Top-level conjuncts of a filter (only these can narrow the scope). */
function conjuncts(f: FilterNode | null): FilterNode[] {
  if (!f) return [];
  if (f.kind === 'And') return f.children.flatMap((c) => conjuncts(c));
  return [f];
}

function uuidsOf(c: CompareNode): string[] | null {
  if (c.op === '_eq' && typeof c.value === 'string') return [c.value];
  if (c.op === '_in' && Array.isArray(c.value)) return (c.value as unknown[]).filter((v): v is string => typeof v === 'string');
  return null;
}

const intersect = (a: string[] | null, b: string[]) => (a === null ? b : a.filter((x) => b.includes(x)));

export function planQuery(q: QueryNode, resourceKey: string, ctx: PlanContext): Plan {
  const reasons: string[] = [];
  const traits = traitsOf(resourceKey);
  let ids: string[] | null = null;
  let accounts: string[] | null = null;
  let projects: string[] | null = null;
  let statuses: RenderStatus[] | null = null;
  for (const c of conjuncts(q.filter)) {
    if (c.kind !== 'Compare' || c.field.fn) continue;
    const path = c.field.path.join('.');
    const values = uuidsOf(c);
    if (path === 'id' && values) {
      ids = intersect(ids, values);
      reasons.push(`id ${c.op} → direct GET`);
    }
    if (traits.accountPaths.includes(path) && values) {
      accounts = intersect(accounts, values);
      reasons.push(`${path} ${c.op} narrows the teams`);
    }
    if (traits.idIsAccount && path === 'id' && values) accounts = intersect(accounts, values);
    if (traits.projectPaths.includes(path) && values) {
      projects = intersect(projects, values);
      reasons.push(`${path} ${c.op} narrows the projects`);
    }
    if (traits.streamed && path === 'status') {
      const legacy =
        c.op === '_eq' && typeof c.value === 'string' ? [c.value] : c.op === '_in' && Array.isArray(c.value) ? (c.value as string[]) : null;
      if (legacy) {
        const v1 = [...new Set(legacy.flatMap((s) => ctx.statusToV1[s] ?? []))];
        statuses = statuses === null ? v1 : statuses.filter((s) => v1.includes(s));
      }
    }
  }
  const needsAll = q.meta.includes('filter_count') || q.meta.includes('total_count') || q.aggregate.length > 0 || q.groupBy.length > 0;
  const sortKeys =
    q.sort.length > 0
      ? q.sort.map(
          (s) => `${s.direction === 'desc' ? '-' : ''}${s.field.fn ? `${s.field.fn}(` : ''}${s.field.path.join('.')}${s.field.fn ? ')' : ''}`,
        )
      : [...(ctx.schemas[resourceKey]?.defaultSort ?? [])];
  let order: 'asc' | 'desc' | null = null;
  if (sortKeys[0] === 'date_created' && sortKeys.slice(1).every((k) => k === 'id' || k === '-id')) order = 'asc';
  else if (sortKeys[0] === '-date_created' && sortKeys.slice(1).every((k) => k === 'id' || k === '-id')) order = 'desc';
  let strategy: Plan['strategy'];
  // v1 can GET renders and projects by id; a template needs its project, an account is one of the teams
  if (ids !== null && traits.byId) strategy = 'direct';
  else if (traits.streamed && order !== null && !needsAll) strategy = 'merge';
  else strategy = 'scan';
  if (strategy === 'scan') {
    if (needsAll) reasons.push('meta counts or aggregation need the whole scope');
    else if (traits.streamed) reasons.push('the sort cannot be done by v1');
  }
  const status = statuses !== null && statuses.length === 1 ? (statuses[0] as RenderStatus) : null;
  if (status) reasons.push(`status maps to exactly one v1 status → status=${status}`);
  if (statuses !== null && statuses.length === 0) reasons.push('the status filter matches no v1 status → empty');
  const stopAfter = strategy === 'merge' && q.limit !== -1 ? q.offset + q.limit : null;
  // the first page of each stream asks for no more than could be needed (a status filter or any filter may thin it)
  const first = status || q.filter || q.search || stopAfter === null ? V1_PAGE_MAX : Math.min(V1_PAGE_MAX, Math.max(1, stopAfter));
  return Object.freeze({
    resource: resourceKey,
    strategy,
    ids: ids === null ? null : Object.freeze([...new Set(ids)]),
    scope: Object.freeze({
      accounts: accounts === null ? null : Object.freeze([...new Set(accounts)]),
      projects: projects === null ? null : Object.freeze([...new Set(projects)]),
    }),
    pushdown: Object.freeze({
      status: traits.streamed ? status : null,
      order: traits.streamed && strategy !== 'direct' ? order : null,
    }),
    statuses: statuses === null ? null : Object.freeze(statuses),
    residual: q.filter,
    stopAfter,
    pages: strategy === 'direct' ? null : Object.freeze({ first: strategy === 'merge' ? first : V1_PAGE_MAX, next: V1_PAGE_MAX }),
    relations: Object.freeze(relationsRead(q, ctx.schemas[resourceKey], ctx.schemas)),
    reasons: Object.freeze(reasons),
  });
}

/** Every relation a query reads, as dotted paths (`project`, `project.account`, `renders`), sorted. */
export function relationsRead(q: QueryNode, resource: ResourceSchema | undefined, schemas: SchemaRegistry): string[] {
  const out = new Set<string>();
  const walk = (from: ResourceSchema | undefined, path: readonly string[], prefix = '') => {
    let cur = from;
    for (let i = 0; i < path.length && cur; i++) {
      const f = Object.hasOwn(cur.fields, path[i] as string) ? cur.fields[path[i] as string] : undefined;
      if (!f?.relation) return;
      const name = `${prefix}${path.slice(0, i + 1).join('.')}`;
      out.add(name);
      cur = schemas[f.relation.resource];
    }
  };
  const filter = (node: FilterNode | null, from: ResourceSchema | undefined, prefix = '') => {
    if (!node) return;
    if (node.kind === 'Compare') walk(from, node.field.path, prefix);
    else if (node.kind === 'Relation') {
      walk(from, node.path, prefix);
      // the related items' own filter reads from their resource
      let cur = from;
      for (const p of node.path) cur = cur && Object.hasOwn(cur.fields, p) ? schemas[cur.fields[p]?.relation?.resource ?? ''] : undefined;
      filter(node.filter, cur, `${prefix}${node.path.join('.')}.`);
    } else if (node.kind === 'And' || node.kind === 'Or') for (const c of node.children) filter(c, from, prefix);
  };
  const deep = (d: DeepNode | undefined, from: ResourceSchema | undefined, prefix: string) => {
    for (const [name, child] of Object.entries(d?.children ?? {})) {
      walk(from, [name], prefix);
      const rel = from && Object.hasOwn(from.fields, name) ? from.fields[name]?.relation : undefined;
      const next = rel ? schemas[rel.resource] : undefined;
      filter(child.filter, next, `${prefix}${name}.`);
      for (const s of child.sort) walk(next, s.field.path, `${prefix}${name}.`);
      deep(child, next, `${prefix}${name}.`);
    }
  };
  filter(q.filter, resource);
  for (const s of q.sort) walk(resource, s.field.path);
  for (const g of q.groupBy) walk(resource, g.path);
  for (const f of q.fields) walk(resource, f.path);
  deep(q.deep, resource, '');
  return [...out].sort();
}
