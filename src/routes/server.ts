import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';

/** Directus's server routes: ping and health (public). */
export function registerServerRoutes(app: FastifyInstance, _deps: Deps): void {
  app.get('/server/ping', { config: { access: 'public' } }, async (_req, reply) => reply.type('text/plain').send('pong'));
  app.get('/server/health', { config: { access: 'public' } }, async () => ({ status: 'ok' }));
}
