import type { Mappings } from '../config/mappings.js';
import { diffAnswers, type Difference } from '../compare/diff.js';
import { Compare, FieldRef, Query } from '../query/ast.js';
import type { Lookup, Rec } from '../query/compile.js';
import type { QueryNode } from '../query/ast.js';
import { ExpansionBudget } from '../query/budget.js';
import { compileProjection } from '../query/project.js';
import { selectRecords, type QueryResult } from '../query/run.js';
import type { ResourceSchema, SchemaRegistry } from '../query/schema.js';
import type { IdTranslator } from '../translate/ids.js';
import type { TimeUnit } from '../translate/time.js';
import type { V1Session } from '../v1/client.js';
import type { V1Render } from '../v1/schemas.js';
import { LIST_PARAMS, type Equivalent, type V1Call } from './equivalent.js';
import { instantiate, planOf, queryString, type Values } from './instantiate.js';
import { bare, own } from '../lib/own.js';
import type { Shape } from './shape.js';
import { metaDifferences, snippetData, snippetDifferences } from './snippet-answer.js';
import { importedOf, snippetParams } from './snippet-params.js';
import type { SnippetRunner } from './snippet-run.js';
import { renderSnippets, type Snippets } from './snippets.js';
import { combined, listed, runSnippets, type Proof } from './proof-verdict.js';
import { recordsOf } from './records-of.js';
import { v1Of } from './v1-resources.js';
import { traitsOf, type RecordResource } from '../query/resources.js';

export { recordsOf } from './records-of.js';

export { PROOF_PATHS, type Proof, type SnippetProof } from './proof-verdict.js';
export { PROOF_DRAWS, sampleValues, valuesFrom, type Samples } from './proof-values.js';
import { MASKED, ownUuidDraw, PROOF_DRAWS, sampleValues, valuesFrom, type Samples } from './proof-values.js';

export interface ProofDeps {
  readonly mappings: Mappings;
  readonly ids: IdTranslator;
  readonly timeUnit: TimeUnit;
  readonly limitDefault: number;
  /** A v1 session with the user's own key; `count` is told of every call. */
  session(userId: string, count: () => void): Promise<V1Session>;
  /** The gateway's legacy answer to a request, as that user. */
  legacy(userId: string, method: string, url: string): Promise<{ status: number; body: unknown }>;
  /** What one proof may spend (PROOF_BOUNDS by default). */
  readonly bounds?: ProofBounds;
  /** Runs the snippets (none: the proof compares the evaluator's reading of the calls only, and says so). */
  readonly snippets?: SnippetRunner;
  /** The user's v1 key, for the snippets' environment (never written anywhere else). */
  keyOf?(userId: string): Promise<string | undefined>;
  readonly now?: () => number;
}

/** What one proof may spend: v1 calls (each a page of at most 60 items: the memory of what the calls return), related items expanded. */
export interface ProofBounds {
  readonly v1Calls: number;
  readonly relatedItems: number;
}
/**
 * A proof's evaluation, its diff and its reading of the snippets' output run in the gateway's process, between other
 * users' reads (the operator route): each over at most 5 000 related items (50 000 held every other read 0.2–1.3 s,
 * again and again for the report's five minutes: attack pass 34, M-1).
 */
export const PROOF_BOUNDS: ProofBounds = { v1Calls: 500, relatedItems: 5_000 };

/** The event loop's turn: the steps of a proof (each bounded) run in turns of their own, other requests answered between. */
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));


/** A proof stopped at one of its bounds. */
class OverBound extends Error {}

/** What the calls returned, by call name. */
type Results = Map<string, unknown[]>;

const items = (x: unknown): unknown[] => {
  const d = (x as { data?: unknown }).data;
  return Array.isArray(d) ? d : [x];
};

/** `{project.id}` of a loop item, or a parameter. */
function resolve(value: string, item: unknown, each: string | null, params: Readonly<Record<string, string>>): string {
  return value.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const parts = name.split('.');
    const loop = each ? (own(LIST_PARAMS, each) ? each : each.replace(/ies$/, 'y').replace(/s$/, '')) : null;
    if (loop && parts[0] === loop) {
      let v: unknown = item;
      for (const p of parts.slice(1)) v = own(v as Record<string, unknown> | null, p);
      return String(v);
    }
    return own(params, name) ?? '';
  });
}

