import type { Mappings } from '../config/mappings.js';
import { traitsOf } from '../query/resources.js';
import { ALL_OVERLAYS, readEnv, type ReadEnvDeps } from './context.js';
import type { RequestContext } from './request-context.js';
import type { ReadScope, ReadSource, ReplicaService } from '../replica/service.js';
import type { AnswerEnd } from './answer-end.js';
import { execute } from '../exec/execute.js';
import type { Execution } from '../exec/execution.js';
import { executeOne } from '../exec/live.js';
import { LiveSource } from '../exec/live-source.js';
import { ReplicaSource } from '../exec/replica-source.js';
import type { RecordSource, SourceDescription } from '../exec/source.js';
import type { ExecEnv } from '../live/record-map.js';
import { planQuery, type Plan } from '../plan/plan.js';
import { Compare, FieldRef, Query, type QueryNode } from '../query/ast.js';
import { copiesOf, selectsRelations } from '../query/project.js';
import type { QueryResult } from '../query/run.js';
import type { ResourceSchema, SchemaRegistry } from '../query/schema.js';
import type { V1Session } from '../v1/client.js';
import { RefreshWalk } from '../replica/reads/output-refresh.js';
import { expectedItems } from './cost.js';
import { chooseSource } from './source.js';
import { isHeavy, type HeavyReadGate } from './heavy.js';

/** What the item reads use (given by the route file, from the composition root's set). */
export type ItemReadsDeps = ReadEnvDeps & { readonly replica: ReplicaService | null };

/** A list read, answered: the query and its plan, the result, where it came from and until when it may be kept. */
export interface ListRead {
  readonly q: QueryNode;
  readonly plan: Plan;
  readonly result: QueryResult;
  readonly source: ReadSource;
  /** The record source the plan ran on, as explain shows it (the v1 calls it makes, its age). */
  readonly from: SourceDescription;
  readonly how?: Execution;
  /** When the answer's first signed URL must be refreshed (a kept answer is not given past it). */
  readonly refreshAt: number;
  /** The answer expands relations: it must be built whole before a byte is sent (MAX_RELATED_ITEMS refuses cleanly). */
  readonly expands: boolean;
}


/** A read by id, answered (`data` undefined never: a missing item is the executor's 403). */
export interface OneRead {
  readonly data: unknown;
  readonly source: ReadSource;
  readonly refreshAt: number;
}

/**
 * The legacy item reads (GET/SEARCH of /renders, /projects, /accounts, /templates and their /:id): the query is planned,
 * then answered from the replica when every team in scope is backfilled (a stale team synced first), else live from v1.
 */
export class ItemReads {
  private readonly planning: { statusToV1: Mappings['status']['toV1']; schemas: Mappings['schemas'] };

  constructor(
    private readonly deps: ItemReadsDeps, private readonly resource: string, private readonly schema: ResourceSchema, private readonly gate: HeavyReadGate,
  ) {
    this.planning = { statusToV1: deps.mappings.status.toV1, schemas: deps.mappings.schemas };
  }

  /**
   * `exporting`: the answer becomes a file (`?export=`): a heavy read, like `limit=-1`, an answer expected large and
   * whole-scope aggregates. `answer`: the answer's end (it closes: sent, or its client gone) — a heavy read's place is
   * given back then (or at once when the read fails), whatever happened to its stream.
   */
  async list(ctx: RequestContext, q: QueryNode, exporting: boolean, answer: AnswerEnd, known?: ReadSource): Promise<ListRead> {
    const session = await ctx.session();
    const plan = planQuery(q, this.resource, this.planning);
    // a heavy read (by its expected size: src/read/cost.ts) waits for one of its key's places (HEAVY_READS_PER_KEY), held
    // until its answer has been sent or its client has gone — not when its last item was read (a slow reader's answer is
    // still held then)
    const { config, mappings } = this.deps;
    const expected = expectedItems(q, this.schema, mappings.schemas, config.QUERY_LIMIT_DEFAULT, plan.ids);
    const release = isHeavy(q, plan, exporting, expected, config.HEAVY_READ_ITEMS) ? await this.gate.enter(session.partition, answer.gone) : undefined;
    if (release) answer.onEnd(release);
    try {
      const env = await this.env(ctx, session, answer.gone);
      const answered = await this.answer(q, plan, env, session, ctx.now, known, true);
      await this.deps.ids.flush();
      const expands = selectsRelations(q.fields, this.schema, mappings.schemas, q.alias);
      return { q, plan, ...answered, expands };
    } catch (e) {
      release?.();
      throw e;
    }
  }

