import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errors } from '../errors/catalog.js';
import { hasOperatorHeader, requestToken } from './request-token.js';
import { safeEqual } from '../store/crypto.js';
import type { Principal } from './authenticate.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /**
     * Who a route answers. `legacy` (default): the authentication hook resolves the principal.
     * `public`: no authentication (login, ping, health). `operator`: GATEWAY_ADMIN_TOKEN only, checked by the
     * operator plugin's own hook. `signed`: the route authenticates itself (webhook signatures).
     */
    access?: 'legacy' | 'public' | 'operator' | 'signed';
    /** Routine routes (probes) whose access-log line is debug. */
    quietLog?: boolean;
  }
}

/** The authenticated principal of a legacy request, or 403 FORBIDDEN as Directus answers the public role. */
export function requirePrincipal(request: FastifyRequest): Principal {
  if (!request.principal) throw errors.forbidden();
  return request.principal;
}

/**
 * True when the request carries the operator token: as `Authorization: Bearer <token>` or as `X-Gateway-Operator-Token`
 * (one token, either header, on every operator route, /metrics and explain alike).
 */
export function isOperator(request: FastifyRequest, adminToken: string | undefined): boolean {
  if (hasOperatorHeader(request, adminToken)) return true;
  const token = requestToken(request.headers, undefined);
  return !!adminToken && !!token && safeEqual(token, adminToken);
}

/** Operator routes: GATEWAY_ADMIN_TOKEN in either header; anything else is 403, saying how to send it (the route is ours). */
export function requireOperator(request: FastifyRequest, adminToken: string | undefined): void {
  if (!isOperator(request, adminToken)) {
    throw errors.forbidden(
      "You don't have permission to access this. Operator routes take GATEWAY_ADMIN_TOKEN as 'Authorization: Bearer <token>' "
      + "or 'X-Gateway-Operator-Token: <token>'.",
    );
  }
}

/**
 * Registers operator routes in their own encapsulated plugin: the guard is a hook of that plugin, so it
 * runs for exactly the routes the router matched there — whatever the URL's spelling (percent-encoding,
 * double slashes, case of the escape) — and never for anything else.
 */
export function operatorRoutes(app: FastifyInstance, adminToken: string | undefined, register: (op: FastifyInstance) => void): void {
  void app.register(async (op) => {
    op.addHook('onRoute', (route) => { route.config = { ...(route.config ?? {}), access: 'operator' }; });
    op.addHook('onRequest', async (request) => requireOperator(request, adminToken));
    register(op);
  });
}
