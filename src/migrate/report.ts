import type { ClientDeprecation } from './deprecation-progress.js';
import { v1Of } from './v1-resources.js';
import type { Mappings } from '../config/mappings.js';
import { medianOf, type ClientShapeStore, type ShapeRow } from '../store/client-shapes.js';
import { principalOf } from '../auth/client-id.js';
import { clientWork, type BlockedField, type Equivalent } from './equivalent.js';
import { equivalentOfShape } from './instantiate.js';
import { prove, type Proof, type ProofDeps, type Samples } from './prove.js';
import type { Shape } from './shape.js';
import { renderSnippets, type Snippets } from './snippets.js';
import { noEquivalent, readStoredShape, unreadableShape } from './stored-shape.js';

/** What every migration guide states, whatever the client. */
export const MIGRATION_FACTS: readonly { readonly title: string; readonly text: string }[] = [
  {
    title: 'v1 keys belong to a person',
    text: 'A v1 API key is created by one person in the dashboard and carries that person\'s access; it is not a team\'s. ' +
      'A legacy static-token service account becomes a key of a named person (or of a person created for the service), ' +
      'who must be a member of every team the service reads; revoking that person\'s key stops the service.',
  },
  {
    title: 'Polling becomes a webhook',
    text: 'Polling a render until it is complete becomes a v1 webhook: register an HTTPS endpoint per team (events ' +
      'render.status_changed, render.complete, render.failed), check X-Webhook-Signature (HMAC-SHA256 of the raw body) and ' +
      'deduplicate on X-Webhook-ID. GET /v1/renders/{id} remains for a one-off look.',
  },
  {
    title: 'Ids change form',
    text: 'Legacy uuids become prefixed v1 ids (rend_, proj_, team_, tpl_, user_). `legacy-gateway ids export` writes every ' +
      'pair the gateway knows (legacy_id,v1_id,type,source): translate the ids a client stores before it switches.',
  },
  {
    title: 'Statuses and times',
    text: 'v1 statuses are named differently (initializing is draft, queued is ready, finalizing is encoding) and times are ' +
      'numbers, not ISO strings; accounts are teams; pages are cursors (pass next_cursor until it is null), at most 60 items.',
  },
];

export type Verdict = 'ready' | 'needs work' | 'blocked';

export interface ShapeReport {
  readonly key: string;
  readonly shape: Shape;
  readonly count: number;
  readonly firstSeen: string;
  readonly lastSeen: string;
  readonly latencyMsMean: number;
  readonly latencyMsMax: number;
  readonly errorRate: number;
  /** The median v1 calls the gateway metered for this shape (0: answered from the replica or a kept answer). */
  readonly gatewayV1CallsMedian: number | null;
  readonly compared: number;
  readonly diffRate: number | null;
  readonly equivalent: Equivalent;
  /** What the client must do itself because v1 cannot (translation aside). */
  readonly clientSteps: readonly string[];
  readonly proof: Proof | null;
  /** The v1 calls the equivalent took in the proof. */
  readonly equivalentV1Calls: number | null;
  readonly snippets: Snippets;
  /** What this shape's traffic suggests beyond its equivalent (polling a render: a webhook instead). */
  readonly advice: readonly string[];
}

export interface ClientReport {
  readonly client: string;
  /** The operator's label for it (`legacy-gateway migrate label`), its own or its principal's. */
  readonly label?: string;
  /** Who it acts as, for the operator: the user's email, or a static token's name and its user's email. */
  readonly owner?: string;
  readonly principal: string;
  readonly userAgentFamily: string;
  /**
   * Family `other`: the User-Agents it came with (the most used first, at most AGENTS_KEPT, each cut): a pattern for them
   * in mappings/clients.json gives them a family of their own.
   */
  readonly agents?: readonly { readonly agent: string; readonly count: number }[];
  readonly verdict: Verdict;
  readonly reasons: readonly string[];
  readonly requests: number;
  readonly errorRate: number;
  readonly diffRate: number | null;
  readonly blocked: readonly BlockedField[];
  readonly shapes: readonly ShapeReport[];
  /** The deprecation rules its calls fall under and its calls to them (src/migrate/deprecation-progress.ts). */
  readonly deprecations?: readonly ClientDeprecation[];
  /** Its shapes by what their proofs found, and the share of its calls the exact ones carry (null: proofs not run). */
  readonly readiness: Readiness;
}

/**
 * A client's shapes by what their proofs found: `exact` (the proof equal, the snippets whole, no blocked field),
 * `partial` (equal, but the snippets leave a step to the client or a field has no v1 source), `differs`, `unproven`
 * (not run, or no proof); `ready` is the share of its calls the exact shapes carry ("92 % of its traffic is ready").
 */
export interface Readiness {
  readonly exact: number;
  readonly partial: number;
  readonly differs: number;
  readonly unproven: number;
  readonly ready: number | null;
}

