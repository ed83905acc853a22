import type { FastifyInstance } from 'fastify';
import { isOperator, operatorRoutes } from '../auth/guards.js';
import type { Deps } from '../deps.js';
import { healthReport, readiness } from '../ops/health.js';

const PUBLIC = { config: { access: 'public' as const } };
const PROBE = { config: { access: 'public' as const, quietLog: true } };

/** Directus's server routes (ping, health), the orchestrator probes (healthz, readyz) and /metrics. */
export function registerServerRoutes(app: FastifyInstance, deps: Deps): void {
  app.get('/server/ping', PROBE, async (_req, reply) => reply.type('text/plain').send('pong'));
  // Directus shows the checks to admins only; here, to operators
  app.get('/server/health', PUBLIC, async (request, reply) => {
    const report = await healthReport(deps);
    void reply.type('application/health+json; charset=utf-8').status(report.status === 'error' ? 503 : 200);
    return isOperator(request, deps.config.GATEWAY_ADMIN_TOKEN) ? report : { status: report.status };
  });
  // liveness: the process answers (a v1 or store outage must not get the container restarted)
  app.get('/healthz', PROBE, async () => ({ status: 'ok' }));
  app.get('/readyz', PROBE, async (_req, reply) => {
    const r = await readiness(deps);
    return reply.status(r.ready ? 200 : 503).send(r.ready ? { status: 'ready' } : { status: 'not ready', reasons: r.reasons });
  });
  operatorRoutes(app, deps.config.GATEWAY_ADMIN_TOKEN, (op) => {
    op.get('/metrics', async (_req, reply) => {
      const m = await deps.metrics.text();
      return reply.type(m.contentType).send(m.body);
    });
  });
}
