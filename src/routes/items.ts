import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requirePrincipal } from '../auth/guards.js';
import { proxied } from '../config/route-modes.js';
import type { Deps } from '../deps.js';
import { errors } from '../errors/catalog.js';
import { ALL_OVERLAYS, explain, parseLegacyQuery, readEnv, requestSession, wantsExplain } from '../http/context.js';
import { Memo } from '../http/answer-memo.js';
import { searchPreHandler } from '../http/search.js';
import { jsonArrayEnvelope } from '../http/json-stream.js';
import { csvExport, csvExportStream, EXPORT_CONTENT_TYPE, exportFilename, exportFormat, jsonExport, jsonExportOne, type ExportFormat } from '../http/export.js';
import { isUuid } from '../lib/uuid.js';
import { executeList, executeOne } from '../plan/execute.js';
import { planQuery, type Plan } from '../plan/plan.js';
import { readFromIndex, type IndexStrategy } from '../index/read.js';
import type { ReadSource } from '../index/service.js';
import { Compare, FieldRef, Query, type QueryNode } from '../query/ast.js';
import type { QueryResult } from '../query/run.js';
import type { ExecEnv } from '../plan/index.js';
import type { V1Session } from '../v1/client.js';
import { selectsRelations } from '../query/project.js';
import type { ResourceSchema } from '../query/schema.js';

async function drain<T>(items: AsyncIterable<T>): Promise<AsyncIterable<T>> {
  const all: T[] = [];
  for await (const x of items) all.push(x);
  return (async function* () { yield* all; })();
}

const ROUTES: readonly { path: string; resource: string }[] = [
  { path: '/renders', resource: 'render' },
  { path: '/projects', resource: 'project' },
  { path: '/accounts', resource: 'account' },
  { path: '/templates', resource: 'template' },
];

/** What explain and the response headers say about where an answer came from. */
function describe(source: ReadSource): Record<string, unknown> {
  return source.kind === 'index'
    ? { source: 'index', index_age_ms: source.ageMs, teams: source.snapshot.teams.length, synced_first: source.synced }
    : { source: 'live', reason: source.reason };
}

/**
 * The explain block of a list: the live plan as planned, or — answered from the index — what was really done there
 * (the scope narrowed in memory, every record of it evaluated; no pushdown, no v1 pages).
 */
function explainList(plan: Plan, meter: Parameters<typeof explain>[1], source: ReadSource, how?: IndexStrategy): Record<string, unknown> {
  if (source.kind === 'live') {
    const live = explain(plan, meter);
    return { ...live, plan: { ...(live.plan as object), source: 'live' }, ...describe(source) };
  }
  const scope = plan.ids ? 'records by id' : plan.scope.projects ? "the projects' records" : 'every record in reach';
  const reasons = [...plan.reasons.filter((r) => !/v1|GET|pushdown|status=/.test(r)), 'answered from the render index: filter, sort and aggregation in memory'];
  return {
    plan: {
      resource: plan.resource, source: 'index', strategy: `index: ${how?.strategy ?? 'scan'} of ${scope}`, scope: plan.scope,
      residual: plan.residual ? 'in memory' : null, stopAfter: plan.stopAfter, pages: null,
      relations: { read: plan.relations, resolved: 'from the index, synchronously (no v1 call)' },
      tested: how?.tested ?? null, matched: how?.matched ?? null, reasons,
    },
    ...meter.summary(),
    ...describe(source),
  };
}

/**
 * Answers a list from the render index when every team in scope is backfilled (a stale team synced first), else live
 * from v1 (the planner's path).
 */
async function answerList(
  deps: Deps, resource: string, q: QueryNode, plan: Plan, env: ExecEnv, session: V1Session, known?: ReadSource,
): Promise<{ result: QueryResult; source: ReadSource; how?: IndexStrategy; refreshAt: number }> {
  const index = deps.index;
  const source: ReadSource = known ?? (index ? await index.source(session) : { kind: 'live', reason: 'INDEX_ENABLED=false' });
  let refreshAt = Number.POSITIVE_INFINITY;
  if (source.kind === 'live' || !index) return { result: (await executeList(resource, q, plan, env)).result, source, refreshAt };
  const snap = source.snapshot;
  let how: IndexStrategy | undefined;
  const result = await readFromIndex(resource, q, plan, snap, {
    schemas: deps.mappings.schemas,
    budget: env.budget,
    // an answer kept for later is not given past the moment its first signed URL must be refreshed
    beforeAnswer: async (recs, kind) => { refreshAt = Math.min(refreshAt, await index.refreshOutputs(session, snap, recs, kind)); },
    answered: (uuids) => { for (const [v1, u] of snap.unpaired(uuids)) deps.ids.queue('render', v1, u); },
    flush: () => deps.ids.flush(),
    report: (h) => { how = h; },
  });
  return { result, source, refreshAt, ...(how ? { how } : {}) };
}

/** Sends `?export=` data as Directus does: an attachment named after the collection and the time. */
async function sendExport(deps: Deps, reply: FastifyReply, format: ExportFormat, collection: string, data: AsyncIterable<unknown> | unknown[] | object) {
  const name = exportFilename(collection, new Date(deps.clock.now()), format);
  void reply.header('content-disposition', `attachment; filename="${name}"`).type(EXPORT_CONTENT_TYPE[format]);
  const many = Array.isArray(data) || Symbol.asyncIterator in (data as object);
  if (format === 'csv') {
    // a streamed answer (limit=-1) is written as it is read, through a scratch file; a page is built at once
    const csv = { escapeFormulas: deps.config.EXPORT_CSV_ESCAPE_FORMULAS };
    if (many && !Array.isArray(data)) return reply.send(Readable.from(csvExportStream(data as AsyncIterable<unknown>, csv)));
    return reply.send(await csvExport(many ? (data as unknown[]) : [data], csv));
  }
  if (!many) return reply.send(jsonExportOne(data));
  return reply.send(Readable.from(jsonExport(data as AsyncIterable<unknown>)));
}