/** What a shape's proof found, as the readiness counts it. */
export function shapeReadiness(s: Pick<ShapeReport, 'proof' | 'snippets' | 'equivalent'>): keyof Omit<Readiness, 'ready'> {
  if (!s.proof || s.proof.result === 'not run') return 'unproven';
  if (s.proof.result === 'differs') return 'differs';
  return s.snippets.partial.length > 0 || s.equivalent.blocked.length > 0 ? 'partial' : 'exact';
}

function readinessOf(shapes: readonly ShapeReport[], proven: boolean): Readiness {
  const n = { exact: 0, partial: 0, differs: 0, unproven: 0 };
  let calls = 0;
  let exactCalls = 0;
  for (const s of shapes) {
    const k = shapeReadiness(s);
    n[k]++;
    calls += s.count;
    if (k === 'exact') exactCalls += s.count;
  }
  return { ...n, ready: proven ? rate(exactCalls, calls) : null };
}

export interface MigrationReport {
  readonly generatedAt: string;
  readonly retentionDays: number;
  readonly shapesPerClient: number;
  readonly facts: typeof MIGRATION_FACTS;
  readonly clients: readonly ClientReport[];
}

export interface ReportOptions {
  readonly client?: string;
  /** Run the proofs (v1 reads with each client's key, the gateway's own legacy answers); false: equivalents only. */
  readonly prove: boolean;
  readonly now: number;
  readonly retentionDays: number;
  readonly shapesPerClient: number;
  readonly limitDefault: number;
  readonly mappings: Mappings;
  /**
   * The time the proofs of one report may take together (MIGRATE_PROOF_BUDGET_MS), shared among its clients — each
   * client has the time left over the clients left, so one client's many shapes never take another's — read on `clock`;
   * and the report's reader gone (`signal`): nothing more is proven. Absent: no bound.
   */
  readonly proofTime?: { readonly budgetMs: number; readonly clock: () => number; readonly signal?: AbortSignal };
}

/** A render read by id for its status, again and again (at least 10 times, at least once a minute on average): polling. */
export function adviceFor(shape: Shape, count: number, firstSeen: number, lastSeen: number): string[] {
  const readsStatus = shape.fields.includes('status') || shape.fields.includes('*');
  const perMinute = count / Math.max(1, (lastSeen - firstSeen) / 60_000);
  if (shape.kind === 'one' && v1Of(shape.resource)?.webhooks && readsStatus && count >= 10 && perMinute >= 1) {
    return [`polling a render's status (${count} reads, ${Math.round(perMinute)} a minute): a v1 webhook (render.complete, render.failed) ` +
      'replaces it; keep GET /v1/renders/{id} for a one-off look'];
  }
  return [];
}

const rate = (n: number, d: number) => (d === 0 ? 0 : Math.round((n / d) * 10_000) / 10_000);
const fnName = (i: number) => `shape${i + 1}`;

/** The verdict of a client from its shapes, with every reason (a blocked field first, then the work and the proofs). */
export function verdictOf(shapes: readonly Pick<ShapeReport, 'key' | 'equivalent' | 'proof' | 'clientSteps'>[]): { verdict: Verdict; reasons: string[] } {
  const reasons: string[] = [];
  const blocked = shapes.filter((s) => s.equivalent.blocked.length > 0);
  if (blocked.length) {
    const fields = [...new Set(blocked.flatMap((s) => s.equivalent.blocked.map((b) => b.field)))];
    reasons.push(`reads or writes a field with no v1 source: ${fields.join(', ')}`);
  }
  const work = shapes.filter((s) => s.clientSteps.length > 0);
  const unproven = shapes.filter((s) => s.proof?.result !== 'equal');
  for (const s of work) reasons.push(`${s.key}: ${s.clientSteps.join('; ')}`);
  for (const s of unproven) {
    const p = s.proof;
    reasons.push(`${s.key}: ${!p ? 'not proven (proofs not run)' : p.result === 'differs'
      ? `the equivalent differs: ${p.differences.map((d) => d.path).join(', ') || p.reason}` : `not proven: ${p.reason ?? ''}`}`);
  }
  return { verdict: blocked.length ? 'blocked' : work.length === 0 && unproven.length === 0 ? 'ready' : 'needs work', reasons };
}

/** The rows the report reads: the clients, then one client's rows at a time. */
export type ReportSource = Pick<ClientShapeStore, 'clients' | 'list'> & Partial<Pick<ClientShapeStore, 'agents'>>;

/** The migration report: per client, its shapes with their v1 equivalents, proofs, blocked fields and the verdict. */
export async function migrationReport(store: ReportSource, proofs: ProofDeps | null, o: ReportOptions): Promise<MigrationReport> {
  const clients: ClientReport[] = [];
  for await (const c of clientReports(store, proofs, o)) clients.push(c);
  return { ...reportHead(o), clients };
}

/** What the report says before its clients. */
export function reportHead(o: Pick<ReportOptions, 'now' | 'retentionDays' | 'shapesPerClient'>): Omit<MigrationReport, 'clients'> {
  return { generatedAt: new Date(o.now).toISOString(), retentionDays: o.retentionDays, shapesPerClient: o.shapesPerClient, facts: MIGRATION_FACTS };
}

