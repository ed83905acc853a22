import type { QueryNode } from '../query/ast.js';
import { aggregateRows } from '../query/aggregate.js';
import type { ExpansionBudget } from '../query/budget.js';
import { compileFilter, compileSearch, compileSort, type Lookup, type Rec } from '../query/compile.js';
import { compileProjection } from '../query/project.js';
import { buildMeta, effectiveSort, type QueryResult } from '../query/run.js';
import type { ResourceSchema, SchemaRegistry } from '../query/schema.js';
import type { Plan } from '../plan/plan.js';
import { sortYielding } from '../plan/sort-yielding.js';
import type { TeamReplica as TeamIndex } from '../replica/team-replica.js';

/**
 * The teams a request may read, as the index holds them: the records of each resource and a synchronous Lookup for
 * relations (nothing outside these teams can be reached, so a miss is an answer, not a fetch).
 */
export class IndexSnapshot implements Lookup {
  constructor(readonly teams: readonly TeamIndex[], readonly nestedLimit: number) {}

  /** Every record of a resource the request may read (total_count counts these). */
  count(resource: string): number {
    let n = 0;
    for (const t of this.teams) n += resource === 'render' ? t.size : this.of(t, resource).length;
    return n;
  }

  private of(t: TeamIndex, resource: string): readonly Rec[] {
    switch (resource) {
      case 'render': return t.renderRecords();
      case 'project': return t.projectRecords();
      case 'template': return t.templateRecords();
      case 'account': return [t.accountRecord()];
      default: return [];
    }
  }

  /** The records the plan's scope leaves (accounts, projects, ids), in no particular order. */
  scope(resource: string, plan: Plan): Rec[] {
    const teams = this.inScope(plan);
    if (resource === 'render' && plan.ids) {
      const out: Rec[] = [];
      for (const u of new Set(plan.ids.map((x) => x.toLowerCase()))) {
        for (const t of teams) {
          const v1 = t.renderV1(u);
          if (v1) out.push(t.renderRecord(v1) as Rec);
        }
      }
      return out;
    }
    if (resource === 'render' && plan.scope.projects) {
      const out: Rec[] = [];
      for (const u of new Set(plan.scope.projects.map((x) => x.toLowerCase()))) {
        for (const t of teams) {
          const v1 = t.projectV1(u);
          if (v1) for (const r of t.rendersOfProject(v1)) out.push(r);
        }
      }
      return out;
    }
    const out: Rec[] = [];
    for (const t of teams) for (const r of this.of(t, resource)) out.push(r);
    return out;
  }

  /** The records of the plan's scope as one run per team (read, not copied: a scan filters them as it goes). */
  runs(resource: string, plan: Plan): readonly (readonly Rec[])[] {
    if (plan.ids || (resource === 'render' && plan.scope.projects)) return [this.scope(resource, plan)];
    return this.inScope(plan).map((t) => this.of(t, resource));
  }

  /** The teams the plan's account scope leaves. */
  inScope(plan: Plan): readonly TeamIndex[] {
    if (!plan.scope.accounts) return this.teams;
    const accounts = new Set(plan.scope.accounts.map((u) => u.toLowerCase()));
    return this.teams.filter((t) => accounts.has(t.accountRecord().id as string));
  }

  /** The v1 ids of project uuids within reach. */
  projectIds(uuids: readonly string[]): Set<string> {
    const out = new Set<string>();
    for (const u of uuids) {
      for (const t of this.teams) {
        const v1 = t.projectV1(u.toLowerCase());
        if (v1) out.add(v1);
      }
    }
    return out;
  }

  /** The answered renders whose pairs the id store has not been given yet: [v1 id, uuid] (each given once). */
  unpaired(uuids: readonly string[]): [string, string][] {
    const out: [string, string][] = [];
    for (const u of uuids) {
      for (const t of this.teams) {
        const v1 = t.unpaired(u);
        if (v1) {
          out.push([v1, u]);
          break;
        }
      }
    }
    return out;
  }

