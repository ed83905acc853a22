import { errors } from '../errors/catalog.js';
import { Compare, FieldRef, Query, type QueryNode } from '../query/ast.js';
import { compileFilter, compileSearch, compileSort, type Rec } from '../query/compile.js';
import { fieldsToSelect } from '../query/fields-used.js';
import { compileProjection } from '../query/project.js';
import { buildMeta, effectiveSort, selectRecords, type QueryResult } from '../query/run.js';
import type { ResourceSchema } from '../query/schema.js';
import { V1_PAGE_MAX, type V1Project, type V1Render, type V1Team } from '../v1/schemas.js';
import { RecordIndex, type ExecEnv } from './index.js';
import { sortYielding } from './sort-yielding.js';
import { mergeByKey } from './merge.js';
import type { Plan } from './plan.js';

export interface Execution {
  readonly result: QueryResult;
}

/**
 * An item already serialised, as UTF-8 bytes: entries waiting in merge and scan buffers are kept so,
 * off the V8 heap, and streamed answers write them as they are.
 */
export class RawJson {
  constructor(readonly json: Uint8Array) {}
  static of(value: unknown): RawJson {
    return new RawJson(Buffer.from(JSON.stringify(value)));
  }
}

/** A record reduced to some of its fields. */
function pick(rec: Rec, keys: readonly string[]): Rec {
  const o: Record<string, unknown> = {};
  for (const k of keys) o[k] = rec[k];
  return o;
}

/**
 * Render records projected for the answer: their stored `data` read first unless the records were
 * built with it, relations looked up as the projection needs them.
 */
async function shapeRenders(
  index: RecordIndex,
  project: (r: Rec) => unknown,
  recs: readonly Rec[],
  v1Ids: readonly string[],
  withData: boolean,
): Promise<unknown[]> {
  const full = withData ? recs : await index.withData(recs, v1Ids);
  return projectInChunks(index, project, full);
}

/** Records projected at most this many at a time; the event loop gets a turn between chunks. */
const PROJECT_CHUNK = 500;

/** Projects records chunk by chunk (each chunk settled on its own), yielding to the event loop between chunks. */
async function projectInChunks(index: RecordIndex, project: (r: Rec) => unknown, recs: readonly Rec[]): Promise<unknown[]> {
  if (recs.length <= PROJECT_CHUNK) return index.settle(() => recs.map(project));
  const out: unknown[] = [];
  for (let i = 0; i < recs.length; i += PROJECT_CHUNK) {
    const chunk = recs.slice(i, i + PROJECT_CHUNK);
    for (const x of await index.settle(() => chunk.map(project))) out.push(x);
    await new Promise((r) => setImmediate(r));
  }
  return out;
}

/** Reachable teams, narrowed to the plan's account uuids. */
async function teamScope(plan: Plan, env: ExecEnv, reachable?: readonly V1Team[]): Promise<V1Team[]> {
  const teams = [...(reachable ?? (await env.catalog.teams()))];
  if (!plan.scope.accounts) return teams;
  const wanted = new Set((await Promise.all(plan.scope.accounts.map((u) => env.ids.toV1('account', u)))).filter(Boolean));
  return teams.filter((t) => wanted.has(t.id));
}

/** Projects in scope (by plan.scope.projects, else every project of the teams in scope). */
async function projectScope(plan: Plan, env: ExecEnv, teams: readonly V1Team[] | null, index: RecordIndex): Promise<V1Project[]> {
  const teamIds = teams ? new Set(teams.map((t) => t.id)) : null;
  let projects: V1Project[];
  if (plan.scope.projects) {
    // GET /v1/projects/:id is reach-checked by v1 itself (404)
    const v1 = (await Promise.all(plan.scope.projects.map((u) => env.ids.toV1('project', u)))).filter((x): x is string => !!x);
    projects = (await env.catalog.map(v1, (id) => env.catalog.project(id))).filter(
      (p): p is V1Project => !!p && (!teamIds || teamIds.has(p.team.id)),
    );
  } else {
    projects = (await env.catalog.map(teams ?? (await env.catalog.teams()), (t) => env.catalog.projectsOfTeam(t.id))).flat();
  }
  for (const p of projects) index.project(p);
  return projects;
}

