import type { FastifyRequest } from 'fastify';
import { RECORD_RESOURCES, RESOURCE_TRAITS, type OverlayType } from '../query/resources.js';
import type { Mappings } from '../config/mappings.js';
import type { Config } from '../config/schema.js';
import type { V1Cache } from '../live/v1-cache.js';
import type { OverlayStore, RenderDataStore } from '../store/render-extras.js';
import type { IdTranslator } from '../translate/ids.js';
import type { DataRoom } from './data-room.js';
import { Catalog } from '../live/catalog.js';
import type { ExecEnv } from '../live/record-map.js';
import { CallMeter } from '../live/meter.js';
import type { QueryNode } from '../query/ast.js';
import { ExpansionBudget } from '../query/budget.js';
import { parseQuery } from '../query/parse-query.js';
import type { ResourceSchema } from '../query/schema.js';
import { hasOperatorHeader } from '../auth/request-token.js';
import { requestContext, type RequestContextDeps } from './request-context.js';
import type { RenderDataReader } from '../translate/data-at-hand.js';
import type { V1Session } from '../v1/client.js';

/** What a read's execution environment is built from. */
export interface ReadEnvDeps extends RenderDataDeps {
  readonly cache: V1Cache;
  readonly overlays: OverlayStore;
  readonly ids: IdTranslator;
  readonly mappings: Mappings;
  readonly config: Config;
  /** render_credits figures per v1 team id (RENDER_CREDITS, parsed once). */
  readonly credits: Config['renderCredits'];
}

/** Where a request's render data is read from, and the room it is built in. */
export interface RenderDataDeps {
  readonly renderData: RenderDataStore;
  readonly dataRoom: DataRoom;
}
/** What parsing a request's legacy query uses (its context's clock and principal included). */
export type QueryDeps = { readonly mappings: Mappings; readonly config: Config } & RequestContextDeps;

export type { OverlayType } from '../query/resources.js';
/** The types the gateway keeps overlay values for (`RESOURCE_TRAITS[…].overlays`). */
export const ALL_OVERLAYS: readonly OverlayType[] = RECORD_RESOURCES.filter((r): r is OverlayType => RESOURCE_TRAITS[r].overlays);

/** The request's call meter and its v1 session (the bound key of the principal). */
export async function requestSession(deps: RequestContextDeps, request: FastifyRequest): Promise<{ meter: CallMeter; session: V1Session }> {
  const ctx = requestContext(deps, request);
  void ctx.principal; // 403 before any store read when there is no caller
  return { meter: ctx.meter, session: await ctx.session() };
}

/**
 * The execution environment of a legacy read on `session`: catalog, translators, overlays, budgets. Only the overlay
 * types the answer can contain are read (templates carry none).
 */
export async function readEnv(
  deps: ReadEnvDeps, session: V1Session, meter: CallMeter, overlayTypes: readonly OverlayType[] = ALL_OVERLAYS, gone?: AbortSignal,
  afterWrite = false,
): Promise<ExecEnv> {
  const catalog = new Catalog(session, deps.cache, meter, deps.config.FANOUT_CONCURRENCY);
  const loaded = await Promise.all(overlayTypes.map(async (t) => [t, await deps.overlays.ofType(t)] as const));
  return {
    catalog,
    ids: deps.ids,
    mappings: deps.mappings,
    timeUnit: deps.config.V1_TIMESTAMP_UNIT,
    renderData: renderDataOf(deps, session.partition, gone, afterWrite),
    overlays: Object.fromEntries(loaded),
    nestedLimit: deps.config.QUERY_LIMIT_DEFAULT,
    budget: new ExpansionBudget(deps.config.MAX_RELATED_ITEMS, deps.config.MAX_ITEM_MB),
    credits: deps.credits,
    ...(gone ? { gone } : {}),
  };
}

/** Render data as a read of `partition` reads it: weighed, room taken in the data room (per key, per instance), read. */
export function renderDataOf(deps: RenderDataDeps, partition: string, gone?: AbortSignal, afterWrite = false): RenderDataReader {
  const store = deps.renderData;
  return {
    sizes: (ids) => store.sizes(ids),
    many: (ids) => store.many(ids),
    room: deps.dataRoom.forAnswer(partition, gone, afterWrite),
  };
}

/**
 * The per-request pieces every legacy read needs: meter, v1 session and execution environment. `gone`: the answer's end
 * (src/read/answer-end.ts) — a wait for room in the data room ends with it, and the room its reads hold is given back.
 * `afterWrite`: the environment reads the answer of a write already made (its waits for room never end in a 503).
 */
export async function requestEnv(
  deps: ReadEnvDeps & RequestContextDeps,
  request: FastifyRequest,
  overlayTypes: readonly OverlayType[] = ALL_OVERLAYS,
  gone?: AbortSignal,
  afterWrite = false,
): Promise<{ env: ExecEnv; meter: CallMeter; session: V1Session }> {
  const { meter, session } = await requestSession(deps, request);
  return { env: await readEnv(deps, session, meter, overlayTypes, gone, afterWrite), meter, session };
}

/**
 * Parses the request's legacy query for `resource` (or `raw`, a query given otherwise: a write's body query, with the
 * request's caller and clock; the request is never rewritten). `onDynamic` is told when a dynamic variable (`$NOW`,
 * `$CURRENT_USER`, …) was resolved, however it was spelled (a JSON filter may escape its `$`): such an answer depends on
 * the clock or the caller and is never kept.
 */
export function parseLegacyQuery(
  deps: QueryDeps, request: FastifyRequest, resource: ResourceSchema, onDynamic?: () => void, raw: unknown = request.query,
): QueryNode {
  const ctx = requestContext(deps, request);
  const user = ctx.principal.user;
  const used = onDynamic ?? (() => undefined);
  return parseQuery((raw ?? {}) as Record<string, unknown>, resource, {
    schemas: deps.mappings.schemas,
    dynamic: {
      get now() { used(); return new Date(ctx.now); },
      get userId() { used(); return user.id; },
      get roleId() { used(); return user.role; },
      get user() {
        used();
        return { id: user.id, email: user.email, first_name: user.firstName, last_name: user.lastName, role: user.role };
      },
    },
    limitDefault: deps.config.QUERY_LIMIT_DEFAULT,
    maxRelationalDepth: deps.config.MAX_RELATIONAL_DEPTH,
    ...(deps.config.QUERY_LIMIT_MAX !== undefined ? { limitMax: deps.config.QUERY_LIMIT_MAX } : {}),
  });
}

/** Explain output is given to operators (X-Gateway-Operator-Token) or to everyone when EXPLAIN_ENABLED. */
export function wantsExplain(deps: { readonly config: Config }, request: FastifyRequest): boolean {
  if (request.headers['x-gateway-explain'] !== '1') return false;
  if (deps.config.EXPLAIN_ENABLED) return true;
  return hasOperatorHeader(request, deps.config.GATEWAY_ADMIN_TOKEN);
}