  /** The v1 id of a render uuid within reach. */
  renderV1(uuid: string): string | undefined {
    for (const t of this.teams) {
      const v1 = t.renderV1(uuid);
      if (v1) return v1;
    }
    return undefined;
  }

  teamOfRender(uuid: string): TeamIndex | undefined {
    return this.teams.find((t) => t.renderV1(uuid) !== undefined);
  }

  one(resource: string, id: string): Rec | undefined {
    for (const t of this.teams) {
      if (resource === 'render') {
        const v1 = t.renderV1(id);
        if (v1) return t.renderRecord(v1);
      } else if (resource === 'project') {
        const v1 = t.projectV1(id);
        if (v1) return t.projectRecord(v1);
      } else if (resource === 'account') {
        const a = t.accountRecord();
        if (a.id === id) return a;
      } else if (resource === 'template') {
        const x = t.template(id);
        if (x) return x.rec;
      }
    }
    return undefined;
  }

  many(_resource: string, parent: Rec, field: string, parentResource: string): readonly Rec[] {
    const id = parent.id as string;
    for (const t of this.teams) {
      if (parentResource === 'project' && field === 'renders') {
        const v1 = t.projectV1(id);
        if (v1) return t.rendersByKey(v1, this.nestedLimit);
      } else if (parentResource === 'account' && t.accountRecord().id === id) {
        if (field === 'renders') return t.rendersByKey(null, this.nestedLimit);
        if (field === 'projects') return t.projectsByKey(this.nestedLimit);
      }
    }
    return [];
  }

  manyAll(_resource: string, parent: Rec, field: string, parentResource: string): readonly Rec[] {
    const id = parent.id as string;
    for (const t of this.teams) {
      if (parentResource === 'project' && field === 'renders') {
        const v1 = t.projectV1(id);
        if (v1) return t.rendersOfProject(v1);
      } else if (parentResource === 'account' && t.accountRecord().id === id) {
        if (field === 'renders') return t.renderRecords();
        if (field === 'projects') return t.projectRecords();
      }
    }
    return [];
  }

  /** Milliseconds since the least recently synced team of the snapshot was synced. */
  ageMs(now: number): number {
    let oldest = now;
    for (const t of this.teams) oldest = Math.min(oldest, t.syncedAt ?? 0);
    return now - oldest;
  }
}

/** Whether a query's order is the kept newest-first order (`-date_created`, ties by id ascending). */
function newestFirstOrder(q: QueryNode, schema: ResourceSchema): boolean {
  const keys = q.sort.length > 0
    ? q.sort.map((s) => (s.field.fn ? '?' : `${s.direction === 'desc' ? '-' : ''}${s.field.path.join('.')}`))
    : [...schema.defaultSort];
  return keys[0] === '-date_created' && (keys.length === 1 || (keys.length === 2 && keys[1] === 'id'));
}

export interface IndexReadEnv {
  readonly schemas: SchemaRegistry;
  readonly budget: ExpansionBudget;
  /** Called with the records about to be answered (before projection): signed URLs near expiry are refreshed. */
  readonly beforeAnswer: (recs: readonly Rec[], resource: string) => Promise<void>;
  /** Records the answered renders' uuid ↔ v1 pairs (so any instance resolves them). */
  readonly answered: (renderUuids: readonly string[]) => void;
  /** Writes the recorded pairs (before a streamed chunk is sent). */
  readonly flush: () => Promise<void>;
  /** Told how the answer was computed (explain shows it): the index strategy and how many records it tested. */
  readonly report?: (how: IndexStrategy) => void;
}

/** How an answer was computed from the index. */
export interface IndexStrategy {
  readonly strategy: 'newest-first walk' | 'aggregate over the scope' | 'top-k over the scope' | 'sort of the scope';
  /** Records tested against the filter (a streamed walk counts those tested before its first chunk). */
  readonly tested: number;
  readonly matched: number;
}

