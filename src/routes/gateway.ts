import type { FastifyInstance } from 'fastify';
import { operatorRoutes } from '../auth/guards.js';
import type { Deps } from '../deps.js';
import { mappingReport } from '../translate/coverage.js';
import { reportHtml } from '../compare/report-html.js';

/** The gateway's own operator routes under /_gateway/ (operator token, checked on the matched route). */
export function registerGatewayRoutes(app: FastifyInstance, deps: Deps): void {
  operatorRoutes(app, deps.config.GATEWAY_ADMIN_TOKEN, (op) => {
    op.get('/_gateway/users', async () => ({ data: await deps.users.list() }));
    op.get('/_gateway/mappings', async () => ({ data: mappingReport(deps.mappings) }));
    op.get('/_gateway/compare', async () => ({ data: await deps.compareStore.report() }));
    op.get('/_gateway/compare.html', async (_req, reply) =>
      reply.type('text/html; charset=utf-8').send(reportHtml(await deps.compareStore.report(), new Date(deps.clock.now()))));
    op.delete('/_gateway/compare', async (_req, reply) => { await deps.compareStore.clear(); return reply.status(204).send(); });
    op.get('/_gateway/usage', async () => ({ data: await deps.usage.list() }));
  });
}
