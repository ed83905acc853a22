import type { Mappings } from '../config/mappings.js';
import type { ExpansionBudget } from '../query/budget.js';
import type { Lookup, Rec } from '../query/compile.js';
import { isRecordResource, oneToMany, type OneToMany, type RecordResource } from '../query/resources.js';
import { DataAtHand, dataFromHand, readMissed, withDataAtHand, type RenderDataReader } from '../translate/data-at-hand.js';
import type { IdTranslator } from '../translate/ids.js';
import { teamOwner, toLegacyAccount, toLegacyProject, toLegacyRender, toLegacyTemplate, type Overlay } from '../translate/records.js';
import type { TimeUnit } from '../translate/time.js';
import { V1_PAGE_MAX, type V1Project, type V1Render, type V1Team, type V1TemplateSummary } from '../v1/schemas.js';
import type { Catalog } from './catalog.js';

/** More rounds than any path can need (MAX_RELATIONAL_DEPTH is at most 100): a guard, never the reason a read stops. */
const MAX_ROUNDS = 128;

export interface ExecEnv {
  readonly catalog: Catalog;
  readonly ids: IdTranslator;
  readonly mappings: Mappings;
  readonly timeUnit: TimeUnit;
  /** Render data, read per evaluation (weighed, room taken, read: `readMissed`). */
  readonly renderData: RenderDataReader;
  /** Overlays per resource type: v1 id → field values the gateway keeps. */
  readonly overlays: Readonly<Record<string, ReadonlyMap<string, Record<string, unknown>>>>;
  /** Items per one-to-many field (Directus's nested default limit). */
  readonly nestedLimit: number;
  /** Related items this request's answer may still expand (MAX_RELATED_ITEMS). */
  readonly budget: ExpansionBudget;
  /** Operator-configured render_credits figures per v1 team id. */
  readonly credits?: Readonly<Record<string, unknown>>;
  /** The answer's end: aborted once its client has gone (a long evaluation stops between its rounds). */
  readonly gone?: AbortSignal;
}

/**
 * The records of one request, by legacy uuid, and a Lookup over them. A lookup that misses is
 * recorded (and answers empty); `fill()` then fetches every miss in one bounded fan-out and the caller
 * evaluates again — so relations are fetched only when a query really touches them.
 */
export class RecordMap implements Lookup {
  private readonly byType = new Map<string, Map<string, Rec>>();
  private readonly children = new Map<string, Rec[]>();
  private readonly v1Of = new Map<string, unknown>();
  private readonly absent = new Set<string>();
  private missOne = new Set<string>();
  private missMany = new Map<string, { parentResource: string; parent: Rec; field: string }>();
  private missAll = new Map<string, { parentResource: string; parent: Rec; field: string }>();

  constructor(readonly env: ExecEnv) {}

  add(type: string, rec: Rec, v1?: unknown): Rec {
    let m = this.byType.get(type);
    if (!m) {
      m = new Map();
      this.byType.set(type, m);
    }
    m.set(rec.id as string, rec);
    if (v1 !== undefined) this.v1Of.set(`${type}:${rec.id as string}`, v1);
    return rec;
  }

  /** The v1 object a project or account record was built from (relations are looked up through it). */
  v1<T>(type: string, uuid: string): T | undefined {
    return this.v1Of.get(`${type}:${uuid}`) as T | undefined;
  }

  one(resource: string, id: string): Rec | undefined {
    const r = this.byType.get(resource)?.get(id);
    if (!r && !this.absent.has(`${resource}:${id}`)) this.missOne.add(`${resource}:${id}`);
    return r;
  }

  many(_resource: string, parent: Rec, field: string, parentResource: string): readonly Rec[] {
    const k = `${parentResource}:${parent.id as string}:${field}`;
    const c = this.children.get(k);
    if (c) return c;
    this.missMany.set(k, { parentResource, parent, field });
    return [];
  }

  /** Every related record (count(), deep): fetched whole on a miss — every page of the projects concerned. */
  manyAll(_resource: string, parent: Rec, field: string, parentResource: string): readonly Rec[] {
    const k = `${parentResource}:${parent.id as string}:${field}:all`;
    const c = this.children.get(k);
    if (c) return c;
    this.missAll.set(k, { parentResource, parent, field });
    return [];
  }

  /** The related records of a parent's field; `whole`: they are every one (a `deep` option or `count()` reads them too). */
  setChildren(parentResource: string, parentId: string, field: string, recs: Rec[], whole = false): void {
    this.version++;
    this.children.set(`${parentResource}:${parentId}:${field}`, recs);
    if (whole) this.children.set(`${parentResource}:${parentId}:${field}:all`, recs);
  }

