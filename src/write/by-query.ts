import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { errors } from '../errors/catalog.js';
import { plainItem } from '../exec/raw-json.js';
import { parseLegacyQuery, type QueryDeps } from '../read/context.js';
import { heldAnswer, isWhole, itemBound } from '../http/held-answer.js';
import { pacedBody } from '../http/paced-body.js';
import { jsonArrayEnvelope } from '../http/json-stream.js';
import { requestContext, type RequestContext } from '../read/request-context.js';
import { planQuery } from '../plan/plan.js';
import { Compare, FieldRef, Query, Select, Sort, type QueryNode } from '../query/ast.js';
import { selectsRelations } from '../query/project.js';
import type { ResourceSchema } from '../query/schema.js';
import { searchQuery } from '../query/search-body.js';
import { answerEnd } from '../read/answer-end.js';
import { pace } from '../lib/pace.js';
import { expectedItems } from '../read/cost.js';
import { isHeavy } from '../read/heavy.js';
import type { ItemReads } from '../read/items.js';

/** What a write by query uses. */
export type ByQueryDeps = QueryDeps & Pick<Deps, 'heavyReads' | 'overlays' | 'ids' | 'answerMemory'>;

type Answer = { readonly data: readonly unknown[]; readonly stream?: AsyncIterable<unknown> };

/** Each item of a read's answer as a value (its kept bytes parsed back), the page's then the stream's. */
async function eachValue(result: Answer, take: (item: Record<string, unknown>) => void): Promise<void> {
  // (a long read shares the event loop: 100 000 items parsed back in one turn held it 1.4–2.1 s — attack pass 16's re-check)
  for (const x of result.data) {
    const turn = pace();
    if (turn) await turn;
    take(plainItem(x) as Record<string, unknown>);
  }
  if (result.stream) {
    for await (const x of result.stream) {
      const turn = pace();
      if (turn) await turn;
      take(plainItem(x) as Record<string, unknown>);
    }
  }
}

/** Sends items as a list read is sent: measured in the answer memory and held, streamed past it. */
async function send(deps: ByQueryDeps, ctx: RequestContext, reply: FastifyReply, result: Answer, q: QueryNode, schema: ResourceSchema)
  : Promise<FastifyReply | { data: unknown[] }> {
  const items = await heldAnswer(deps, ctx, reply, result, selectsRelations(q.fields, schema, deps.mappings.schemas, q.alias), true);
  if (isWhole(items)) return { data: [...items] };
  const body = jsonArrayEnvelope(items, ctx.log, undefined, undefined, itemBound(deps.config.MAX_ITEM_MB));
  return reply.type('application/json; charset=utf-8').send(await pacedBody(deps, ctx, reply, body));
}

/** The ids a result names (its items hold the id alone), in primary-key order. */
async function idsOf(result: Answer): Promise<string[]> {
  const out = new Set<string>();
  await eachValue(result, (x) => { if (typeof x?.id === 'string') out.add(x.id); });
  return [...out].sort();
}

/**
 * `PATCH {query, data}` (the SDK's updateItems with a query), as Directus runs it: the items the query reads — their ids
 * read as a GET reads them (from the replica when it holds the scope, else live), waiting for one of the key's heavy-read
 * places when the read is heavy by its expected size (src/read/cost.ts), held until the reply closes; `limit: -1` is every
 * matched item. Each gets its overlay values (none: nothing changes), and the items are read back by id, with `?fields=`,
 * in primary-key order, and sent as a list read is: measured in the answer memory, streamed past it (a whole answer was
 * built and serialised at once: 271 MB of render data, attack pass 5, H2).
 */
