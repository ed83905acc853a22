import type { FastifyRequest } from 'fastify';
import './guards.js';

/** What the gateway asks of a request's matched route: its template, its access class, whether its lines are quiet. */
export interface RouteFacts {
  readonly url: string | undefined;
  readonly access: 'legacy' | 'public' | 'operator' | 'signed';
  readonly quietLog: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Filled by `routeFacts` on first use. */
    routeFacts: RouteFacts | null;
  }
}

/**
 * The matched route's facts, read once per request: Fastify's `request.routeOptions` builds a new object of a dozen
 * properties on every access, and the hooks of one request asked for it six times.
 */
export function routeFacts(request: FastifyRequest): RouteFacts {
  let f = request.routeFacts;
  if (!f) {
    const ro = request.routeOptions;
    f = { url: ro.url, access: ro.config?.access ?? 'legacy', quietLog: ro.config?.quietLog === true };
    request.routeFacts = f;
  }
  return f;
}