/** Past this many items an answer is written as a stream, projected a chunk at a time. */
const STREAM_AFTER = 2000;
const CHUNK = 500;

/**
 * Answers a legacy query from the index: the scope's records, filtered, counted, aggregated or sorted (the best
 * offset + limit kept, not a full sort), then projected — the same compiled evaluator as the live path, over
 * records already translated. No v1 call (unless answered outputs need fresh signatures).
 */
export async function readFromIndex(resource: string, q: QueryNode, plan: Plan, snap: IndexSnapshot, env: IndexReadEnv): Promise<QueryResult> {
  const schema = env.schemas[resource] as ResourceSchema;
  const filter = compileFilter(q.filter, schema, env.schemas, snap);
  const search = compileSearch(q.search, schema);
  const whole = q.aggregate.length > 0 || q.groupBy.length > 0 || q.meta.includes('filter_count');
  if (resource === 'render' && !whole && !plan.ids && newestFirstOrder(q, schema)) return newestFirst(q, plan, snap, env, (r) => filter(r) && search(r));
  const matched: Rec[] = [];
  let tested = 0;
  for (const run of snap.runs(resource, plan)) {
    tested += run.length;
    for (const r of run) if (filter(r) && search(r)) matched.push(r);
  }
  const meta = buildMeta(q, snap.count(resource), matched.length);
  if (q.aggregate.length > 0 || q.groupBy.length > 0) {
    env.report?.({ strategy: 'aggregate over the scope', tested, matched: matched.length });
    if (resource === 'render' && (q.groupBy.some((g) => g.path[0] === 'id') || q.aggregate.some((a) => a.field === 'id'))) {
      env.answered(matched.map((r) => r.id as string));
    }
    const rows = aggregateRows(matched, q.aggregate, q.groupBy, q.sort, q.limit, q.offset, schema, env.schemas, snap, { numericStrings: true });
    return meta ? { meta, data: rows } : { data: rows };
  }
  const cmp = compileSort(effectiveSort(q, schema), schema, env.schemas, snap);
  const wanted = q.limit === -1 ? Number.POSITIVE_INFINITY : q.offset + q.limit;
  const useTopK = wanted * 4 < matched.length;
  env.report?.({ strategy: useTopK ? 'top-k over the scope' : 'sort of the scope', tested, matched: matched.length });
  const best = useTopK ? topK(matched, wanted, cmp) : await sortYielding(matched, cmp);
  let page = best.slice(q.offset, q.limit === -1 ? undefined : q.offset + q.limit);
  if (resource === 'render' || resource === 'project' || resource === 'template') {
    await env.beforeAnswer(page, resource);
    // refreshed URLs replaced some records: answer the current ones
    page = page.map((r) => snap.one(resource, r.id as string) ?? r);
    if (resource === 'render') env.answered(page.map((r) => r.id as string));
  }
  const project = compileProjection(q.fields, schema, env.schemas, snap, env.budget, { deep: q.deep, alias: q.alias, nestedLimit: snap.nestedLimit });
  if (page.length <= STREAM_AFTER) {
    const data = page.map(project);
    return meta ? { meta, data } : { data };
  }
  const chosen = page;
  page = [];
  const stream = (async function* () {
    for (let i = 0; i < chosen.length; i += CHUNK) {
      const chunk = chosen.slice(i, i + CHUNK).map(project);
      yield* chunk;
      await new Promise((r) => setImmediate(r));
    }
  })();
  return meta ? { meta, data: [], stream } : { data: [], stream };
}

/**
 * A render list in the kept newest-first order: each team's renders are walked in that order and tested until offset +
 * limit matches are found, the teams' runs merged — O(answer), not O(renders), for the default order; `limit=-1`
 * streams the merge a chunk at a time.
 */