/**
 * Runs the equivalent's calls in order (the cursor loop included) with the session. Writes are not run. `guard` is asked
 * before each call and after each page (it throws past the proof's bound).
 */
export async function runCalls(e: Equivalent, params: Readonly<Record<string, string>>, session: V1Session, guard: () => void = () => {})
  : Promise<Results> {
  const out: Results = new Map();
  for (const c of e.calls) {
    if (c.method !== 'GET') throw new Error(`${c.method} ${c.path} is a write: proofs do not run writes`);
    const got: unknown[] = [];
    const list = c.each ? own(LIST_PARAMS, c.each) : undefined;
    const over: unknown[] = !c.each ? [undefined] : list ? (own(params, list) ?? '').split(',').filter(Boolean) : out.get(c.each) ?? [];
    // a status filter: one list per v1 status the legacy status stands for
    const statuses = c.perStatus ? (params.v1_statuses ?? '').split(',').filter(Boolean) : [undefined];
    for (const item of over) {
      for (const v1 of statuses) {
        guard();
        got.push(...(await fetchCall(c, item, v1 === undefined ? params : { ...params, v1_status: v1 }, session, guard)));
      }
    }
    out.set(c.name, [...(out.get(c.name) ?? []), ...got]);
  }
  return out;
}

async function fetchCall(c: V1Call, item: unknown, params: Readonly<Record<string, string>>, session: V1Session, guard: () => void)
  : Promise<unknown[]> {
  const path = resolve(c.path, item, c.each, params);
  const query = Object.fromEntries(Object.entries(c.query).map(([k, v]) => [k, resolve(v, item, c.each, params)]));
  const { limit: _limit, ...rest } = query;
  const id = path.split('/')[3];
  // the calls through the session's typed methods (the client's validation, retries and metering)
  if (path === '/v1/teams') return (await session.teams()).data;
  if (path.startsWith('/v1/teams/') && id) return (await session.teams()).data.filter((t) => t.id === id);
  if (path === '/v1/me') return [await session.me()];
  if (path === '/v1/users') return (await session.members(rest.team_id ?? '')).data.map((m) => ({ ...m, team_id: rest.team_id }));
  if (path.startsWith('/v1/projects/') && id) return [await session.project(id)];
  if (path.startsWith('/v1/renders/') && id) return [await session.render(id)];
  if (path === '/v1/templates') return (await session.templates(rest.project_id ?? '')).data;
  const all: unknown[] = [];
  if (path === '/v1/projects') {
    const team = rest.team_id ?? '';
    for await (const page of session.pages((cursor) => session.projectsPage(team, { limit: 60, ...(cursor ? { cursor } : {}) }))) {
      all.push(...page);
      guard();
    }
    return all;
  }
  if (path === '/v1/renders') {
    const status = rest.status as V1Render['status'] | undefined;
    const order = rest.order as 'asc' | 'desc' | undefined;
    for await (const page of session.pages((cursor) => session.rendersPage(rest.project_id ?? '', {
      limit: 60, ...(cursor ? { cursor } : {}), ...(status ? { status } : {}), ...(order ? { order } : {}),
    }))) {
      all.push(...page);
      guard();
    }
    return all;
  }
  return items(await Promise.reject(new Error(`no v1 call ${path}`)));
}

/** The legacy answer over the records, expanding at most `max` related items (undefined past it). */
function answerOf(records: readonly Rec[], q: QueryNode, schemas: SchemaRegistry, lookup: Lookup, max: number): QueryResult | undefined {
  const budget = new ExpansionBudget(max);
  try {
    const sel = selectRecords(records, q, schemas, lookup, { numericStrings: true });
    const data = sel.rows ?? (sel.page ?? []).map(compileProjection(q.fields, schemas[q.resource] as ResourceSchema, schemas, lookup, budget));
    return sel.meta ? { meta: sel.meta, data } : { data };
  } catch (e) {
    if (budget.spent > max) return undefined;
    throw e;
  }
}

