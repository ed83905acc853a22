import { Readable } from 'node:stream';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requirePrincipal } from '../app.js';
import type { Deps } from '../deps.js';
import { errors } from '../errors/catalog.js';
import { isUuid } from '../lib/uuid.js';
import { Catalog } from '../plan/catalog.js';
import type { V1Session } from '../v1/client.js';
import { executeList, executeOne, RawJson } from '../plan/execute.js';
import type { ExecEnv } from '../plan/index.js';
import { CallMeter } from '../plan/meter.js';
import { planQuery, type Plan } from '../plan/plan.js';
import type { QueryNode } from '../query/ast.js';
import { parseQuery } from '../query/parse-query.js';
import type { ResourceSchema } from '../query/schema.js';
import { safeEqual } from '../store/crypto.js';
import { proxied } from './modes.js';

type OverlayType = 'render' | 'project' | 'account';
const ALL_OVERLAYS: readonly OverlayType[] = ['render', 'project', 'account'];

/**
 * The per-request pieces every legacy read needs: meter, catalog and execution environment. Only the
 * overlay types the answer can contain are read (templates carry none).
 */
export async function requestEnv(deps: Deps, request: FastifyRequest, overlayTypes: readonly OverlayType[] = ALL_OVERLAYS): Promise<{ env: ExecEnv; meter: CallMeter; session: V1Session }> {
  const principal = requirePrincipal(request);
  const meter = new CallMeter(deps.config.UPSTREAM_CALL_BUDGET);
  const session = await deps.v1For(principal.user.id, meter);
  const catalog = new Catalog(session, deps.cache, meter, deps.config.FANOUT_CONCURRENCY);
  const loaded = await Promise.all(overlayTypes.map(async (t) => [t, await deps.overlays.ofType(t)] as const));
  const env: ExecEnv = {
    catalog, ids: deps.ids, mappings: deps.mappings, timeUnit: deps.config.V1_TIMESTAMP_UNIT, renderData: deps.renderData,
    overlays: Object.fromEntries(loaded), nestedLimit: deps.config.QUERY_LIMIT_DEFAULT, aggregateStrings: true, credits: deps.credits,
  };
  return { env, meter, session };
}

export function parseLegacyQuery(deps: Deps, request: FastifyRequest, resource: ResourceSchema): QueryNode {
  const principal = requirePrincipal(request);
  const user = principal.user;
  return parseQuery((request.query ?? {}) as Record<string, unknown>, resource, {
    schemas: deps.mappings.schemas,
    dynamic: { now: new Date(), userId: user.id, roleId: user.role, user: { id: user.id, email: user.email, first_name: user.firstName, last_name: user.lastName, role: user.role } },
    limitDefault: deps.config.QUERY_LIMIT_DEFAULT,
    ...(deps.config.QUERY_LIMIT_MAX !== undefined ? { limitMax: deps.config.QUERY_LIMIT_MAX } : {}),
  });
}

/** Explain output is given to operators (X-Gateway-Operator-Token) or to everyone when EXPLAIN_ENABLED. */
export function wantsExplain(deps: Deps, request: FastifyRequest): boolean {
  if (request.headers['x-gateway-explain'] !== '1') return false;
  if (deps.config.EXPLAIN_ENABLED) return true;
  const t = request.headers['x-gateway-operator-token'];
  return typeof t === 'string' && !!deps.config.GATEWAY_ADMIN_TOKEN && safeEqual(t, deps.config.GATEWAY_ADMIN_TOKEN);
}

function explain(plan: Plan, meter: CallMeter): Record<string, unknown> {
  return { plan: { ...plan, residual: plan.residual ? 'in memory' : null }, ...meter.summary() };
}

/**
 * `{"meta":…,"data":[…]}` written item by item. The first item is awaited before the status is sent, so most
 * failures still answer with an error envelope; a failure after that ends the body early (logged).
 */
async function* jsonArrayEnvelope(items: AsyncIterable<unknown>, log: FastifyBaseLogger, meta?: Record<string, number>, explainAtEnd?: () => Record<string, unknown>): AsyncGenerator<Buffer> {
  let first = true;
  let parts: Uint8Array[] = [Buffer.from(meta ? `{"meta":${JSON.stringify(meta)},"data":[` : '{"data":[')];
  let size = 0;
  const comma = Buffer.from(',');
  try {
    for await (const item of items) {
      if (!first) parts.push(comma);
      const b = (item instanceof RawJson ? item : RawJson.of(item)).json;
      parts.push(b);
      size += b.length;
      first = false;
      if (size > 65_536) { yield Buffer.concat(parts); parts = []; size = 0; }
    }
  } catch (e) {
    log.error({ err: e }, 'the answer failed while streaming; the body is cut short');
    throw e;
  }
  // explain counts are only known once everything is read: they follow the data
  parts.push(Buffer.from(explainAtEnd ? `],"explain":${JSON.stringify(explainAtEnd())}}` : ']}'));
  yield Buffer.concat(parts);
}

const ROUTES: readonly { path: string; resource: string }[] = [
  { path: '/renders', resource: 'render' },
  { path: '/projects', resource: 'project' },
  { path: '/accounts', resource: 'account' },
  { path: '/templates', resource: 'template' },
];

/** GET /renders, /projects, /accounts, /templates and their /:id, with the whole query language. */
export function registerItemRoutes(app: FastifyInstance, deps: Deps): void {
  const planning = { statusToV1: deps.mappings.status.toV1, schemas: deps.mappings.schemas };
  for (const { path, resource } of ROUTES) {
    if (proxied(deps, path)) continue;
    const schema = deps.mappings.schemas[resource] as ResourceSchema;
    app.get(path, async (request: FastifyRequest, reply: FastifyReply) => {
      const q = parseLegacyQuery(deps, request, schema);
      const plan = planQuery(q, resource, planning);
      const { env, meter } = await requestEnv(deps, request, resource === 'template' ? [] : ALL_OVERLAYS);
      const { result } = await executeList(resource, q, plan, env);
      if (result.stream) {
        const atEnd = wantsExplain(deps, request) ? () => explain(plan, meter) : undefined;
        return reply.type('application/json; charset=utf-8').send(Readable.from(jsonArrayEnvelope(result.stream, request.log, result.meta, atEnd)));
      }
      await deps.ids.flush();
      const body: Record<string, unknown> = result.meta ? { meta: result.meta, data: result.data } : { data: result.data };
      if (wantsExplain(deps, request)) body.explain = explain(plan, meter);
      void reply.header('x-gateway-v1-calls', String(meter.calls));
      return body;
    });
    app.get<{ Params: { id: string } }>(`${path}/:id`, async (request, reply) => {
      requirePrincipal(request);
      const q = parseLegacyQuery(deps, request, schema);
      if (!isUuid(request.params.id)) throw errors.forbidden();
      const { env, meter } = await requestEnv(deps, request, resource === 'template' ? [] : ALL_OVERLAYS);
      const data = await executeOne(resource, request.params.id, q, (x) => planQuery(x, resource, planning), env);
      await deps.ids.flush();
      void reply.header('x-gateway-v1-calls', String(meter.calls));
      return wantsExplain(deps, request) ? { data, explain: meter.summary() } : { data };
    });
  }
}