  /**
   * The read itself, without the heavy-read gate — for a caller that holds its key's place already (a write by query):
   * from the replica when it holds the scope, else live, as a list read is answered. `gone`: its answer's end (a wait for
   * room ends, and the room its evaluations hold is given back then); `afterWrite`: the answer of a write already made.
   */
  async read(ctx: RequestContext, q: QueryNode, gone?: AbortSignal, afterWrite = false): Promise<QueryResult> {
    const session = await ctx.session();
    const env = await this.env(ctx, session, gone, afterWrite);
    const { result } = await this.answer(q, planQuery(q, this.resource, this.planning), env, session, ctx.now, undefined, true);
    await this.deps.ids.flush();
    return result;
  }

  /** By id: from the replica when it holds the item; otherwise live (an item it has not seen yet, or not reachable: 403). */
  /** `kept`: the room the item's render data took, handed to the caller to give back once the answer is counted. */
  async one(
    ctx: RequestContext, id: string, q: QueryNode, known?: ReadSource, gone?: AbortSignal, kept?: (drop: () => void) => void,
  ): Promise<OneRead> {
    const session = await ctx.session();
    const env = await this.env(ctx, session, gone);
    const byId = Query.with(q, {
      filter: Compare.create(FieldRef.create(['id']), '_eq', id),
      search: null, meta: [], limit: 1, offset: 0, sort: [], aggregate: [], groupBy: [],
    });
    const plan = planQuery(byId, this.resource, this.planning);
    const { result, source, refreshAt } = await this.answer(byId, plan, env, session, ctx.now, known, false, kept);
    let data = result.data[0];
    let from = source;
    if (data === undefined) {
      data = await executeOne(this.resource, id, q, (x) => planQuery(x, this.resource, this.planning), env, kept);
      from = { kind: 'live', reason: source.kind === 'replica' ? 'the replica does not hold this item' : source.reason };
    }
    await this.deps.ids.flush();
    return { data, source: from, refreshAt };
  }

  /** `gone`: the client left (a wait for room in the data room ends). */
  private env(ctx: RequestContext, session: V1Session, gone?: AbortSignal, afterWrite = false): Promise<ExecEnv> {
    return readEnv(this.deps, session, ctx.meter, traitsOf(this.resource).overlays ? ALL_OVERLAYS : [], gone, afterWrite);
  }

  /** `lazy`: the caller writes the answer as it is read (a list): a page of large items is given as a stream built as read. */
  private async answer(
    q: QueryNode, plan: Plan, asked: ExecEnv, session: V1Session, now: number, known?: ReadSource, lazy = false,
    kept?: (drop: () => void) => void,
  ): Promise<{ result: QueryResult; source: ReadSource; from: SourceDescription; how?: Execution; refreshAt: number }> {
    const replica = this.deps.replica;
    const env = roomForCopies(asked, q, this.resource, this.deps.mappings.schemas);
    const source = await chooseSource(replica, session, now, readScope(q, plan, this.deps.mappings.schemas), known);
    let refreshAt = Number.POSITIVE_INFINITY;
    let records: RecordSource;
    if (source.kind === 'live' || !replica) {
      records = new LiveSource(env);
    } else {
      const snap = source.snapshot;
      const ids = this.deps.ids;
      // one walk of each project's pages for the whole read: an export's chunks go on from where the last one stopped
      const walk = new RefreshWalk(q.limit === -1);
      records = new ReplicaSource(snap, {
        // an answer kept for later is not given past the moment its first signed URL must be refreshed
        refresh: async (recs, kind) => { refreshAt = Math.min(refreshAt, await replica.refreshOutputs(session, snap, recs, kind, walk)); },
        answered: (uuids) => { for (const [v1, u] of snap.unpaired(uuids)) ids.queue('render', v1, u); },
        flush: () => ids.flush(),
        // render data as the request's environment reads it (weighed, room taken for this answer: renderDataOf)
        data: (v1Ids) => env.renderData.many(v1Ids),
        dataSizes: (v1Ids) => env.renderData.sizes(v1Ids),
        ...(env.renderData.room ? { room: (bytes: number, holding: boolean) => env.renderData.room!(bytes, holding) } : {}),
        now,
        ...(env.gone ? { gone: env.gone } : {}),
      });
    }
    let how: Execution | undefined;
    const result = await execute(this.resource, q, plan, records, {
      schemas: this.deps.mappings.schemas, budget: env.budget, report: (h) => { how = h; }, itemMb: this.deps.config.MAX_ITEM_MB, lazy,
      ...(kept ? { kept } : {}),
    });
    return { result, source, from: records.describe(plan), refreshAt, ...(how ? { how } : {}) };
  }
}