/** The error code of a refused legacy answer (`INVALID_QUERY`). */
const errorCode = (body: unknown): string => {
  const code = (body as { errors?: { extensions?: { code?: unknown } }[] } | null)?.errors?.[0]?.extensions?.code;
  return typeof code === 'string' ? code.slice(0, 64) : 'refused';
};

/** The fields of a resource only the gateway keeps (no v1 source: `store` or `none` in the mappings). */
function keptOnly(m: Mappings, resource: string): string[] {
  return Object.entries(own(m.resources, resource)?.fields ?? {}).filter(([, f]) => f.source.kind === 'store' || f.source.kind === 'none').map(([k]) => k);
}

/** `body` with the top-level `fields` of its item (`data`, an object) left out. */
function withoutFields(body: unknown, fields: readonly string[]): unknown {
  if (fields.length === 0 || !body || typeof body !== 'object') return body;
  const data = (body as { data?: unknown }).data;
  if (!data || typeof data !== 'object' || Array.isArray(data)) return body;
  const kept = Object.fromEntries(Object.entries(data).filter(([k]) => !fields.includes(k)));
  return { ...(body as object), data: kept };
}

/** The v1 form of the ids a filter names: the parameters of the equivalent's calls. */
async function paramsOf(raw: Record<string, unknown>, shape: Shape, samples: Samples, ids: IdTranslator, m: Mappings)
  : Promise<Record<string, string>> {
  const params: Record<string, string> = {};
  const parsed = typeof raw.filter === 'string' ? (JSON.parse(raw.filter) as Record<string, unknown>) : {};
  // the top-level conditions, an _and of them included
  const ands = own(parsed, '_and');
  const filter = Object.assign(bare(), parsed, ...(Array.isArray(ands) ? ands as Record<string, unknown>[] : [])) as Record<string, Record<string, unknown>>;
  const first = (v: unknown) => (Array.isArray(v) ? v[0] : v);
  const at = (field: string) => own(filter, field);
  const uuidAt = (field: string) => first(own(at(field), '_eq') ?? own(at(field), '_in')) as string | undefined;
  const status = own(at('status'), '_eq');
  if (typeof status === 'string') params.v1_statuses = (own(m.status.toV1, status) ?? []).join(',');
  const project = uuidAt('project');
  if (project) params.project_id = (await ids.toV1('project', project)) ?? '';
  const projects = own(at('project'), '_in');
  if (Array.isArray(projects)) params.project_ids = (await Promise.all(projects.map(async (p) => (await ids.toV1('project', String(p))) ?? ''))).join(',');
  const account = uuidAt('account') ?? own(own(at('project') as Record<string, Record<string, unknown>> | undefined, 'account'), '_eq') as string | undefined;
  if (account) params.team_id = (await ids.toV1('account', account)) ?? '';
  const accounts = own(at('account'), '_in') ?? own(own(at('project') as Record<string, Record<string, unknown>> | undefined, 'account'), '_in');
  if (Array.isArray(accounts)) params.team_ids = (await Promise.all(accounts.map(async (a) => (await ids.toV1('account', String(a))) ?? ''))).join(',');
  const id = shape.kind === 'one' ? (own(samples, shape.resource ?? '')?.[0]?.id as string | undefined) : uuidAt('id');
  // a read by id: its parameter, and the list a call walking ids takes (`render_ids`; a template's read has none)
  const v1r = v1Of(shape.resource);
  if (id && v1r) {
    const v1 = (await ids.toV1(shape.resource as RecordResource, id)) ?? '';
    params[v1r.idParam] = v1;
    const list = own(LIST_PARAMS, v1r.idParam);
    if (list) params[list] = v1;
  }
  // renders or projects by several ids (the resources v1 reads by id): each is read, from the list the call loops over
  const idList = shape.kind === 'one' ? undefined : own(at('id'), '_in');
  const list = v1r && traitsOf(shape.resource ?? '').byId ? own(LIST_PARAMS, v1r.idParam) : undefined;
  if (list && Array.isArray(idList) && idList.length > 1) {
    const type = shape.resource as RecordResource;
    params[list] = (await Promise.all(idList.map(async (u) => (await ids.toV1(type, String(u))) ?? ''))).join(',');
  }
  return params;
}

