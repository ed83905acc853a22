import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requirePrincipal } from '../auth/guards.js';
import type { Deps } from '../deps.js';
import { AUTH_BODY_BYTES } from './auth.js';
import { errors, GatewayError } from '../errors/catalog.js';
import { SchemaRoutes, serverInfo } from '../schema/directus-schema.js';

/**
 * Directus's schema routes for the legacy collections (src/schema/directus-schema.ts), answered as Directus 10.10 answers a
 * role with app access: a signed-in user reads them, the public role gets 403, an unknown collection or field 403; and
 * /server/info. GraphQL and the websocket are not served: a 404 that says so.
 */
export function registerSchemaRoutes(app: FastifyInstance, deps: Deps): void {
  const schema = new SchemaRoutes(deps.mappings);
  const found = <T>(request: FastifyRequest, v: T | undefined): { data: T } => {
    requirePrincipal(request);
    if (v === undefined) throw errors.forbidden();
    return { data: v };
  };
  type C = { Params: { collection: string } };
  type F = { Params: { collection: string; field: string } };
  app.get('/collections', async (request) => found(request, schema.collections()));
  app.get<C>('/collections/:collection', async (request) => found(request, schema.collection(request.params.collection)));
  app.get('/fields', async (request) => found(request, schema.fields()));
  app.get<C>('/fields/:collection', async (request) => found(request, schema.fields(request.params.collection)));
  app.get<F>('/fields/:collection/:field', async (request) => found(request, schema.field(request.params.collection, request.params.field)));
  app.get('/relations', async (request) => found(request, schema.relations()));
  app.get<C>('/relations/:collection', async (request) => found(request, schema.relations(request.params.collection)));
  // the public part to anyone (a bad token is still refused by the authentication hook, as Directus does)
  const limits = { default: deps.config.QUERY_LIMIT_DEFAULT, max: deps.config.QUERY_LIMIT_MAX };
  app.get('/server/info', async (request) => ({ data: serverInfo(request.principal !== null, limits) }));
  // the SDK's graphql() and realtime(): not served (Directus answers a disabled websocket with this 404 too)
  const notServed = (what: string) => async (request: FastifyRequest) => {
    const path = request.url.split('?')[0] ?? request.url;
    throw new GatewayError('ROUTE_NOT_FOUND', `Route ${path} doesn't exist.`, {
      extensions: { path, reason: `${what} is not served by this gateway: use the REST routes (docs/clients.md)` },
    });
  };
  // (not served: a body of its own is not read past a few KB — anyone may send one)
  for (const url of ['/graphql', '/graphql/system']) {
    app.route({ method: ['GET', 'POST'], url, config: { access: 'public' }, bodyLimit: AUTH_BODY_BYTES, handler: notServed('GraphQL') });
  }
  app.get('/websocket', { config: { access: 'public' } }, notServed('The websocket (realtime)'));
}