/** The shared selection over complete records (records already hold their data), relations fetched as it needs them, then projection. */
async function finish(
  q: QueryNode,
  schema: ResourceSchema,
  env: ExecEnv,
  index: RecordIndex,
  records: readonly Rec[],
  total: number | (() => Promise<number>),
): Promise<QueryResult> {
  const { schemas } = env.mappings;
  const totalCount = q.meta.includes('total_count') ? (typeof total === 'number' ? total : await total()) : records.length;
  const sel = await index.settle(() => selectRecords(records, q, schemas, index, { numericStrings: true }, totalCount));
  const project = compileProjection(q.fields, schema, schemas, index, env.budget, { deep: q.deep, alias: q.alias, nestedLimit: env.nestedLimit });
  const data = sel.rows ?? (await projectInChunks(index, project, sel.page ?? []));
  return sel.meta ? { meta: sel.meta, data } : { data };
}

/** A render record with the v1 id it came from. */
interface Match {
  readonly rec: Rec;
  readonly v1Id: string;
}

/**
 * Reads every page of the scope (bounded fan-out, uncached), translating and filtering each as it
 * arrives; `take` keeps what it needs of the page's matches. Returns how many renders were read.
 * Render ids are derived, not recorded: the caller records (`ids.toLegacy`) those it answers.
 */
async function scanScope(
  q: QueryNode,
  plan: Plan,
  env: ExecEnv,
  index: RecordIndex,
  projects: readonly V1Project[],
  withData: boolean,
  take: (matches: Match[]) => Promise<void> | void,
): Promise<number> {
  const schema = env.mappings.schemas.render as ResourceSchema;
  const filter = compileFilter(q.filter, schema, env.mappings.schemas, index);
  const search = compileSearch(q.search, schema);
  const status = plan.pushdown.status ?? undefined;
  let scanned = 0;
  await env.catalog.map(projects, async (p) => {
    for await (const page of env.catalog.renderPages(p.id, status)) {
      scanned += page.length;
      const recs = await index.scannedRenders(page, withData);
      await take(
        await index.settle(() => recs.map((rec, i) => ({ rec, v1Id: (page[i] as V1Render).id })).filter((m) => filter(m.rec) && search(m.rec))),
      );
      await env.ids.flush();
    }
  });
  return scanned;
}

/**
 * Aggregates and groups over the scope: each page's matches are reduced, as they arrive, to the few
 * fields the selection reads (fieldsToSelect), so memory follows the matches × those fields, not whole records.
 */
async function aggregateRenders(
  q: QueryNode,
  plan: Plan,
  env: ExecEnv,
  index: RecordIndex,
  projects: readonly V1Project[],
  countAll: (() => Promise<number>) | null,
): Promise<QueryResult> {
  const schema = env.mappings.schemas.render as ResourceSchema;
  const keep = [...fieldsToSelect(q, schema)];
  // render uuids reach the answer only when grouped by, or aggregated over, the id
  const answersIds = q.groupBy.some((g) => g.path[0] === 'id') || q.aggregate.some((a) => a.field === 'id');
  const slim: Rec[] = [];
  const scanned = await scanScope(q, plan, env, index, projects, keep.includes('data'), (matches) => {
    for (const m of matches) {
      slim.push(pick(m.rec, keep));
      if (answersIds) env.ids.toLegacy('render', m.v1Id);
    }
  });
  await env.ids.flush();
  // total_count is the scope itself when nothing narrowed it
  return finish(q, schema, env, index, slim, countAll ?? scanned);
}

