import type { QueryNode } from '../query/ast.js';
import { aggregateRows } from '../query/aggregate.js';
import type { ExpansionBudget } from '../query/budget.js';
import { compileFilter, compileSearch, compileSort, type Lookup, type Rec } from '../query/compile.js';
import { compileProjection } from '../query/project.js';
import { buildMeta, effectiveSort, type QueryResult } from '../query/run.js';
import type { ResourceSchema, SchemaRegistry } from '../query/schema.js';
import type { Plan } from '../plan/plan.js';
import { sortYielding } from '../plan/sort-yielding.js';
import type { TeamIndex } from './team-index.js';

/**
 * The teams a request may read, as the index holds them: the records of each resource and a synchronous Lookup for
 * relations (nothing outside these teams can be reached, so a miss is an answer, not a fetch).
 */
export class IndexSnapshot implements Lookup {
  constructor(readonly teams: readonly TeamIndex[], private readonly nestedLimit: number) {}

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
    const accounts = plan.scope.accounts ? new Set(plan.scope.accounts.map((u) => u.toLowerCase())) : null;
    const teams = accounts ? this.teams.filter((t) => accounts.has(t.accountRecord().id as string)) : this.teams;
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
    if (teams.length === 1) return (this.of(teams[0] as TeamIndex, resource) as Rec[]).slice();
    return teams.flatMap((t) => this.of(t, resource));
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

  /** Milliseconds since the least recently synced team of the snapshot was synced. */
  ageMs(now: number): number {
    let oldest = now;
    for (const t of this.teams) oldest = Math.min(oldest, t.syncedAt ?? 0);
    return now - oldest;
  }
}

export interface IndexReadEnv {
  readonly schemas: SchemaRegistry;
  readonly budget: ExpansionBudget;
  /** Called with the render records about to be answered (before projection): outputs near expiry are refreshed. */
  readonly beforeAnswer: (renders: readonly Rec[]) => Promise<void>;
  /** Records the answered renders' uuid ↔ v1 pairs (so any instance resolves them). */
  readonly answered: (renderUuids: readonly string[]) => void;
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
  const records = snap.scope(resource, plan);
  const filter = compileFilter(q.filter, schema, env.schemas, snap);
  const search = compileSearch(q.search, schema);
  const matched: Rec[] = [];
  for (const r of records) if (filter(r) && search(r)) matched.push(r);
  const meta = buildMeta(q, snap.count(resource), matched.length);
  if (q.aggregate.length > 0 || q.groupBy.length > 0) {
    if (resource === 'render' && (q.groupBy.some((g) => g.path[0] === 'id') || q.aggregate.some((a) => a.field === 'id'))) {
      env.answered(matched.map((r) => r.id as string));
    }
    const rows = aggregateRows(matched, q.aggregate, q.groupBy, q.sort, q.limit, q.offset, schema, env.schemas, snap, { numericStrings: true });
    return meta ? { meta, data: rows } : { data: rows };
  }
  const cmp = compileSort(effectiveSort(q, schema), schema, env.schemas, snap);
  const wanted = q.limit === -1 ? Number.POSITIVE_INFINITY : q.offset + q.limit;
  const best = wanted * 4 < matched.length ? topK(matched, wanted, cmp) : await sortYielding(matched, cmp);
  let page = best.slice(q.offset, q.limit === -1 ? undefined : q.offset + q.limit);
  if (resource === 'render') {
    await env.beforeAnswer(page);
    // refreshed outputs replaced some records: answer the current ones
    page = page.map((r) => snap.one('render', r.id as string) ?? r);
    env.answered(page.map((r) => r.id as string));
  }
  const project = compileProjection(q.fields, schema, env.schemas, snap, env.budget);
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

/** The `k` smallest items by `cmp`, in order, in O(n log k): a buffer pruned whenever it doubles. */
export function topK<T>(items: readonly T[], k: number, cmp: (a: T, b: T) => number): T[] {
  if (k <= 0) return [];
  let buf: T[] = [];
  for (const x of items) {
    buf.push(x);
    if (buf.length >= 2 * k + 1024) buf = buf.sort(cmp).slice(0, k);
  }
  return buf.sort(cmp).slice(0, k);
}