export async function patchByQuery(
  deps: ByQueryDeps, request: FastifyRequest, reply: FastifyReply, reads: ItemReads, resource: 'render' | 'project' | 'account',
  query: unknown, values: Readonly<Record<string, unknown>>,
): Promise<FastifyReply | { data: unknown[] }> {
  const schema = deps.mappings.schemas[resource] as ResourceSchema;
  const url = parseLegacyQuery(deps, request, schema); // the answer's fields, deep and alias, checked first
  // the items the query reads: their ids alone (the answer is read back below)
  const q = Query.with(bodyQuery(deps, request, schema, query), { fields: [Select.create(['id'])] });
  const ctx = requestContext(deps, request);
  const session = await ctx.session();
  const plan = planQuery(q, resource, { statusToV1: deps.mappings.status.toV1, schemas: deps.mappings.schemas });
  // heavy by the answer it gives (the items with `?fields=`, their expansions), not by the ids it reads first
  const answer = Query.with(q, { fields: url.fields, ...(url.deep ? { deep: url.deep } : {}), ...(url.alias ? { alias: url.alias } : {}) });
  const expected = expectedItems(answer, schema, deps.mappings.schemas, deps.config.QUERY_LIMIT_DEFAULT, plan.ids);
  const end = answerEnd(reply.raw);
  const release = isHeavy(answer, plan, false, expected, deps.config.HEAVY_READ_ITEMS) ? await deps.heavyReads.enter(session.partition, end.gone) : undefined;
  if (release) end.onEnd(release);
  try {
    const byId = [Sort.create(FieldRef.create(['id']), 'asc')];
    if (Object.keys(values).length === 0) {
      // nothing to change: the items the query reads are the answer — every matched item read in primary-key order (no
      // read by id: on v1 that is a call an item); a page of them (a limit, an offset) is put in that order here
      if (q.limit === -1 && q.offset === 0) {
        return await send(deps, ctx, reply, await reads.read(ctx, Query.with(answer, { sort: byId }), end.gone), answer, schema);
      }
      const keepId = url.fields.some((f) => f.path[0] === 'id' || f.path[0] === '*');
      const page: Record<string, unknown>[] = [];
      await eachValue(await reads.read(ctx, Query.with(answer, { fields: [...url.fields, Select.create(['id'])] }), end.gone), (x) => page.push(x));
      const sorted = page.filter((x) => typeof x.id === 'string').sort((a, b) => ((a.id as string) < (b.id as string) ? -1 : 1));
      return await send(deps, ctx, reply, { data: keepId ? sorted : sorted.map(({ id: _id, ...rest }) => rest) }, answer, schema);
    }
    const ids = await idsOf(await reads.read(ctx, q, end.gone));
    const userId = request.principal?.user.id ?? null;
    // every id known before any is written; then written a chunk a transaction, the event loop given a turn between
    // chunks (a row and a commit an item held the loop 2 ms an item: attack pass 14's re-check, H1)
    const items: { v1Id: string; values: Record<string, unknown> }[] = [];
    for (const id of ids) {
      // (an id not paired in memory is a query of the store: 40 000 of them took 0.77 s in one turn — attack pass 15's
      // second re-check — so the loop shares the event loop as a long read does)
      const turn = pace();
      if (turn) await turn;
      const v1Id = await deps.ids.toV1(resource, id);
      if (!v1Id) throw errors.forbidden();
      items.push({ v1Id, values });
    }
    for (let i = 0; i < items.length; i += WRITE_CHUNK) {
      if (end.gone.aborted) throw errors.serviceUnavailable('The client has gone.', 'gateway');
      await deps.overlays.setMany(resource, items.slice(i, i + WRITE_CHUNK), userId);
      await (pace() ?? Promise.resolve());
    }
    if (ids.length === 0) return { data: [] };
    // the changed items read back by id, in primary-key order
    const back = Query.with(answer, {
      filter: Compare.create(FieldRef.create(['id']), '_in', ids), search: null, sort: byId, limit: -1, offset: 0, meta: [], aggregate: [], groupBy: [],
    });
    return await send(deps, ctx, reply, await reads.read(ctx, back, end.gone, true), back, schema);
  } catch (e) {
    release?.();
    throw e;
  }
}

/** Items a write by query keeps in one transaction before the event loop gets a turn. */
const WRITE_CHUNK = 100;

/** The body's query, parsed by the one parser with the request's caller and clock (Directus's form: a `filter` object, …). */
function bodyQuery(deps: QueryDeps, request: FastifyRequest, schema: ResourceSchema, query: unknown): QueryNode {
  return parseLegacyQuery(deps, request, schema, undefined, { ...searchQuery({ query }, {}).raw, fields: 'id' });
}
