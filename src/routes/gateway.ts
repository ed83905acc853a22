import type { FastifyInstance } from 'fastify';
import { requireOperator } from '../app.js';
import type { Deps } from '../deps.js';
import { mappingReport } from '../translate/coverage.js';
import { reportHtml } from '../compare/report-html.js';

/** The gateway's own routes under /_gateway/ (operator token), except the v1 webhook receiver. */
export function registerGatewayRoutes(app: FastifyInstance, deps: Deps): void {
  app.addHook('onRequest', async (request) => {
    const path = request.url.split('?')[0] ?? '';
    if (path.startsWith('/_gateway/') && path !== '/_gateway/webhooks/v1') requireOperator(request, deps.config.GATEWAY_ADMIN_TOKEN);
  });
  app.get('/_gateway/users', async () => ({ data: await deps.users.list() }));
  app.get('/_gateway/mappings', async () => ({ data: mappingReport(deps.mappings) }));
  app.get('/_gateway/compare', async () => ({ data: await deps.compareStore.report() }));
  app.get('/_gateway/compare.html', async (_req, reply) => reply.type('text/html; charset=utf-8').send(reportHtml(await deps.compareStore.report(), new Date())));
  app.delete('/_gateway/compare', async (_req, reply) => { await deps.compareStore.clear(); return reply.status(204).send(); });
  app.get('/_gateway/usage', async () => ({ data: await deps.usage.list() }));
}
