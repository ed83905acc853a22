import { internalHeaders } from '../compare/legacy-side.js';
import type { Deps } from '../deps.js';
import { ClientShapeStore } from '../store/client-shapes.js';
import { PROOF_BOUNDS, type ProofDeps } from './prove.js';
import { migrationReport, type MigrationReport } from './report.js';
import { clientDeprecations } from './deprecation-progress.js';
import { progressOf } from '../deprecate/progress.js';

/** Asks the gateway itself (in process): what `app.inject` offers. */
export type Inject = (o: { method: string; url: string; headers: Record<string, string> }) => Promise<{ statusCode: number; body: string }>;

/**
 * The proof's I/O: v1 with the client's own bound key (metered), and the gateway's own legacy answer as that user (a
 * short-lived access token the gateway signs for it, marked internal: not counted in usage or client profiles).
 */
export function proofDeps(deps: Deps, inject: Inject): ProofDeps {
  return {
    mappings: deps.mappings,
    ids: deps.ids,
    timeUnit: deps.config.V1_TIMESTAMP_UNIT,
    limitDefault: deps.config.QUERY_LIMIT_DEFAULT,
    bounds: { ...PROOF_BOUNDS, relatedItems: deps.config.MAX_RELATED_ITEMS },
    session: (userId, count) => deps.v1For(userId, { onCall: () => count() }, 'gateway-migrate-proof'),
    async legacy(userId, method, url) {
      const user = await deps.users.byId(userId);
      if (!user) throw new Error(`the client's user ${userId} no longer exists`);
      const token = await deps.jwt.sign({ id: user.id, role: user.role, app_access: true, admin_access: false });
      const res = await inject({ method, url, headers: { authorization: `Bearer ${token}`, ...internalHeaders() } });
      let body: unknown = res.body;
      try { body = JSON.parse(res.body); } catch { /* kept as text */ }
      return { status: res.statusCode, body };
    },
  };
}

/** The migration report of every client (or one), proven when `prove`. */
export async function buildMigrationReport(deps: Deps, inject: Inject, o: { client?: string; prove: boolean }): Promise<MigrationReport> {
  await deps.shapes.flush();
  const report = await migrationReport(new ClientShapeStore(deps.db.kysely), o.prove ? proofDeps(deps, inject) : null, {
    ...(o.client ? { client: o.client } : {}),
    prove: o.prove,
    now: deps.clock.now(),
    retentionDays: deps.config.MIGRATE_RETENTION_DAYS,
    shapesPerClient: deps.config.MIGRATE_SHAPES_PER_CLIENT,
    limitDefault: deps.config.QUERY_LIMIT_DEFAULT,
    mappings: deps.mappings,
  });
  // each client's deprecation rules and its calls to them (issue 41)
  await deps.deprecations.flush();
  const now = deps.clock.now();
  const progress = progressOf(deps.deprecations.list(), await deps.deprecations.calls(o.client?.split('~')[0]), now);
  const ruleFor = deps.deprecations.ruleFor.bind(deps.deprecations);
  const clients = report.clients.map((c) => {
    const deprecations = clientDeprecations(c, ruleFor, progress, now);
    return deprecations.length ? { ...c, deprecations } : c;
  });
  return { ...report, clients };
}