/** Proves one read shape for a user: the legacy answer and the equivalent's, compared. Writes are not run (they create renders). */
export async function prove(
  shape: Shape, e: Equivalent, userId: string, d: ProofDeps, samplesOf = new Map<string, Promise<Samples>>(),
  handed: { readonly snippets: Snippets; readonly fn: string } = { snippets: renderSnippets(e, 'legacyEquivalent'), fn: 'legacyEquivalent' },
): Promise<Proof> {
  const none = (reason: string): Proof => ({ result: 'not run', reason, differences: [], v1Calls: 0 });
  if (shape.invalid) return none('the client sent a query the gateway refuses (400): nothing to prove');
  if (shape.cut) return none('the shape was too large to keep whole (cut to its bound): its question cannot be asked again');
  if (shape.kind === 'create' || shape.kind === 'update' || shape.kind === 'delete') {
    return none('a write: proofs do not create or change data (the snippet test runs it against the simulator)');
  }
  if (shape.kind === 'other' || !shape.resource) return none('answered from what the gateway keeps (users)');
  let calls = 0;
  const session = await d.session(userId, () => { calls++; });
  // one sample per user and report
  if (!samplesOf.has(userId)) samplesOf.set(userId, sampleValues(session, d));
  const samples = await (samplesOf.get(userId) as Promise<Samples>);
  if (!samples.render?.length) return none('the key reaches no render to draw values from');
  const sampleId = own(samples, shape.resource)?.[0]?.id as string | undefined;
  if (shape.kind === 'one' && !sampleId) return none(`the key reaches no ${shape.resource} to draw values from`);
  const resource: string = shape.resource;
  // one question, asked with the values of one draw
  const drawn = async (values: Values): Promise<Proof> => {
    const raw = instantiate(shape, values);
    const planned = planOf(shape, d.mappings, d.limitDefault, values);
    if (!planned) return none('the shape cannot be planned');
    const callParams = await paramsOf(raw, shape, samples, d.ids, d.mappings);
    const qs = queryString(raw);
    const base = shape.route.replace(':id', sampleId ?? '');
    // the request as shown: the values drawn are the proof's, from the client's data, and are not written to the report
    const shownQs = queryString(instantiate(shape, MASKED));
    const request = `${shape.method === 'SEARCH' ? 'GET' : shape.method} ${shape.route}${shownQs ? `?${shownQs}` : ''}`;
    const ask = async () => d.legacy(userId, 'GET', `${base}${qs ? `?${qs}` : ''}`);
    // a question the gateway itself refuses (a budget, a bound): not proven (its equivalent could be unbounded)
    const refused = (l: { status: number; body: unknown }): Proof | undefined => (l.status < 400 ? undefined
      : { ...none(`the gateway refuses this question (${l.status} ${errorCode(l.body)}): its v1 equivalent is not run`), request, v1Calls: calls });
    // a read of every item (limit=-1) asks v1 first, within the proof's bound: the gateway is then asked only a question the bound holds
    let legacy = shape.pagination === 'all' ? undefined : await ask();
    if (legacy && refused(legacy)) return refused(legacy) as Proof;
    const bounds = d.bounds ?? PROOF_BOUNDS;
    calls = 0;
    let results: Results;
    const guard = () => { if (calls > bounds.v1Calls) throw new OverBound(`the equivalent needs more than ${bounds.v1Calls} v1 calls`); };
    try {
      results = await runCalls(e, callParams, session, guard);
    } catch (err) {
      if (err instanceof OverBound) return { ...none(`${err.message} (the proof's bound): not proven`), request, v1Calls: calls };
      return { result: 'differs', request, reason: `the v1 calls failed: ${(err as Error).message}`, differences: [], v1Calls: calls };
    }
    await turn();
    const { records, lookup } = recordsOf(results, resource, d);
    // one item: the one with that id (the client asked v1 for it, or picks it from the list)
    const q = shape.kind === 'one'
      ? Query.with(planned.q, { filter: Compare.create(FieldRef.create(['id']), '_eq', sampleId ?? ''), limit: 1, offset: 0 })
      : planned.q;
    await turn();
    const read = answerOf(records, q, d.mappings.schemas, lookup, bounds.relatedItems);
    // (a total counted over a walk of its own — the calls read part of the collection: that walk's items)
    const walked = e.clientSteps.map((s) => s.args).find((a) => a?.op === 'meta' && a.from);
    const answer = read?.meta && walked?.op === 'meta' && walked.from
      ? { ...read, meta: { ...read.meta, total_count: (results.get(walked.from) ?? []).length } } : read;
    if (!answer) {
      return { ...none(`the answer expands more than ${bounds.relatedItems} related items (the proof's bound): not proven`), request, v1Calls: calls };
    }
    // a read of every item: the gateway asked only now that the evaluator's answer is within the bound
    legacy ??= await ask();
    if (refused(legacy)) return refused(legacy) as Proof;
    // the user (/users/me): what only the gateway keeps (names, role: blocked, listed as such) is left out of both sides
    const hide = shape.kind === 'me' ? keptOnly(d.mappings, resource) : [];
    legacy = { ...legacy, body: withoutFields(legacy.body, hide) };
    await turn();
    const body = withoutFields(shape.kind === 'one' || shape.kind === 'me' ? { data: answer.data[0] ?? null }
      : answer.meta ? { meta: answer.meta, data: answer.data } : { data: answer.data }, hide);
    const diffs: Difference[] = diffAnswers(legacy, { status: 200, body }, { rules: d.mappings.comparison, unordered: false, identity: () => undefined });
    const evaluated: Proof = { result: diffs.length === 0 ? 'equal' : 'differs', request, v1Calls: calls, differences: listed(diffs) };
    if (!d.snippets) return { ...evaluated, reason: 'the snippets were not run (no runner): the calls were read by the gateway\'s evaluator' };
    const key = (await d.keyOf?.(userId)) ?? '';
    const params = await snippetParams(shape, e, raw, callParams, {
      limitDefault: d.limitDefault, now: d.now?.() ?? Date.now(), toV1: (t, u) => d.ids.toV1(t as 'render', u),
      imported: (type) => importedOf(results, type, (t, v1) => d.ids.imported(t, v1)),
    });
    const ran = await runSnippets(d.snippets, handed, key, params, (output) => {
      const got = snippetData(output, shape, q, e, results, (r) => recordsOf(r, shape.resource as string, d), d.mappings, bounds.relatedItems,
        (type, v1Id) => d.ids.toLegacy(type, v1Id));
      if (!got.ok) return { result: 'not run', reason: got.why };
      if (hide.length > 0) Object.assign(got, { data: (withoutFields({ data: got.data }, hide) as { data: unknown }).data });
      const aggregate = shape.aggregate.length > 0 || shape.groupBy.length > 0;
      const found = [
        ...snippetDifferences((legacy?.body as { data?: unknown } | null)?.data, got, q, d.mappings, aggregate, records),
        ...metaDifferences((legacy?.body as { meta?: unknown } | null)?.meta, got.meta, shape.meta),
      ];
      return found.length === 0 ? { result: 'equal' } : { result: 'differs', paths: found };
    });
    return combined(evaluated, ran, handed.snippets);
  };
  // a filtered shape is asked twice, with values drawn apart (a flag both ways, another value, another window): equal
  // only when every draw is; the first draw that is not says so
  const mine = await ownUuidDraw(shape, userId, d.ids);
  const draws = (shape.filter.length > 0 ? PROOF_DRAWS : 1) + (mine ? 1 : 0);
  let first: Proof | undefined;
  for (let i = 0; i < draws; i++) {
    const drawnValues = valuesFrom(resource, samples, d.mappings, i);
    const p = await drawn(mine && i === draws - 1 ? mine(drawnValues) : drawnValues);
    if (!first) first = p;
    if (p.result !== 'equal') return i === 0 ? p : { ...p, reason: `draw ${i + 1} of ${draws}: ${p.reason ?? 'it differs'}` };
  }
  return { ...(first as Proof), ...(draws > 1 ? { draws } : {}) };
}