/** Lists renders by the plan: direct GETs, an early-terminating k-way merge, or a scan of the scope. */
async function listRenders(q: QueryNode, plan: Plan, env: ExecEnv, index: RecordIndex): Promise<QueryResult> {
  const schema = env.mappings.schemas.render as ResourceSchema;
  if (plan.strategy === 'direct') {
    // v1 answers 404 for what the key cannot reach: no team list is needed unless accounts narrow it
    const teamIds = plan.scope.accounts ? new Set((await teamScope(plan, env)).map((t) => t.id)) : null;
    const v1 = (await Promise.all((plan.ids ?? []).map((u) => env.ids.toV1('render', u)))).filter((x): x is string => !!x);
    const renders = (await env.catalog.map(v1, (id) => env.catalog.render(id))).filter(
      (r): r is V1Render => !!r && (!teamIds || teamIds.has(r.project.team)),
    );
    return finish(q, schema, env, index, await index.renders(renders), renders.length);
  }
  const teams = plan.scope.projects && !plan.scope.accounts ? null : await teamScope(plan, env);
  const projects = await projectScope(plan, env, teams, index);
  const status = plan.pushdown.status ?? undefined;
  const narrowed = status !== undefined || plan.scope.projects !== null || plan.scope.accounts !== null;
  /** total_count: every render the key reaches, counted page by page. */
  const countAll = async () => {
    const everyProject = (await env.catalog.map(await env.catalog.teams(), (t) => env.catalog.projectsOfTeam(t.id))).flat();
    let n = 0;
    await env.catalog.map(everyProject, async (p) => {
      for await (const page of env.catalog.renderPages(p.id)) n += page.length;
    });
    return n;
  };
  // a status with no v1 counterpart matches nothing; total_count still counts everything reachable
  if (plan.statuses && plan.statuses.length === 0) return finish(q, schema, env, index, [], countAll);
  if (plan.strategy === 'merge') {
    const stream = mergeRenders(q, plan, env, index, projects);
    if (q.limit === -1) return { data: [], stream };
    const data: unknown[] = [];
    for await (const x of stream) data.push(x);
    return { data };
  }
  if (q.aggregate.length > 0 || q.groupBy.length > 0) return aggregateRenders(q, plan, env, index, projects, narrowed ? countAll : null);
  return scanRenders(q, plan, env, index, projects, narrowed ? countAll : null);
}

/** Past this many wanted records (offset + limit), a scan keeps its candidates as sort keys + JSON bytes. */
const COMPACT_SCAN_AFTER = 2000;

/**
 * The scan for what v1 cannot order or count (a sort on another field, meta counts): every page of the
 * scope is read and filtered as it arrives, and only what the answer can still contain is kept — the
 * best offset + limit records so far (pruned with the query's own comparator whenever the buffer
 * doubles); for `limit=-1` (and deep pages), as sort keys and serialised JSON, not objects.
 */
async function scanRenders(
  q: QueryNode,
  plan: Plan,
  env: ExecEnv,
  index: RecordIndex,
  projects: readonly V1Project[],
  countAll: (() => Promise<number>) | null,
): Promise<QueryResult> {
  const schema = env.mappings.schemas.render as ResourceSchema;
  const { schemas } = env.mappings;
  const cmp = compileSort(effectiveSort(q, schema), schema, schemas, index);
  const project = compileProjection(q.fields, schema, schemas, index, env.budget, { deep: q.deep, alias: q.alias, nestedLimit: env.nestedLimit });
  const everything = q.limit === -1;
  const wanted = everything ? Number.POSITIVE_INFINITY : q.offset + q.limit;
  // deep pages (a large offset) keep candidates compact too: sort keys and JSON bytes, not objects
  const compact = wanted > COMPACT_SCAN_AFTER;
  const keys = [...fieldsToSelect(q, schema)];
  const withData = keys.includes('data');
  type Candidate = { rec: Rec; v1Id: string; json?: RawJson };
  let candidates: Candidate[] = [];
  let matched = 0;
  // large buffers are sorted a slice at a time: no single answer holds the event loop
  // a sort through a relation (project.account.name) reads related records: fetch what the keys need before sorting
  const relationalSort = effectiveSort(q, schema).some((srt) => srt.field.path.length > 1 || srt.field.fn === 'count');
  const prune = async () => {
    if (relationalSort) await index.settle(() => { for (const c of candidates) cmp(c.rec, c.rec); });
    candidates = await sortYielding(candidates, (a, b) => cmp(a.rec, b.rec));
    if (candidates.length > wanted) candidates = candidates.slice(0, wanted);
  };
  const scanned = await scanScope(q, plan, env, index, projects, withData, async (matches) => {
    matched += matches.length;
    if (everything) for (const m of matches) env.ids.toLegacy('render', m.v1Id); // every match is answered
    if (compact) {
      const shaped = await shapeRenders(
        index,
        project,
        matches.map((m) => m.rec),
        matches.map((m) => m.v1Id),
        withData,
      );
      matches.forEach((m, i) => candidates.push({ rec: pick(m.rec, keys), v1Id: everything ? '' : m.v1Id, json: RawJson.of(shaped[i]) }));
    } else {
      for (const m of matches) candidates.push(m);
    }
    if (candidates.length >= 2 * wanted + V1_PAGE_MAX) await prune();
  });
  await prune();
  const chosen = candidates.slice(q.offset, everything ? undefined : q.offset + q.limit);
  candidates = []; // (the closures below share this scope: only `chosen` may keep the entries alive)
  // the answered renders, and only they, are recorded so any instance can resolve their uuids
  // (with limit=-1, already while scanning: every match is answered)
  const record = async (from: number, to: number) => {
    if (everything) return;
    for (let i = from; i < to; i++) env.ids.toLegacy('render', (chosen[i] as Candidate).v1Id);
    await env.ids.flush();
  };
  const total = q.meta.includes('total_count') && countAll ? await countAll() : scanned;
  const meta = buildMeta(q, total, matched);
  if (compact) {
    // written as it is (the entries are already JSON); each is let go once written
    const stream = (async function* () {
      for (let i = 0; i < chosen.length; i++) {
        if (i % 500 === 0) await record(i, Math.min(i + 500, chosen.length)); // recorded before written
        yield chosen[i]!.json as RawJson;
        chosen[i] = undefined as never;
      }
    })();
    return meta ? { meta, data: [], stream } : { data: [], stream };
  }
  await record(0, chosen.length);
  const data = await shapeRenders(
    index,
    project,
    chosen.map((c) => c.rec),
    chosen.map((c) => c.v1Id),
    withData,
  );
  return meta ? { meta, data } : { data };
}