/** The report's clients one at a time: each client's rows read alone and its proofs run before the next client's are read. */
export async function* clientReports(store: ReportSource, proofs: ProofDeps | null, o: ReportOptions): AsyncGenerator<ClientReport> {
  const samples = new Map<string, Promise<Samples>>();
  const time = o.proofTime;
  const end = time ? time.clock() + time.budgetMs : Infinity;
  const clients = await store.clients(o.client);
  for (const [n, client] of clients.entries()) {
    if (time?.signal?.aborted) return; // the reader has gone: no more proofs, nor rows read
    const list = await store.list(client);
    if (list.length === 0) continue;
    // this client's share of the time left: the time left over the clients left (a share unused passes on)
    const until = time ? time.clock() + (end - time.clock()) / (clients.length - n) : Infinity;
    const shapes: ShapeReport[] = [];
    for (const [i, r] of list.entries()) {
      if (time?.signal?.aborted) return;
      const late = time !== undefined && time.clock() >= until;
      shapes.push(await shapeReport(r, i, late ? null : proofs, o, samples));
      const last = shapes[shapes.length - 1] as ShapeReport;
      if (late && o.prove && proofs) shapes[shapes.length - 1] = { ...last, proof: outOfTime(time.budgetMs, clients.length) };
    }
    // (family `other`: the User-Agents it came with, for the operator to give them families)
    const agents = client.endsWith('~other') ? await store.agents?.(client) : undefined;
    yield { ...clientReport(client, list, shapes, o.prove && proofs !== null), ...(agents?.length ? { agents } : {}) };
  }
}

/** A proof not run: its client's share of the report's proof time was spent before it. */
const outOfTime = (budgetMs: number, clients: number): Proof => ({
  result: 'not run', differences: [], v1Calls: 0,
  reason: `not proven: the report's proof time (MIGRATE_PROOF_BUDGET_MS, ${Math.round(budgetMs / 1000)} s, shared by its ${clients} ` +
    "client(s)) was spent before this shape — ask for this client's report alone (?client= or --client) to prove it",
});

const proofFailed = (e: unknown): Proof => ({ result: 'not run', reason: `the proof failed: ${(e as Error).message}`, differences: [], v1Calls: 0 });

/** One row's report; a row that cannot be read, or whose equivalent cannot be made, says so (the report goes on). */
async function shapeReport(
  r: ShapeRow, i: number, proofs: ProofDeps | null, o: ReportOptions, samples: Map<string, Promise<Samples>>,
): Promise<ShapeReport> {
  const stored = readStoredShape(r.shape);
  const shape = stored.ok ? stored.shape : unreadableShape(r.key);
  let equivalent: Equivalent;
  try {
    equivalent = stored.ok ? equivalentOfShape(shape, o.mappings, o.limitDefault)
      : noEquivalent(`this row cannot be read (${stored.why}): it was written by another version or damaged`);
  } catch (e) {
    equivalent = noEquivalent(`the v1 equivalent could not be made: ${(e as Error).message}`);
  }
  let proof: Proof | null = null;
  const snippets = renderSnippets(equivalent, fnName(i));
  if (o.prove && proofs) {
    // the proof runs the snippets handed out below, as they are
    proof = stored.ok ? await prove(shape, equivalent, r.userId, proofs, samples, { snippets, fn: fnName(i) }).catch(proofFailed)
      : { result: 'not run', reason: 'the row cannot be read', differences: [], v1Calls: 0 };
  }
  return {
    key: shape.key, shape, count: r.count, firstSeen: new Date(r.firstSeen).toISOString(), lastSeen: new Date(r.lastSeen).toISOString(),
    latencyMsMean: Math.round((r.msTotal / Math.max(1, r.count)) * 10) / 10, latencyMsMax: Math.round(r.msMax * 10) / 10,
    errorRate: rate(r.errors, r.count), gatewayV1CallsMedian: medianOf(r.calls), compared: r.compared,
    diffRate: r.compared ? rate(r.differing, r.compared) : null, equivalent,
    clientSteps: clientWork(equivalent).map((s) => s.detail), proof,
    equivalentV1Calls: proof && proof.result !== 'not run' ? proof.v1Calls : null,
    snippets,
    advice: adviceFor(shape, r.count, r.firstSeen, r.lastSeen),
  };
}

function clientReport(client: string, list: readonly ShapeRow[], shapes: ShapeReport[], proven: boolean): ClientReport {
  const { verdict, reasons } = verdictOf(shapes);
  const requests = list.reduce((s, r) => s + r.count, 0);
  const compared = list.reduce((s, r) => s + r.compared, 0);
  const blocked = new Map(shapes.flatMap((s) => s.equivalent.blocked).map((b) => [b.field, b]));
  return {
    client, principal: principalOf(client), userAgentFamily: client.split('~')[1] ?? 'none', verdict, reasons, requests,
    errorRate: rate(list.reduce((s, r) => s + r.errors, 0), requests),
    diffRate: compared ? rate(list.reduce((s, r) => s + r.differing, 0), compared) : null,
    blocked: [...blocked.values()], shapes, readiness: readinessOf(shapes, proven),
  };
}