  get hasMisses(): boolean {
    return this.missOne.size > 0 || this.missMany.size > 0 || this.missAll.size > 0;
  }

  /**
   * Runs `evaluate` until it no longer misses anything. Each round fetches what the last one missed, so a path needs at
   * most one round per relation it crosses (MAX_RELATIONAL_DEPTH, at most 100); the loop ends when nothing is missed, or
   * when a round misses exactly what the one before it did (nothing more can be fetched: those answer empty, as absent).
   */
  async settle<T>(evaluate: () => T, most = Number.POSITIVE_INFINITY, kept?: (drop: () => void) => void): Promise<T> {
    // render data is read from the evaluation's hand, weighed before it is read (the records hold none)
    const hand = new DataAtHand();
    let last = '';
    let done = false;
    try {
      for (let round = 0; ; round++) {
        this.missOne = new Set();
        this.missMany = new Map();
        this.missAll = new Map();
        const spent = this.env.budget.spent;
        const out = withDataAtHand(hand, evaluate);
        const data = hand.missed > 0;
        done = true;
        if ((!this.hasMisses && !data) || round >= MAX_ROUNDS) return out;
        const misses = this.missKeys();
        if (misses === last && !data) return out;
        done = false;
        last = misses;
        // the round is evaluated again once its misses are fetched: its expansions are counted then
        this.env.budget.resetTo(spent);
        if (data) await readMissed(hand, this.env.renderData, most);
        if (this.hasMisses) await this.fill();
      }
    } finally {
      if (done && kept) kept(() => hand.drop());
      else hand.drop();
    }
  }

  /** What this round missed, as one text (two rounds that miss the same things made no progress). */
  private missKeys(): string {
    return `${[...this.missOne].join(',')}|${[...this.missMany.keys()].join(',')}|${[...this.missAll.keys()].join(',')}`;
  }

  // ---------------------------------------------------------------- building records

  /** Render records, kept (their data read from the hand of the evaluation that reads it). */
  renders(list: readonly V1Render[]): Rec[] {
    return list.map((r) => this.add('render', this.renderRecord(r)));
  }

  /**
   * One legacy render record (not kept in the index: streams pass through without retaining); its `data` is read from
   * the evaluation's hand (`dataFromHand`).
   */
  renderRecord(r: V1Render, answered = true): Rec {
    const project = this.v1<V1Project>('project', this.env.ids.toLegacy('project', r.project.id));
    return dataFromHand(toLegacyRender(r, this.env, {
      overlay: this.env.overlays.render?.get(r.id) as Overlay | undefined,
      projectThumbnail: project?.thumbnail_url ?? null,
      answered,
    }), r.id);
  }

  project(p: V1Project): Rec {
    return this.add('project', toLegacyProject(p, this.env, this.env.overlays.project?.get(p.id) as Overlay | undefined), p);
  }

  account(t: V1Team, ownerV1Id: string | null): Rec {
    return this.add(
      'account',
      toLegacyAccount(t, ownerV1Id, this.env, this.env.overlays.account?.get(t.id) as Overlay | undefined, this.env.credits?.[t.id] ?? null),
      t,
    );
  }

  template(t: V1TemplateSummary, project: V1Project): Rec {
    return this.add('template', toLegacyTemplate(t, project, this.env), t);
  }

  async accounts(teams: readonly V1Team[]): Promise<Rec[]> {
    const owners = await this.env.catalog.map(teams, async (t) => teamOwner(await this.env.catalog.membersOf(t.id)));
    return teams.map((t, i) => this.account(t, owners[i] ?? null));
  }

  // ---------------------------------------------------------------- fetching misses

  /** Moves with every round that fetched what was missed (`Lookup.version`). */
  version = 0;

  private async fill(): Promise<void> {
    this.version++;
    const { catalog } = this.env;
    const ones = [...this.missOne].map((k) => {
      const i = k.indexOf(':');
      return { type: k.slice(0, i), id: k.slice(i + 1) };
    });
    await catalog.map(ones, async ({ type, id }) => {
      // (a template is never fetched alone: it is read with its project's list)
      if (isRecordResource(type) && !(await FETCH_ONE[type](this, id))) this.absent.add(`${type}:${id}`);
    });
    await this.fillAll();
    await catalog.map([...this.missMany.values()], async ({ parentResource, parent, field }) => {
      const id = parent.id as string;
      const rel = oneToMany(parentResource, field);
      this.setChildren(parentResource, id, field, rel ? await CHILDREN[rel].first(this, id) : []);
    });
  }

