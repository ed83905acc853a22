import type { Rec } from '../query/compile.js';
import { RecordMap, type ExecEnv } from '../live/record-map.js';
import type { MergeSource } from '../plan/merge.js';
import type { Plan } from '../plan/plan.js';
import { STAND_IN_HAND, withDataAtHand } from '../translate/data-at-hand.js';
import { V1_PAGE_MAX, type V1Project, type V1Render, type V1Team } from '../v1/schemas.js';
import { ROUND_MS, TESTS_A_ROUND, TestTurn } from '../query/test-turn.js';
import { isRecordResource, traitsOf, type RecordResource } from '../query/resources.js';
import type { PlannedCall, RecordSource, SourceDescription, Walked } from './source.js';
import { testInRounds } from './test-rounds.js';

/** How live v1 reads one resource (see LiveSource.readers). */
interface LiveReader {
  readonly byIds: ((plan: Plan) => Promise<Rec[]>) | null;
  readonly scan: (plan: Plan, take: (batch: readonly Rec[]) => Promise<void> | void) => Promise<number>;
  readonly total: (plan: Plan, scanned: number, narrowed: boolean) => Promise<number>;
}

/**
 * Live v1 as a record source: it fetches what the plan asks for — renders or projects by id, a team's projects, a
 * project's render pages (a status pushed down, pages sized by the plan) — and builds legacy records from them.
 * Relations are looked up through a RecordMap, which fetches what an evaluation missed (`settle`).
 */
export class LiveSource implements RecordSource {
  readonly kind = 'live';
  readonly compactAfter = 2000;
  readonly nestedLimit: number;
  private readonly records: RecordMap;
  /** The v1 id each render record was built from. */
  private readonly v1Ids = new WeakMap<Rec, string>();
  /** The tests relational walks may make a round (`settleTests` runs rounds until none stops short). */
  readonly turn = new TestTurn(TESTS_A_ROUND, { ms: ROUND_MS, now: () => performance.now() });

  /** What the record map answers moves with each round of fetched misses (`Lookup.version`). */
  get version(): number {
    return this.records.version;
  }

  constructor(private readonly env: ExecEnv) {
    this.records = new RecordMap(env);
    this.nestedLimit = env.nestedLimit;
  }

  one(resource: string, id: string): Rec | undefined {
    return this.records.one(resource, id);
  }

  many(resource: string, parent: Rec, field: string, parentResource: string): readonly Rec[] {
    return this.records.many(resource, parent, field, parentResource);
  }

  manyAll(resource: string, parent: Rec, field: string, parentResource: string): readonly Rec[] {
    return this.records.manyAll(resource, parent, field, parentResource);
  }

  /** Relations fetched and render data read (weighed first: past `most` bytes, HandFull) until the evaluation misses none. */
  settle<T>(evaluate: () => T, most?: number, kept?: (drop: () => void) => void): Promise<T> {
    return this.records.settle(evaluate, most, kept);
  }

  /** Tests and comparisons read render data as the stand-in (see `ReplicaSource.settleTests`: a json field, never null). */
  settleTests<T>(evaluate: () => T): Promise<T> {
    return testInRounds(this.turn, () => withDataAtHand(STAND_IN_HAND, evaluate), (round) => this.records.settle(round), this.env.gone);
  }

  ref(rec: Rec): string {
    return this.v1Ids.get(rec) ?? (rec.id as string);
  }

  /** Render records of v1 renders, each named by its v1 id (not kept in the record map, pairs not queued; data read from the hand). */
  private built(list: readonly V1Render[]): Rec[] {
    return list.map((r) => {
      const rec = this.records.renderRecord(r, false);
      this.v1Ids.set(rec, r.id);
      return rec;
    });
  }

  /** Reachable teams, narrowed to the plan's account uuids. */
  private async teams(plan: Plan, reachable?: readonly V1Team[]): Promise<V1Team[]> {
    const { catalog, ids } = this.env;
    const teams = [...(reachable ?? (await catalog.teams()))];
    if (!plan.scope.accounts) return teams;
    const wanted = new Set((await Promise.all(plan.scope.accounts.map((u) => ids.toV1('account', u)))).filter(Boolean));
    return teams.filter((t) => wanted.has(t.id));
  }