/**
 * k-way merge over per-project streams, each already in v1 order: items are settled a whole timestamp
 * at a time (so ties across projects order by the legacy id), filtered in memory, and fetching stops
 * once offset + limit results are settled. Emitted records are not retained, so `limit=-1` streams
 * through bounded memory.
 */
async function* mergeRenders(q: QueryNode, plan: Plan, env: ExecEnv, index: RecordIndex, projects: readonly V1Project[]): AsyncGenerator<unknown> {
  const schema = env.mappings.schemas.render as ResourceSchema;
  const { schemas } = env.mappings;
  const order = plan.pushdown.order ?? 'desc';
  const desc = order === 'desc';
  const all = plan.stopAfter === null;
  // the plan's page size: the first page of each stream asks for no more than could be needed
  const first = plan.pages?.first ?? V1_PAGE_MAX;
  const filter = compileFilter(q.filter, schema, schemas, index);
  const search = compileSearch(q.search, schema);
  const cmp = compileSort(effectiveSort(q, schema), schema, schemas, index);
  const project = compileProjection(q.fields, schema, schemas, index, env.budget, { deep: q.deep, alias: q.alias, nestedLimit: env.nestedLimit });
  const withData = all || fieldsToSelect(q, schema).has('data');
  /**
   * Each page becomes entries as it arrives: translated, filtered, and — when everything is read — already
   * projected and serialised, so the merge buffers hold one string per render, not its object graph.
   */
  type Entry = { created_at: number; rec: Rec; v1Id: string; json?: RawJson };
  const toEntries = async (items: readonly V1Render[]): Promise<Entry[]> => {
    const data = withData ? await env.renderData.many(items.map((r) => r.id)) : new Map<string, unknown>();
    const recs = items.map((r) => ({ created_at: r.created_at, rec: index.renderRecord(r, data.get(r.id) ?? {}), v1Id: r.id }));
    const kept = await index.settle(() => recs.filter((x) => filter(x.rec) && search(x.rec)));
    if (!all) return kept;
    const shaped = await shapeRenders(
      index,
      project,
      kept.map((x) => x.rec),
      [],
      true,
    );
    // only what ordering needs stays on the heap; the answer itself waits as bytes
    return kept.map((x, i) => ({ created_at: x.created_at, rec: pick(x.rec, ['id', 'date_created']), v1Id: '', json: RawJson.of(shaped[i]) }));
  };
  // read ahead only when everything will be read (limit=-1); otherwise fetch no page that might not be needed
  const streams = projects.map((p) =>
    env.catalog.stream<Entry>(p.id, { order, ...(plan.pushdown.status ? { status: plan.pushdown.status } : {}) }, first, all, toEntries),
  );
  const limit = q.limit === -1 ? Number.MAX_SAFE_INTEGER : q.limit;
  let skipped = 0;
  let emitted = 0;
  let batch: Entry[] = [];
  const flush = async function* () {
    const out = batch;
    batch = [];
    if (all) {
      await env.ids.flush();
      for (const e of out) yield e.json as RawJson;
      return;
    }
    const shaped = await shapeRenders(
      index,
      project,
      out.map((b) => b.rec),
      out.map((b) => b.v1Id),
      withData,
    );
    await env.ids.flush();
    yield* shaped;
  };
  for await (const group of mergeByKey(streams, (e) => e.created_at, desc)) {
    // a whole timestamp is settled at once, so ties across projects order by the legacy id
    if (group.length > 1) group.sort((a, b) => cmp(a.rec, b.rec));
    for (const k of group) {
      if (skipped < q.offset) {
        skipped++;
        continue;
      }
      if (emitted + batch.length >= limit) break;
      batch.push(k);
    }
    if (batch.length >= 500) {
      const n = batch.length;
      yield* flush();
      emitted += n;
    }
    if (emitted + batch.length >= limit) break;
  }
  if (batch.length > 0) yield* flush();
}

