import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from "fastify";
import { authenticate, type Principal } from './auth/authenticate.js';
import type { Deps } from './deps.js';
import { errorEnvelope, errors } from './errors/catalog.js';
import { registerErrorHandling } from './errors/handler.js';
import { requestToken } from './http/request-token.js';
import { parseQueryString } from './query/querystring.js';
import { registerAuthRoutes } from './routes/auth.js';
import { registerGatewayRoutes } from './routes/gateway.js';
import { registerItemRoutes } from './routes/items.js';
import { registerWriteRoutes } from './routes/writes.js';
import { registerWebhookRoutes } from './routes/webhooks.js';
import { isInternal, legacyAnswers, registerModes } from './routes/modes.js';
import { routeMode } from './config/schema.js';
import { registerUserRoutes } from './routes/users.js';
import { safeEqual, sha256 } from './store/crypto.js';
import { V1UnauthorizedError } from './v1/errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

const PUBLIC_PREFIXES = ['/auth/', '/server/', '/_gateway/'];

/** The authenticated principal of a legacy request, or 403 FORBIDDEN as Directus answers the public role. */
export function requirePrincipal(request: FastifyRequest): Principal {
  if (!request.principal) throw errors.forbidden();
  return request.principal;
}

/** Operator routes: a bearer GATEWAY_ADMIN_TOKEN compared in constant time; anything else is 403. */
export function requireOperator(request: FastifyRequest, adminToken: string | undefined): void {
  const token = requestToken(request.headers, undefined);
  if (!adminToken || !token || !safeEqual(token, adminToken)) throw errors.forbidden();
}

/** Builds the gateway (never listens): legacy routes, auth, operator routes, error envelope. */
export async function buildApp(deps: Deps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as unknown as FastifyBaseLogger,
    bodyLimit: deps.config.MAX_PAYLOAD_BYTES,
    trustProxy: deps.config.TRUST_PROXY,
    routerOptions: { ignoreTrailingSlash: true, querystringParser: (s: string) => parseQueryString(s) },
    // a malformed URL (bad percent-encoding) answers in the Directus envelope too
    frameworkErrors: (err, request, reply) => {
      const ge = err.code === 'FST_ERR_BAD_URL' ? errors.routeNotFound(request.url.split('?')[0] ?? request.url) : errors.invalidPayload(err.message);
      void (reply as unknown as { status(n: number): { send(b: unknown): void } }).status(ge.status).send(errorEnvelope(ge));
    },
  });
  registerErrorHandling(app);
  app.decorateRequest('principal', null);
  await registerModes(app, deps);

  app.addHook('onRequest', async (request) => {
    const path = request.url.split('?')[0] ?? '';
    if (PUBLIC_PREFIXES.some((p) => path.startsWith(p))) return;
    if (legacyAnswers(deps, path) && !isInternal(request.headers)) return;
    const token = requestToken(request.headers, request.query);
    request.principal = token ? await authenticate(token, deps.jwt, deps.users) : null;
  });

  // v1 refused the bound key: forget the cached copy, so a rebind (from any process) takes effect at once
  app.addHook('onError', async (request, _reply, err) => {
    if (err instanceof V1UnauthorizedError && request.principal) deps.forgetKey(request.principal.user.id);
  });

  // the usage ledger: who still calls which legacy route
  app.addHook('onResponse', async (request) => {
    const path = request.url.split('?')[0] ?? '';
    if (path.startsWith('/_gateway/') || path.startsWith('/server/') || isInternal(request.headers)) return;
    const route = `${request.method} ${request.routeOptions.url ?? path}`;
    const p = request.principal;
    if (p) deps.usage.note(route, p.via === 'static' ? `static:${p.tokenId}` : `user:${p.user.id}`, p.via);
    else {
      const auth = request.headers.authorization;
      deps.usage.note(route, auth ? `legacy-token:${sha256(auth).slice(0, 12)}` : 'anonymous', auth ? (routeMode(deps.config, path) === 'translate' ? 'unverified' : 'legacy') : 'anonymous');
    }
  });

  app.get('/server/ping', async (_req, reply) => reply.type('text/plain').send('pong'));
  app.get('/server/health', async () => ({ status: 'ok' }));

  registerAuthRoutes(app, deps);
  registerUserRoutes(app, deps);
  registerItemRoutes(app, deps);
  registerWriteRoutes(app, deps);
  registerGatewayRoutes(app, deps);
  registerWebhookRoutes(app, deps);
  return app;
}