  /** Projects in scope (by plan.scope.projects, else every project of the teams in scope). */
  private async projects(plan: Plan): Promise<V1Project[]> {
    const { catalog, ids } = this.env;
    const teams = plan.scope.projects && !plan.scope.accounts ? null : await this.teams(plan);
    const teamIds = teams ? new Set(teams.map((t) => t.id)) : null;
    let projects: V1Project[];
    if (plan.scope.projects) {
      // GET /v1/projects/:id is reach-checked by v1 itself (404)
      const v1 = (await Promise.all(plan.scope.projects.map((u) => ids.toV1('project', u)))).filter((x): x is string => !!x);
      projects = (await catalog.map(v1, (id) => catalog.project(id))).filter((p): p is V1Project => !!p && (!teamIds || teamIds.has(p.team.id)));
    } else {
      projects = (await catalog.map(teams ?? (await catalog.teams()), (t) => catalog.projectsOfTeam(t.id))).flat();
    }
    for (const p of projects) this.records.project(p);
    return projects;
  }

  async byIds(resource: string, plan: Plan): Promise<Rec[]> {
    const read = this.readers[resource as RecordResource]?.byIds;
    if (!read) throw new TypeError(`v1 reads no ${resource} by id`);
    return read(plan);
  }

  /**
   * Each resource read live: by ids where v1 reads it so (renders, projects: 404 for what the key cannot reach), every
   * record in the plan's scope (`scan`, given to `take`), and how many the key reaches (`total`, when a filter narrowed
   * the scan). Exhaustive: a new resource is a compile error here.
   */
  private readonly readers: { readonly [R in RecordResource]: LiveReader } = {
    render: {
      byIds: async (plan) => {
        const { catalog, ids } = this.env;
        // (no team list is needed unless accounts narrow it)
        const teamIds = plan.scope.accounts ? new Set((await this.teams(plan)).map((t) => t.id)) : null;
        const v1 = (await Promise.all((plan.ids ?? []).map((u) => ids.toV1('render', u)))).filter((x): x is string => !!x);
        const renders = (await catalog.map(v1, (id) => catalog.render(id))).filter((r): r is V1Render => !!r && (!teamIds || teamIds.has(r.project.team)));
        const recs = this.records.renders(renders);
        recs.forEach((r, i) => this.v1Ids.set(r, (renders[i] as V1Render).id));
        return recs;
      },
      scan: async (plan, take) => {
        const { catalog, ids } = this.env;
        const projects = await this.projects(plan);
        const status = plan.pushdown.status ?? undefined;
        let scanned = 0;
        await catalog.map(projects, async (p) => {
          for await (const page of catalog.renderPages(p.id, status)) {
            scanned += page.length;
            await take(this.built(page));
            await ids.flush();
          }
        });
        return scanned;
      },
      total: async (plan, scanned, narrowed) => {
        const { catalog } = this.env;
        if (!narrowed && plan.pushdown.status === null && !(plan.statuses && plan.statuses.length === 0)) return scanned;
        let n = 0;
        await catalog.map(await this.everyProject(), async (p) => {
          for await (const page of catalog.renderPages(p.id)) n += page.length;
        });
        return n;
      },
    },
    project: {
      byIds: async (plan) => {
        const { catalog, ids } = this.env;
        const teamIds = new Set((await this.teams(plan)).map((t) => t.id));
        const v1 = (await Promise.all((plan.ids ?? []).map((u) => ids.toV1('project', u)))).filter((x): x is string => !!x);
        const projects = (await catalog.map(v1, (id) => catalog.project(id))).filter((p): p is V1Project => !!p && teamIds.has(p.team.id));
        return projects.map((p) => this.records.project(p));
      },
      scan: async (plan, take) => {
        const { catalog } = this.env;
        return this.took(take, (await catalog.map(await this.teams(plan), (t) => catalog.projectsOfTeam(t.id))).flat().map((p) => this.records.project(p)));
      },
      total: async (_plan, scanned, narrowed) => (narrowed ? (await this.everyProject()).length : scanned),
    },
    account: {
      byIds: null,
      scan: async (plan, take) => this.took(take, await this.records.accounts(await this.teams(plan))),
      total: async () => (await this.env.catalog.teams()).length,
    },
    template: {
      byIds: null,
      scan: async (plan, take) => {
        const { catalog } = this.env;
        const projects = await this.projects({ ...plan, scope: { ...plan.scope, projects: null } });
        return this.took(take, (await catalog.map(projects, async (p) => (await catalog.templatesOf(p.id)).map((t) => this.records.template(t, p)))).flat());
      },
      total: async (_plan, scanned, narrowed) => {
        if (!narrowed) return scanned;
        const { catalog } = this.env;
        return (await catalog.map(await this.everyProject(), (p) => catalog.templatesOf(p.id))).reduce((n, l) => n + l.length, 0);
      },
    },
  };

  /** Records given to `take` at once: their number. */
  private async took(take: (batch: readonly Rec[]) => Promise<void> | void, recs: Rec[]): Promise<number> {
    await take(recs);
    return recs.length;
  }

