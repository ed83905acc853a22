import { internalHeaders } from '../compare/legacy-side.js';
import type { Deps } from '../deps.js';
import { ClientShapeStore } from '../store/client-shapes.js';
import { ClientLabelStore, clientOfLabel, labelOf } from '../store/client-labels.js';
import { PROOF_BOUNDS, type ProofDeps } from '../migrate/prove.js';
import { snippetRunner } from '../migrate/snippet-run.js';
import { clientReports, reportHead, type ClientReport, type MigrationReport } from '../migrate/report.js';
import { clientDeprecations } from '../migrate/deprecation-progress.js';
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
    bounds: { ...PROOF_BOUNDS, relatedItems: Math.min(PROOF_BOUNDS.relatedItems, deps.config.MAX_RELATED_ITEMS) },
    session: (userId, count) => deps.v1For(userId, { onCall: () => count() }, 'gateway-migrate-proof'),
    // the snippets the report hands out, run in a sandbox against v1 with the client's own key (in their environment only)
    snippets: snippetRunner(deps.v1BaseUrl),
    keyOf: (userId) => deps.users.v1Key(userId),
    now: () => deps.clock.now(),
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

/** What a report is asked for: a client (or every one), proven or not; `signal`: its reader has gone (no more proofs). */
export interface ReportAsk { readonly client?: string; readonly prove: boolean; readonly signal?: AbortSignal }

/** The migration report of every client (or one), proven when `prove`: built whole (the command line's formats). */
export async function buildMigrationReport(deps: Deps, inject: Inject, o: ReportAsk): Promise<MigrationReport> {
  const { head, clients } = await migrationParts(deps, inject, o);
  const all: ClientReport[] = [];
  for await (const c of clients) all.push(c);
  return { ...head, clients: all };
}

/**
 * The migration report as the JSON text of `{"data": report}`, written a client at a time (`GET /_gateway/migrate`): a
 * client's rows are read, proven and written before the next client's are read, so what is held is one client's report.
 */
export async function* migrationReportJson(deps: Deps, inject: Inject, o: ReportAsk): AsyncGenerator<string> {
  const { head, clients } = await migrationParts(deps, inject, o);
  const text = JSON.stringify({ data: { ...head, clients: [] } });
  const open = text.slice(0, -3); // `…"clients":[` of `…"clients":[]}}`
  yield open;
  let first = true;
  for await (const c of clients) {
    yield `${first ? '' : ','}${JSON.stringify(c)}`;
    first = false;
  }
  yield ']}}';
}

/** Who a client acts as, for the operator (the report is the operator's): the user's email, or a static token's name and its user's. */
function ownerLookup(deps: Deps): (client: string) => Promise<string | undefined> {
  let tokens: Promise<Map<string, { name: string; userId: string }>> | undefined;
  const emails = new Map<string, Promise<string | undefined>>();
  const emailOf = (userId: string) => {
    let e = emails.get(userId);
    if (!e) emails.set(userId, (e = deps.users.byId(userId).then((u) => u?.email)));
    return e;
  };
  return async (client) => {
    const principal = client.split('~')[0] ?? '';
    const id = principal.slice(principal.indexOf(':') + 1);
    if (principal.startsWith('user:')) return emailOf(id);
    tokens ??= deps.users.listStaticTokens().then((all) => new Map(all.map((t) => [t.id, { name: t.name, userId: t.user_id }])));
    const t = (await tokens).get(id);
    if (!t) return undefined;
    const email = await emailOf(t.userId);
    return `token "${t.name}"${email ? ` of ${email}` : ''}`;
  };
}

/** The report's head and its clients, one at a time, each with its deprecation rules and its calls to them (issue 41). */
async function migrationParts(deps: Deps, inject: Inject, o: ReportAsk) {
  await deps.shapes.flush();
  const labels = await new ClientLabelStore(deps.db.kysely).all();
  // --client names a client, a principal or a label
  const client = o.client ? (clientOfLabel(labels, o.client) ?? o.client) : undefined;
  const owner = ownerLookup(deps);
  const options = {
    ...(client ? { client } : {}),
    prove: o.prove,
    now: deps.clock.now(),
    retentionDays: deps.config.MIGRATE_RETENTION_DAYS,
    shapesPerClient: deps.config.MIGRATE_SHAPES_PER_CLIENT,
    limitDefault: deps.config.QUERY_LIMIT_DEFAULT,
    mappings: deps.mappings,
    // (the proofs' time is real time: what the operator waits for)
    proofTime: { budgetMs: deps.config.MIGRATE_PROOF_BUDGET_MS, clock: () => performance.now(), ...(o.signal ? { signal: o.signal } : {}) },
  };
  await deps.deprecations.flush();
  const now = deps.clock.now();
  const progress = progressOf(deps.deprecations.list(), await deps.deprecations.calls(client?.split('~')[0]), now);
  const ruleFor = deps.deprecations.ruleFor.bind(deps.deprecations);
  const head = reportHead(options);
  const clients = (async function* () {
    for await (const c of clientReports(new ClientShapeStore(deps.db.kysely), o.prove ? proofDeps(deps, inject) : null, options)) {
      const deprecations = clientDeprecations(c, ruleFor, progress, now);
      const label = labelOf(labels, c.client);
      const who = await owner(c.client);
      const { client: id, ...rest } = c;
      yield { client: id, ...(label ? { label } : {}), ...(who ? { owner: who } : {}), ...rest, ...(deprecations.length ? { deprecations } : {}) };
    }
  })();
  return { head, clients };
}
