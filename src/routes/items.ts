import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requirePrincipal } from '../auth/guards.js';
import { proxied } from '../config/route-modes.js';
import type { Deps } from '../deps.js';
import { errors } from '../errors/catalog.js';
import { ALL_OVERLAYS, explain, parseLegacyQuery, requestEnv, wantsExplain } from '../http/context.js';
import { jsonArrayEnvelope } from '../http/json-stream.js';
import { isUuid } from '../lib/uuid.js';
import { executeList, executeOne } from '../plan/execute.js';
import { planQuery } from '../plan/plan.js';
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

/** GET /renders, /projects, /accounts, /templates and their /:id (also under /items/…), with the whole query language. */
export function registerItemRoutes(app: FastifyInstance, deps: Deps): void {
  const planning = { statusToV1: deps.mappings.status.toV1, schemas: deps.mappings.schemas };
  for (const { path, resource } of ROUTES) {
    if (proxied(deps.config, path)) continue;
    const schema = deps.mappings.schemas[resource] as ResourceSchema;
    // the Directus SDK's readItems/aggregate call /items/<collection>: the same route under both paths
    const list = async (request: FastifyRequest, reply: FastifyReply) => {
      const q = parseLegacyQuery(deps, request, schema);
      const plan = planQuery(q, resource, planning);
      const { env, meter } = await requestEnv(deps, request, resource === 'template' ? [] : ALL_OVERLAYS);
      const { result } = await executeList(resource, q, plan, env);
      if (result.stream) {
        const atEnd = wantsExplain(deps, request) ? () => explain(plan, meter) : undefined;
        // an answer that expands relations is built whole first (bounded by MAX_RELATED_ITEMS), so that the budget
        // refuses it with a clean 400 before any byte is sent; plain items stream as they come
        const items = selectsRelations(q.fields, schema, deps.mappings.schemas) ? await drain(result.stream) : result.stream;
        return reply.type('application/json; charset=utf-8').send(Readable.from(jsonArrayEnvelope(items, request.log, result.meta, atEnd)));
      }
      await deps.ids.flush();
      const body: Record<string, unknown> = result.meta ? { meta: result.meta, data: result.data } : { data: result.data };
      if (wantsExplain(deps, request)) body.explain = explain(plan, meter);
      void reply.header('x-gateway-v1-calls', String(meter.calls));
      return body;
    };
    const one = async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
      requirePrincipal(request);
      const q = parseLegacyQuery(deps, request, schema);
      if (!isUuid(request.params.id)) throw errors.forbidden();
      const { env, meter } = await requestEnv(deps, request, resource === 'template' ? [] : ALL_OVERLAYS);
      const data = await executeOne(resource, request.params.id, q, (x) => planQuery(x, resource, planning), env);
      await deps.ids.flush();
      void reply.header('x-gateway-v1-calls', String(meter.calls));
      return wantsExplain(deps, request) ? { data, explain: meter.summary() } : { data };
    };
    for (const base of [path, `/items${path}`]) {
      app.get(base, list);
      app.get<{ Params: { id: string } }>(`${base}/:id`, one);
    }
  }
}