/**
 * What a read can touch, from its plan (`ReadScope`): the ids and the project and account scope its filter narrows to,
 * whether it counts the whole reach, and whether it reads a one-to-many relation (an aliased field counts as one).
 */
export function readScope(q: QueryNode, plan: Plan, schemas: SchemaRegistry): ReadScope {
  const manyRelations = Object.keys(q.alias ?? {}).length > 0 || plan.relations.some((path) => crossesMany(plan.resource, path, schemas))
    || q.fields.some((f) => selectsMany(schemas[plan.resource], f.path, 0, schemas));
  return {
    resource: plan.resource, ids: plan.ids, projects: plan.scope.projects, accounts: plan.scope.accounts, total: q.meta.includes('total_count'), manyRelations,
  };
}

/**
 * Whether a selected path reaches a one-to-many field, wildcards included (`*.*.*` lists an account's projects and each
 * project's renders; `project.*` a project's renders): the relations a plan lists do not expand wildcards.
 */
function selectsMany(cur: ResourceSchema | undefined, path: readonly string[], i: number, schemas: SchemaRegistry): boolean {
  if (!cur) return true;
  if (i >= path.length) return false;
  const step = path[i] as string;
  const names = step === '*' ? Object.keys(cur.fields) : [step];
  for (const name of names) {
    const rel = Object.hasOwn(cur.fields, name) ? cur.fields[name]?.relation : undefined;
    if (!Object.hasOwn(cur.fields, name) && step !== '*') return true;
    if (rel?.kind === 'o2m') return true;
    if (rel && i + 1 < path.length && selectsMany(schemas[rel.resource], path, i + 1, schemas)) return true;
  }
  return false;
}

/** Whether a relation path (`project.renders`) takes a one-to-many step; an unknown step counts as one. */
function crossesMany(resource: string, path: string, schemas: SchemaRegistry): boolean {
  let cur = schemas[resource];
  for (const step of path.split('.')) {
    const rel = cur && Object.hasOwn(cur.fields, step) ? cur.fields[step]?.relation : undefined;
    if (!rel || rel.kind === 'o2m') return true;
    cur = schemas[rel.resource];
  }
  return false;
}

/** The environment whose data room is asked for render data times the copies the selection writes of it (its aliases). */
function roomForCopies(env: ExecEnv, q: QueryNode, resource: string, schemas: SchemaRegistry): ExecEnv {
  const schema = Object.hasOwn(schemas, resource) ? schemas[resource] : undefined;
  const room = env.renderData.room?.bind(env.renderData);
  if (!room || !schema) return env;
  // (most reads name no data, no `*` and no alias: nothing to count on the hot path)
  if (!q.alias && !q.fields.some((f) => f.path.includes('data') || f.path.includes('*'))) return env;
  const copies = copiesOf(q.fields, schema, schemas, q.alias);
  if (copies <= 1) return env;
  const data = env.renderData;
  return { ...env, renderData: { sizes: (ids) => data.sizes(ids), many: (ids) => data.many(ids), room: (bytes, holding) => room(bytes * copies, holding) } };
}