async function listProjects(q: QueryNode, plan: Plan, env: ExecEnv, index: RecordIndex): Promise<QueryResult> {
  const schema = env.mappings.schemas.project as ResourceSchema;
  const teams = await teamScope(plan, env);
  if (plan.strategy === 'direct') {
    const teamIds = new Set(teams.map((t) => t.id));
    const v1 = (await Promise.all((plan.ids ?? []).map((u) => env.ids.toV1('project', u)))).filter((x): x is string => !!x);
    const projects = (await env.catalog.map(v1, (id) => env.catalog.project(id))).filter((p): p is V1Project => !!p && teamIds.has(p.team.id));
    return finish(
      q,
      schema,
      env,
      index,
      projects.map((p) => index.project(p)),
      projects.length,
    );
  }
  const projects = (await env.catalog.map(teams, (t) => env.catalog.projectsOfTeam(t.id))).flat();
  const total = async () => (await env.catalog.map(await env.catalog.teams(), (t) => env.catalog.projectsOfTeam(t.id))).flat().length;
  return finish(
    q,
    schema,
    env,
    index,
    projects.map((p) => index.project(p)),
    plan.scope.accounts ? total : projects.length,
  );
}

async function listAccounts(q: QueryNode, plan: Plan, env: ExecEnv, index: RecordIndex): Promise<QueryResult> {
  const schema = env.mappings.schemas.account as ResourceSchema;
  const all = await env.catalog.teams();
  const teams = await teamScope(plan, env, all);
  return finish(q, schema, env, index, await index.accounts(teams), all.length);
}

async function listTemplates(q: QueryNode, plan: Plan, env: ExecEnv, index: RecordIndex): Promise<QueryResult> {
  const schema = env.mappings.schemas.template as ResourceSchema;
  const teams = await teamScope(plan, env);
  const projects = await projectScope({ ...plan, scope: { ...plan.scope, projects: null } }, env, teams, index);
  const lists = await env.catalog.map(projects, async (p) => (await env.catalog.templatesOf(p.id)).map((t) => index.template(t, p)));
  const recs = lists.flat();
  return finish(q, schema, env, index, recs, recs.length);
}

const LISTERS: Record<string, (q: QueryNode, plan: Plan, env: ExecEnv, index: RecordIndex) => Promise<QueryResult>> = {
  render: listRenders,
  project: listProjects,
  account: listAccounts,
  template: listTemplates,
};

export async function executeList(resource: string, q: QueryNode, plan: Plan, env: ExecEnv): Promise<Execution> {
  const index = new RecordIndex(env);
  const lister = LISTERS[resource];
  if (!lister) throw new TypeError(`no lister for ${resource}`);
  const result = await lister(q, plan, env, index);
  return { result };
}

/** One item by legacy uuid: 403 FORBIDDEN when unknown, unreachable or malformed (Directus). */
export async function executeOne(resource: string, uuid: string, q: QueryNode, plan: (q: QueryNode) => Plan, env: ExecEnv): Promise<unknown> {
  const byId = Query.with(q, {
    filter: Compare.create(FieldRef.create(['id']), '_eq', uuid.toLowerCase()),
    search: null,
    meta: [],
    limit: 1,
    offset: 0,
    sort: [],
    aggregate: [],
    groupBy: [],
  });
  const { result } = await executeList(resource, byId, plan(byId), env);
  const data = result.data[0];
  if (!data) throw errors.forbidden();
  return data;
}