  /** Every project the key reaches. */
  private async everyProject(): Promise<V1Project[]> {
    const { catalog } = this.env;
    return (await catalog.map(await catalog.teams(), (t) => catalog.projectsOfTeam(t.id))).flat();
  }

  async walk<T extends { readonly at: number }>(plan: Plan, _withData: boolean, convert: (batch: Walked[]) => Promise<T[]>): Promise<MergeSource<T>[]> {
    const projects = await this.projects(plan);
    const order = plan.pushdown.order ?? 'desc';
    // read ahead only when everything will be read (limit=-1); otherwise fetch no page that might not be needed
    const all = plan.stopAfter === null;
    const first = plan.pages?.first ?? V1_PAGE_MAX;
    const status = plan.pushdown.status;
    return projects.map((p) =>
      this.env.catalog.stream<T>(p.id, { order, ...(status ? { status } : {}) }, first, all, async (items) => {
        const recs = this.built(items);
        return convert(recs.map((rec, i) => ({ rec, at: (items[i] as V1Render).created_at, ref: (items[i] as V1Render).id })));
      }),
    );
  }

  async scan(resource: string, plan: Plan, _withData: boolean, take: (batch: readonly Rec[]) => Promise<void> | void): Promise<number> {
    const reader = isRecordResource(resource) ? this.readers[resource] : undefined;
    if (!reader) throw new TypeError(`no records for ${resource}`);
    return reader.scan(plan, take);
  }

  /** total_count: what the scan read when nothing narrowed it; otherwise every item in reach, counted. */
  async total(resource: string, plan: Plan, scanned: number): Promise<number> {
    const narrowed = plan.ids !== null || plan.scope.accounts !== null || plan.scope.projects !== null;
    const reader = isRecordResource(resource) ? this.readers[resource] : undefined;
    if (!reader) throw new TypeError(`no records for ${resource}`);
    return reader.total(plan, scanned, narrowed);
  }

  async prepare(recs: readonly Rec[]): Promise<Rec[]> {
    return [...recs];
  }

  remember(resource: string, refs: readonly string[]): void {
    if (!traitsOf(resource).streamed) return;
    for (const v1 of refs) if (v1) this.env.ids.toLegacy('render', v1);
  }

  flush(): Promise<void> {
    return this.env.ids.flush();
  }

  describe(plan: Plan): SourceDescription {
    return { kind: 'live', ageMs: 0, calls: liveCalls(plan) };
  }
}

/** The v1 calls a plan makes live, in the order it makes them. */
export function liveCalls(plan: Plan): PlannedCall[] {
  if (plan.strategy === 'direct') {
    return [...(plan.scope.accounts ? [TEAMS] : []), { call: `GET ${traitsOf(plan.resource).byId ?? '/v1/projects'}/{id}`, times: plan.ids?.length ?? 0 }];
  }
  return isRecordResource(plan.resource) ? LIVE_CALLS[plan.resource](plan) : [];
}

const TEAMS: PlannedCall = { call: 'GET /v1/teams', times: 1 };
const TEAM_PROJECTS: PlannedCall = { call: 'GET /v1/teams/{team}/projects', times: 'each team in scope' };

/** The calls each resource's scan or walk makes (a read by ids: liveCalls). */
const LIVE_CALLS: { readonly [R in RecordResource]: (plan: Plan) => PlannedCall[] } = {
  account: () => [TEAMS, { call: 'GET /v1/teams/{team}/members', times: 'each team in scope' }],
  project: () => [TEAMS, TEAM_PROJECTS],
  template: () => [TEAMS, TEAM_PROJECTS, { call: 'GET /v1/projects/{project}/templates', times: 'each project in scope' }],
  render: (plan) => {
    const given = plan.scope.projects && !plan.scope.accounts ? plan.scope.projects.length : null;
    const projects = given !== null ? [{ call: 'GET /v1/projects/{id}', times: given }] : [TEAMS, TEAM_PROJECTS];
    const query = [plan.pushdown.order ? `order=${plan.pushdown.order}` : null, plan.pushdown.status ? `status=${plan.pushdown.status}` : null]
      .filter(Boolean).join('&');
    const list = `GET /v1/projects/{project}/renders${query ? `?${query}` : ''}`;
    const pages: PlannedCall = plan.strategy === 'merge'
      ? {
        call: list, times: 'each project in scope, page after page while needed',
        note: `first page limit=${plan.pages?.first ?? V1_PAGE_MAX}, then ${plan.pages?.next ?? V1_PAGE_MAX}; ` +
          (plan.stopAfter === null ? 'every page, read ahead' : `stops once ${plan.stopAfter} are settled`),
      }
      : { call: list, times: 'every page of each project in scope', note: `limit=${plan.pages?.next ?? V1_PAGE_MAX}` };
    return [...projects, pages];
  },
};