async function newestFirst(q: QueryNode, plan: Plan, snap: IndexSnapshot, env: IndexReadEnv, keep: (r: Rec) => boolean): Promise<QueryResult> {
  const schema = env.schemas.render as ResourceSchema;
  const meta = buildMeta(q, snap.count('render'), 0);
  const projects = plan.scope.projects ? snap.projectIds(plan.scope.projects) : null;
  const all = q.limit === -1;
  let tested = 0;
  let matched = 0;
  // a stream outlives this turn of the event loop: it walks a copy of each order, by v1 id (renders may arrive meanwhile)
  const runs = snap.inScope(plan).map((t) => {
    const rows = t.newestFirst();
    const ids = all ? rows.map((row) => t.idOfRow(row)) : null;
    let i = 0;
    return {
      next(): Rec | undefined {
        if (ids) {
          while (i < ids.length) {
            const id = ids[i++] as string;
            const project = t.projectOf(id);
            if (project === undefined || (projects && !projects.has(project))) continue;
            const rec = t.renderRecord(id);
            tested++;
            if (rec && keep(rec)) return rec;
          }
          return undefined;
        }
        while (i < rows.length) {
          const row = rows[i++] as number;
          if (projects && !projects.has(t.projectOfRow(row))) continue;
          const rec = t.view(row);
          tested++;
          if (keep(rec)) return rec;
        }
        return undefined;
      },
    };
  });
  const heads = runs.map((r) => r.next());
  const cmp = compileSort(effectiveSort(q, schema), schema, env.schemas, snap);
  const take = (): Rec | undefined => {
    let best = -1;
    for (let i = 0; i < heads.length; i++) if (heads[i] && (best < 0 || cmp(heads[i] as Rec, heads[best] as Rec) < 0)) best = i;
    if (best < 0) return undefined;
    const r = heads[best];
    heads[best] = (runs[best] as { next(): Rec | undefined }).next();
    matched++;
    return r;
  };
  const project = compileProjection(q.fields, schema, env.schemas, snap, env.budget, { deep: q.deep, alias: q.alias, nestedLimit: snap.nestedLimit });
  const answer = async (recs: readonly Rec[]): Promise<unknown[]> => {
    await env.beforeAnswer(recs, 'render');
    const current = recs.map((r) => snap.one('render', r.id as string) ?? r);
    env.answered(current.map((r) => r.id as string));
    return current.map(project);
  };
  if (!all) {
    for (let skipped = 0; skipped < q.offset && take(); skipped++);
    const page: Rec[] = [];
    for (let r = page.length < q.limit ? take() : undefined; r; r = page.length < q.limit ? take() : undefined) page.push(r);
    env.report?.({ strategy: 'newest-first walk', tested, matched });
    const data = await answer(page);
    return meta ? { meta, data } : { data };
  }
  for (let skipped = 0; skipped < q.offset && take(); skipped++);
  env.report?.({ strategy: 'newest-first walk', tested, matched });
  const stream = (async function* () {
    for (;;) {
      const chunk: Rec[] = [];
      for (let r = take(); r; r = chunk.length < CHUNK ? take() : undefined) {
        chunk.push(r);
        if (chunk.length >= CHUNK) break;
      }
      if (chunk.length === 0) return;
      const data = await answer(chunk);
      await env.flush();
      yield* data;
      await new Promise((r) => setImmediate(r));
    }
  })();
  return meta ? { meta, data: [], stream } : { data: [], stream };
}

/** The `k` smallest items by `cmp`, in order, in O(n log k): a buffer pruned whenever it doubles. */
export function topK<T>(items: readonly T[], k: number, cmp: (a: T, b: T) => number): T[] {
  if (k <= 0) return [];
  let buf: T[] = [];
  // once pruned, the k-th best so far bounds what can still enter: most items cost one comparison
  let bound: T | undefined;
  for (const x of items) {
    if (bound !== undefined && cmp(x, bound) >= 0) continue;
    buf.push(x);
    if (buf.length >= 2 * k + 1024) {
      buf = buf.sort(cmp).slice(0, k);
      bound = buf[k - 1];
    }
  }
  return buf.sort(cmp).slice(0, k);
}
