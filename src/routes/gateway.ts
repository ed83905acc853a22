import { clientParam } from './client-param.js';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { operatorRoutes } from '../auth/guards.js';
import type { Deps } from '../deps.js';
import { mappingReport } from '../translate/coverage.js';
import { reportCsp, reportHtml } from '../compare/report-html.js';
import { validReportLink } from '../compare/links.js';
import { errors } from '../errors/catalog.js';
import { migrationReportJson } from '../admin/migration-report.js';
import { keptAlive } from '../http/keep-alive.js';

/** The gateway's own operator routes under /_gateway/ (operator token, checked on the matched route). */
export function registerGatewayRoutes(app: FastifyInstance, deps: Deps): void {
  operatorRoutes(app, deps.config.GATEWAY_ADMIN_TOKEN, (op) => {
    op.get('/_gateway/users', async () => ({ data: await deps.users.list() }));
    op.get('/_gateway/mappings', async () => ({ data: mappingReport(deps.mappings) }));
    op.get('/_gateway/compare', async () => ({ data: await deps.compareStore.report() }));
    op.get('/_gateway/compare.html', async (_req, reply) =>
      reply.type('text/html; charset=utf-8').header('content-security-policy', reportCsp())
        .send(reportHtml(await deps.compareStore.report(), new Date(deps.clock.now()))));
    op.delete('/_gateway/compare', async (_req, reply) => { await deps.compareStore.clear(); return reply.status(204).send(); });
    op.get('/_gateway/usage', async () => ({ data: await deps.usage.list() }));
    // the migration guide: per client its shapes, v1 equivalents, proofs, blocked fields and verdict (?client=, ?prove=false)
    // written a client at a time: the report's size is the clients', what is held is one client's
    // (a space every KEEP_ALIVE_MS while a client is proven: the socket is never idle; the operator gone, no more proofs)
    op.get('/_gateway/migrate', async (request, reply) => {
      const q = request.query as Record<string, unknown>;
      const client = clientParam(q);
      const gone = new AbortController();
      reply.raw.once('close', () => { if (!reply.raw.writableFinished) gone.abort(); });
      const json = migrationReportJson(deps, (o) => app.inject(o), { ...(client ? { client } : {}), prove: q.prove !== 'false', signal: gone.signal });
      const first = await json.next(); // the head: a failure before it is still an error envelope
      return reply.type('application/json; charset=utf-8').send(Readable.from(keptAlive((async function* () {
        if (!first.done) yield first.value;
        yield* json;
      })())));
    });
    // the render index per team: renders indexed, backfill state, age, last webhook, last sync, sync calls, bound
    op.get('/_gateway/index', async () => ({ enabled: !!deps.replica, data: deps.replica ? await deps.replica.status() : [] }));
  });
  // read-only views of the report for a browser, opened by a short-lived link (`legacy-gateway compare link`)
  const linked = (request: FastifyRequest) => {
    if (!validReportLink(deps.config.GATEWAY_ADMIN_TOKEN, (request.query as Record<string, unknown>).link, deps.clock.now())) throw errors.forbidden();
  };
  app.get('/_gateway/compare/view', { config: { access: 'signed' } }, async (request, reply) => {
    linked(request);
    const link = String((request.query as Record<string, unknown>).link);
    const refresh = `/_gateway/compare/view.json?link=${encodeURIComponent(link)}`;
    const html = reportHtml(await deps.compareStore.report(), new Date(deps.clock.now()), refresh);
    return reply.type('text/html; charset=utf-8').header('referrer-policy', 'no-referrer').header('cache-control', 'no-store')
      .header('content-security-policy', reportCsp(refresh)).send(html);
  });
  app.get('/_gateway/compare/view.json', { config: { access: 'signed' } }, async (request, reply) => {
    linked(request);
    return reply.header('cache-control', 'no-store').send({ data: await deps.compareStore.report() });
  });
}