  /** Every related record of the one-to-many lists asked whole (`manyAll`). */
  private async fillAll(): Promise<void> {
    this.version++;
    await this.env.catalog.map([...this.missAll.entries()], async ([k, { parentResource, parent, field }]) => {
      const rel = oneToMany(parentResource, field);
      this.children.set(k, rel ? await CHILDREN[rel].all(this, parent.id as string) : []);
    });
  }

  /** Every render of these projects, as records. */
  async everyRender(projectIds: readonly string[]): Promise<Rec[]> {
    const out: V1Render[] = [];
    for (const id of projectIds) for await (const page of this.env.catalog.renderPages(id)) out.push(...page);
    return this.renders(out);
  }

  /** The projects of the team an account uuid names, each kept as a record (none: the account is not known). */
  async teamProjects(account: string): Promise<V1Project[]> {
    const t = this.v1<V1Team>('account', account);
    const projects = t ? await this.env.catalog.projectsOfTeam(t.id) : [];
    for (const x of projects) this.project(x);
    return projects;
  }

  /**
   * The first `nestedLimit` renders across projects in primary-key (legacy uuid) order, as Directus lists related items:
   * every page is read (v1 has no such order), keeping only the best ones so far.
   */
  async firstByKey(projectIds: readonly string[]): Promise<V1Render[]> {
    const n = this.env.nestedLimit;
    if (n <= 0) return [];
    const key = (r: V1Render) => this.env.ids.derive('render', r.id);
    let best: { k: string; r: V1Render }[] = [];
    const keep = () => { best.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0)); best = best.slice(0, n); };
    for (const projectId of projectIds) {
      for await (const page of this.env.catalog.renderPages(projectId)) {
        for (const r of page) best.push({ k: key(r), r });
        if (best.length >= 2 * n + V1_PAGE_MAX) keep();
      }
    }
    keep();
    return best.map((x) => x.r);
  }
}

/** How a record missed by a look-up is fetched, by resource: false when v1 has no such record (it is absent). */
const FETCH_ONE: Readonly<Record<RecordResource, (map: RecordMap, id: string) => Promise<boolean>>> = {
  async project(map, id) {
    const v1 = await map.env.ids.toV1('project', id);
    const p = v1 ? await map.env.catalog.project(v1) : undefined;
    if (p) map.project(p);
    return !!p;
  },
  async account(map, id) {
    const v1 = await map.env.ids.toV1('account', id);
    const team = v1 ? (await map.env.catalog.teams()).find((t) => t.id === v1) : undefined;
    if (team) await map.accounts([team]);
    return !!team;
  },
  async render(map, id) {
    const v1 = await map.env.ids.toV1('render', id);
    const r = v1 ? await map.env.catalog.render(v1) : undefined;
    if (r) map.renders([r]);
    return !!r;
  },
  template: async () => true,
};

/**
 * How each one-to-many relation's children are fetched: the first `nestedLimit` in primary-key order (Directus lists
 * related items so; v1 has no such order: every page is read), or every one (`manyAll`).
 */
const CHILDREN: Readonly<Record<OneToMany, { first(map: RecordMap, parent: string): Promise<Rec[]>; all(map: RecordMap, parent: string): Promise<Rec[]> }>> = {
  'project.renders': {
    async first(map, id) {
      const p = map.v1<V1Project>('project', id);
      return p ? map.renders(await map.firstByKey([p.id])) : [];
    },
    async all(map, id) {
      const p = map.v1<V1Project>('project', id);
      return p ? map.everyRender([p.id]) : [];
    },
  },
  'account.renders': {
    async first(map, id) {
      const projects = await map.teamProjects(id);
      return map.renders(await map.firstByKey(projects.map((x) => x.id)));
    },
    async all(map, id) {
      return map.everyRender((await map.teamProjects(id)).map((x) => x.id));
    },
  },
  'account.projects': {
    async first(map, id) {
      const byKey = (x: V1Project) => map.env.ids.derive('project', x.id);
      const projects = (await map.teamProjects(id)).slice().sort((a, b) => (byKey(a) < byKey(b) ? -1 : 1)).slice(0, map.env.nestedLimit);
      return projects.map((x) => map.project(x));
    },
    async all(map, id) {
      return (await map.teamProjects(id)).map((x) => map.project(x));
    },
  },
};
