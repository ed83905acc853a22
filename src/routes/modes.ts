import httpProxy from '@fastify/http-proxy';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors, type GatewayError } from '../errors/catalog.js';
import { ANSWERED_BY, ComparisonModes } from '../http/comparison-modes.js';
import { anyLegacyMode, routeMode, ROUTE_PREFIXES } from '../config/route-modes.js';
import type { Deps } from '../deps.js';

export { ANSWERED_BY };
/** @fastify/http-proxy's methods, and Directus's SEARCH. */
const PROXY_METHODS = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS', 'SEARCH'];
const answeredByLegacy = {
  rewriteHeaders: (h: Record<string, unknown>) => ({ ...h, [ANSWERED_BY]: 'legacy' }),
  // a legacy side that does not answer is a 503 in the envelope, as a shadowed route's (attack pass 20: a 500)
  onError: (reply: { send(payload: unknown): unknown }, { error }: { error: Error }) => {
    const cause = (error as { cause?: { code?: unknown } }).cause?.code ?? (error as { code?: unknown }).code ?? error.name;
    void reply.send(errors.serviceUnavailable(`The legacy backend did not answer (${String(cause)}).`, 'legacy'));
  },
};

declare module 'fastify' {
  interface FastifyInstance {
    /** Resolves when every background comparison has ended (tests, shutdown). */
    comparisonsIdle: () => Promise<void>;
  }
}

/**
 * Per-route modes (ROUTE_MODES): translate (default), proxy (@fastify/http-proxy to LEGACY_BASE_URL), and shadow and
 * compare (src/http/comparison-modes.ts), hooked in here. `admit`: whether a shadowed request may go on once its body (`bytes`) is
 * read (the per-address gate of those without a credential; SHADOW_BODY_MB of those with one), or the error to answer.
 */
export async function registerModes(
  app: FastifyInstance, deps: Deps, admit: (req: FastifyRequest, reply: FastifyReply, bytes: number) => GatewayError | undefined,
): Promise<void> {
  const { config } = deps;
  const legacyBase = config.LEGACY_BASE_URL;
  if (!anyLegacyMode(config) || !legacyBase) { app.decorate('comparisonsIdle', async () => {}); return; }
  for (const prefix of ROUTE_PREFIXES) {
    if (routeMode(config, prefix) !== 'proxy') continue;
    const items = ['/renders', '/projects', '/accounts', '/templates'].includes(prefix) ? [prefix, `/items${prefix}`] : [prefix];
    for (const p of items) {
      await app.register(httpProxy, {
        upstream: legacyBase, prefix: p, rewritePrefix: p, http2: false, replyOptions: answeredByLegacy, httpMethods: PROXY_METHODS,
      });
    }
  }
  const modes = new ComparisonModes({ ...deps, noiseRepeat: deps.mappings.comparison.noiseRepeat }, legacyBase,
    (o) => app.inject({ ...o, method: o.method as 'GET' }));
  app.decorate('comparisonsIdle', () => modes.idle());
  app.addHook('onClose', () => modes.idle());
  app.addHook('onRequest', async (req, reply) => ((await modes.shadow(req, reply, admit)) ? reply : undefined));
  app.addHook('onSend', async (req, reply, payload) => {
    modes.compareAfter(req, reply.statusCode, reply.elapsedTime, payload);
    return payload;
  });
}
