import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { errors } from '../errors/catalog.js';
import { plainItem } from '../exec/raw-json.js';
import { parseLegacyQuery, type QueryDeps } from '../http/context.js';
import { requestContext } from '../http/request-context.js';
import { planQuery } from '../plan/plan.js';
import { Compare, FieldRef, Query, Select, Sort, type QueryNode } from '../query/ast.js';
import type { QueryResult } from '../query/run.js';
import type { ResourceSchema } from '../query/schema.js';
import { searchQuery } from '../query/search-body.js';
import { expectedItems } from '../read/cost.js';
import { isHeavy } from '../read/heavy.js';
import type { ItemReads } from '../read/items.js';

/** What a write by query uses. */
export type ByQueryDeps = QueryDeps & Pick<Deps, 'heavyReads' | 'overlays' | 'ids'>;

type Item = Record<string, unknown>;

/** The reply's end: `gone` aborts when the client leaves before the answer was written; `onClose` runs once it closes. */
function replyEnd(reply: FastifyReply): { gone: AbortSignal; onClose: (fn: () => void) => void } {
  const gone = new AbortController();
  reply.raw.once('close', () => { if (!reply.raw.writableFinished) gone.abort(); });
  return { gone: gone.signal, onClose: (fn) => { reply.raw.once('close', fn); } };
}

/** Every item of a result, as values (a streamed answer's kept bytes parsed back). */
async function itemsOf(result: QueryResult): Promise<Item[]> {
  const out = result.data.map((x) => plainItem(x) as Item);
  if (result.stream) for await (const x of result.stream) out.push(plainItem(x) as Item);
  return out;
}

/** The items in primary-key order, each answered with `?fields=` (its id dropped when only added to tell items apart). */
function answered(items: readonly Item[], keepId: boolean): unknown[] {
  const sorted = items.filter((x) => typeof x.id === 'string').sort((a, b) => ((a.id as string) < (b.id as string) ? -1 : 1));
  return keepId ? sorted : sorted.map(({ id: _id, ...rest }) => rest);
}

/**
 * `PATCH {query, data}` (the SDK's updateItems with a query), as Directus runs it: the items the query reads — read as a
 * GET reads them (from the replica when it holds the scope, else live), waiting for one of the key's heavy-read places
 * when the read is heavy by its expected size (src/read/cost.ts), held until the reply closes; `limit: -1` is every
 * matched item. Nothing to change: those items are the answer (no read by id). Otherwise each gets its overlay values,
 * and the changed items are read back by id, with `?fields=`; answered in primary-key order.
 */
export async function patchByQuery(
  deps: ByQueryDeps, request: FastifyRequest, reply: FastifyReply, reads: ItemReads, resource: 'render' | 'project' | 'account',
  query: unknown, values: Readonly<Record<string, unknown>>,
): Promise<unknown[]> {
  const schema = deps.mappings.schemas[resource] as ResourceSchema;
  const url = parseLegacyQuery(deps, request, schema); // the answer's fields, deep and alias, checked first
  const keepId = url.fields.some((f) => f.path[0] === 'id' || f.path[0] === '*');
  const q = Query.with(bodyQuery(deps, request, schema, query), {
    fields: [...url.fields, Select.create(['id'])], ...(url.deep ? { deep: url.deep } : {}), ...(url.alias ? { alias: url.alias } : {}),
  });
  const ctx = requestContext(deps, request);
  const session = await ctx.session();
  const plan = planQuery(q, resource, { statusToV1: deps.mappings.status.toV1, schemas: deps.mappings.schemas });
  const expected = expectedItems(q, schema, deps.mappings.schemas, deps.config.QUERY_LIMIT_DEFAULT, plan.ids);
  const end = replyEnd(reply);
  const release = isHeavy(q, plan, false, expected, deps.config.HEAVY_READ_ITEMS) ? await deps.heavyReads.enter(session.partition, end.gone) : undefined;
  if (release) end.onClose(release);
  try {
    const found = await itemsOf(await reads.read(ctx, q));
    if (Object.keys(values).length === 0) return answered(found, keepId);
    const ids = [...new Set(found.map((x) => x.id).filter((id): id is string => typeof id === 'string'))].sort();
    const userId = request.principal?.user.id ?? null;
    for (const id of ids) {
      if (end.gone.aborted) throw errors.serviceUnavailable('The client has gone.', 'gateway');
      const v1Id = await deps.ids.toV1(resource, id);
      if (!v1Id) throw errors.forbidden();
      await deps.overlays.set(resource, v1Id, values, userId);
    }
    if (ids.length === 0) return [];
    const back = Query.with(q, {
      filter: Compare.create(FieldRef.create(['id']), '_in', ids), search: null, sort: [Sort.create(FieldRef.create(['id']), 'asc')],
      limit: -1, offset: 0, meta: [], aggregate: [], groupBy: [],
    });
    return answered(await itemsOf(await reads.read(ctx, back)), keepId);
  } catch (e) {
    release?.();
    throw e;
  }
}

/** The body's query, parsed by the one parser with the request's caller and clock (Directus's form: a `filter` object, …). */
function bodyQuery(deps: QueryDeps, request: FastifyRequest, schema: ResourceSchema, query: unknown): QueryNode {
  const raw = { ...searchQuery({ query }, {}).raw, fields: 'id' };
  const urlQuery = request.query;
  request.query = raw;
  try {
    return parseLegacyQuery(deps, request, schema);
  } finally {
    request.query = urlQuery;
  }
}