/** GET /renders, /projects, /accounts, /templates and their /:id (also under /items/…), with the whole query language. */
export function registerItemRoutes(app: FastifyInstance, deps: Deps): void {
  const planning = { statusToV1: deps.mappings.status.toV1, schemas: deps.mappings.schemas };
  for (const { path, resource } of ROUTES) {
    if (proxied(deps.config, path)) continue;
    const schema = deps.mappings.schemas[resource] as ResourceSchema;
    // the Directus SDK's readItems/aggregate call /items/<collection>: the same route under both paths
    const list = async (request: FastifyRequest, reply: FastifyReply) => {
      if (Memo.answerHeld(deps, request, reply)) return reply;
      const { meter, session } = await requestSession(deps, request);
      const memo = await Memo.recall(deps, request, reply, session, meter);
      if (!memo) return reply;
      const q = parseLegacyQuery(deps, request, schema, () => memo.dynamic());
      const format = exportFormat(request.query);
      const plan = planQuery(q, resource, planning);
      const env = await readEnv(deps, session, meter, resource === 'template' ? [] : ALL_OVERLAYS);
      const { result, source, how, refreshAt } = await answerList(deps, resource, q, plan, env, session, memo.source);
      void reply.header('x-gateway-source', source.kind);
      if (format) {
        // the same answer as a file; an answer that expands relations is built whole first (a clean 400 past the budget)
        const items = result.stream && selectsRelations(q.fields, schema, deps.mappings.schemas, q.alias) ? await drain(result.stream) : result.stream;
        await deps.ids.flush();
        return sendExport(deps, reply, format, schema.name, items ?? result.data);
      }
      if (result.stream) {
        await deps.ids.flush();
        const atEnd = wantsExplain(deps, request) ? () => explainList(plan, meter, source, how) : undefined;
        // an answer that expands relations is built whole first (bounded by MAX_RELATED_ITEMS), so that the budget
        // refuses it with a clean 400 before any byte is sent; plain items stream as they come
        const items = selectsRelations(q.fields, schema, deps.mappings.schemas, q.alias) ? await drain(result.stream) : result.stream;
        return reply.type('application/json; charset=utf-8').send(Readable.from(jsonArrayEnvelope(items, request.log, result.meta, atEnd)));
      }
      await deps.ids.flush();
      const body: Record<string, unknown> = result.meta ? { meta: result.meta, data: result.data } : { data: result.data };
      void reply.header('x-gateway-v1-calls', String(meter.calls));
      if (wantsExplain(deps, request)) {
        body.explain = explainList(plan, meter, source, how);
        return body;
      }
      return memo.keep(reply, body, source, refreshAt);
    };
    const one = async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
      requirePrincipal(request);
      if (!isUuid(request.params.id)) {
        parseLegacyQuery(deps, request, schema); // a bad query is a 400 before the 403
        exportFormat(request.query);
        throw errors.forbidden();
      }
      if (Memo.answerHeld(deps, request, reply, request.params.id.toLowerCase())) return reply;
      const { meter, session } = await requestSession(deps, request);
      const memo = await Memo.recall(deps, request, reply, session, meter, request.params.id.toLowerCase());
      if (!memo) return reply;
      const q = parseLegacyQuery(deps, request, schema, () => memo.dynamic());
      const format = exportFormat(request.query);
      const env = await readEnv(deps, session, meter, resource === 'template' ? [] : ALL_OVERLAYS);
      // from the index when it holds the item; otherwise live (an item the index has not seen yet, or not reachable: 403)
      const byId = Query.with(q, {
        filter: Compare.create(FieldRef.create(['id']), '_eq', request.params.id.toLowerCase()),
        search: null, meta: [], limit: 1, offset: 0, sort: [], aggregate: [], groupBy: [],
      });
      const { result, source, refreshAt } = await answerList(deps, resource, byId, planQuery(byId, resource, planning), env, session, memo.source);
      let data = result.data[0];
      let from = source;
      if (data === undefined) {
        data = await executeOne(resource, request.params.id, q, (x) => planQuery(x, resource, planning), env);
        from = { kind: 'live', reason: source.kind === 'index' ? 'the index does not hold this item' : source.reason };
      }
      await deps.ids.flush();
      void reply.header('x-gateway-v1-calls', String(meter.calls));
      void reply.header('x-gateway-source', from.kind);
      if (format) return sendExport(deps, reply, format, schema.name, data as object);
      if (wantsExplain(deps, request)) return { data, explain: { ...meter.summary(), ...describe(from) } };
      return memo.keep(reply, { data }, from, refreshAt);
    };
    for (const base of [path, `/items${path}`]) {
      app.get(base, list);
      // SEARCH: the same list, its question in the JSON body (Directus's withSearch(), Python clients)
      app.route({ method: 'SEARCH', url: base, preHandler: searchPreHandler, handler: list });
      app.get<{ Params: { id: string } }>(`${base}/:id`, one);
    }
  }
}
