import type { Rec } from '../query/compile.js';
import type { BackfillState, ProjectRow, RenderRow, TeamRow } from '../store/render-index.js';
import { FINAL_STATUSES, LIFECYCLE_RANK, type V1Project, type V1Render, type V1Team, type V1TeamMember, type V1TemplateSummary } from '../v1/schemas.js';

/** Builds the legacy records of the index (translation lives in src/translate; this only says what to call). */
export interface RecordBuilder {
  /** The legacy uuid of a v1 id (without recording the pair: answered records are recorded by the reader). */
  uuid(type: 'render' | 'project' | 'account' | 'template', v1Id: string): string;
  render(r: V1Render, data: unknown, project: V1Project | undefined): Rec;
  project(p: V1Project): Rec;
  account(t: V1Team, members: readonly V1TeamMember[]): Rec;
  template(t: V1TemplateSummary, p: V1Project): Rec;
}

export interface RenderEntry {
  render: V1Render;
  seenAt: number;
  /** The render's legacy uuid (its place in primary-key and newest-first orders). */
  uuid: string;
  /** When its output URLs expire (read from them once, on first need). */
  expiresAt?: number;
}

export interface ProjectEntry {
  project: V1Project;
  templates: readonly V1TemplateSummary[] | null;
  backfilled: boolean;
  /** When the gateway got this copy (its thumbnail URL's lifetime counts from then). */
  seenAt: number;
}

const updatedOf = (r: V1Render) => r.updated_at ?? r.created_at;
const ordered = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Whether `next` may replace `prev`: not older by updated_at, and never back in the lifecycle. */
export function supersedes(prev: V1Render | undefined, next: V1Render): boolean {
  if (!prev) return true;
  return updatedOf(prev) <= updatedOf(next) && LIFECYCLE_RANK[prev.status] <= LIFECYCLE_RANK[next.status];
}

/**
 * One team's index in memory: its v1 objects (team, members, projects with templates, renders as v1 last showed
 * them) mirrored from the store, and the legacy records built from them on first use and rebuilt one by one as
 * renders change. Pure data: the sync and the readers do the I/O.
 */
export class TeamIndex {
  team: V1Team;
  members: readonly V1TeamMember[];
  state: BackfillState;
  backfilledAt: number | null;
  syncedAt: number | null;
  webhookAt: number | null;
  /** When a legacy request last read the team (background syncs run for teams being read). */
  readAt = 0;
  readonly projects = new Map<string, ProjectEntry>();
  readonly data = new Map<string, unknown>();
  private readonly renders = new Map<string, RenderEntry>();
  private readonly byProject = new Map<string, Set<string>>();
  private readonly moving = new Set<string>();
  private bytes = 0;

  // legacy records, built lazily
  private readonly recs = new Map<string, Rec>();
  private renderList: Rec[] | null = null;
  private readonly renderUuids = new Map<string, string>();
  private projectRecs: Map<string, Rec> | null = null;
  private projectList: Rec[] | null = null;
  private projectUuids: Map<string, string> | null = null;
  private templateList: Rec[] | null = null;
  private accountRec: Rec | null = null;
  private readonly byKey = new Map<string, { version: number; ids: string[] }>();
  /** Render entries newest first (created_at descending, then uuid ascending): the default legacy order. */
  private newest: RenderEntry[] | null = null;

  constructor(row: TeamRow, private readonly builder: RecordBuilder) {
    this.team = row.team;
    this.members = row.members;
    this.state = row.state;
    this.backfilledAt = row.backfilledAt;
    this.syncedAt = row.syncedAt;
    this.webhookAt = row.webhookAt;
  }

  get id(): string {
    return this.team.id;
  }

  get size(): number {
    return this.renders.size;
  }

  /** A rough figure of the memory the team's index holds (for INDEX_MEMORY_MB). */
  get approxBytes(): number {
    return this.bytes;
  }

  setRow(row: TeamRow): void {
    if (JSON.stringify(row.team) !== JSON.stringify(this.team) || JSON.stringify(row.members) !== JSON.stringify(this.members)) {
      this.team = row.team;
      this.members = row.members;
      this.accountRec = null;
    }
    this.state = row.state;
    this.backfilledAt = row.backfilledAt;
    this.syncedAt = Math.max(this.syncedAt ?? 0, row.syncedAt ?? 0) || null;
    this.webhookAt = Math.max(this.webhookAt ?? 0, row.webhookAt ?? 0) || null;
  }

  /** A project as v1 showed it at `seenAt` (its signed thumbnail is dated from then). */
  setProject(row: ProjectRow, seenAt: number): void {
    const prev = this.projects.get(row.project.id);
    const templates = row.templates ?? prev?.templates ?? null;
    const sameThumb = prev && prev.project.thumbnail_url === row.project.thumbnail_url;
    this.projects.set(row.project.id, {
      project: row.project, templates, backfilled: row.backfilled || !!prev?.backfilled, seenAt: sameThumb ? prev.seenAt : seenAt,
    });
    this.invalidateProjects();
    // a render's output falls back to its project's thumbnail
    if (prev && prev.project.thumbnail_url !== row.project.thumbnail_url) for (const id of this.byProject.get(row.project.id) ?? []) this.recs.delete(id);
    this.renderList = null;
  }

  dropProject(projectId: string): void {
    for (const id of this.byProject.get(projectId) ?? []) {
      const e = this.renders.get(id);
      if (e) this.bytes -= approxSize(e.render);
      this.renders.delete(id);
      this.moving.delete(id);
      this.recs.delete(id);
      this.renderUuids.delete(this.builder.uuid('render', id));
    }
    this.byProject.delete(projectId);
    this.byKey.clear();
    this.newest = null;
    this.projects.delete(projectId);
    this.invalidateProjects();
    this.renderList = null;
  }

  private invalidateProjects(): void {
    this.projectRecs = null;
    this.projectList = null;
    this.projectUuids = null;
    this.templateList = null;
  }

  /** Applies a render unless the index holds a newer state of it; true when applied. */
  apply(r: V1Render, seenAt: number): boolean {
    const prev = this.renders.get(r.id);
    if (!supersedes(prev?.render, r)) return false;
    if (prev && prev.render.project.id !== r.project.id) this.byProject.get(prev.render.project.id)?.delete(r.id);
    if (prev) this.bytes -= approxSize(prev.render);
    this.bytes += approxSize(r);
    const entry: RenderEntry = { render: r, seenAt, uuid: prev?.uuid ?? this.builder.uuid('render', r.id) };
    this.renders.set(r.id, entry);
    let set = this.byProject.get(r.project.id);
    if (!set) this.byProject.set(r.project.id, (set = new Set()));
    if (!set.has(r.id)) {
      set.add(r.id);
      this.renderUuids.set(entry.uuid, r.id);
    }
    if (!prev) this.placeNewest(entry);
    else if (prev.render.created_at !== r.created_at) this.newest = null;
    if (FINAL_STATUSES.has(r.status)) this.moving.delete(r.id);
    else this.moving.add(r.id);
    this.recs.delete(r.id);
    this.renderList = null;
    return true;
  }

  load(rows: readonly RenderRow[]): void {
    for (const row of rows) this.apply(row.render, row.seenAt);
  }

  setData(v1Id: string, data: unknown): void {
    this.data.set(v1Id, data);
    this.recs.delete(v1Id);
    this.renderList = null;
  }

  /** Every legacy record is built again on next use (overlays or imported ids changed). */
  invalidateRecords(): void {
    this.recs.clear();
    this.renderList = null;
    this.renderUuids.clear();
    this.byKey.clear();
    this.newest = null;
    for (const [id, e] of this.renders) {
      e.uuid = this.builder.uuid('render', id);
      this.renderUuids.set(e.uuid, id);
    }
    this.accountRec = null;
    this.invalidateProjects();
  }

  // ------------------------------------------------------------------ v1 state (for the sync)

  render(v1Id: string): RenderEntry | undefined {
    return this.renders.get(v1Id);
  }

  has(v1Id: string): boolean {
    return this.renders.has(v1Id);
  }

  /** Renders not yet final (their status may still change). */
  movingIds(): string[] {
    return [...this.moving];
  }

  /** The newest created_at known in a project (null when none is known). */
  head(projectId: string): number | null {
    let max: number | null = null;
    for (const id of this.byProject.get(projectId) ?? []) {
      const c = (this.renders.get(id) as RenderEntry).render.created_at;
      if (max === null || c > max) max = c;
    }
    return max;
  }

  private readonly marks = new Map<string, number | null>();

  /** The newest created_at of a project as of the last walk of its list that completed (the newest known before any). */
  headMark(projectId: string): number | null {
    return this.marks.has(projectId) ? (this.marks.get(projectId) as number | null) : this.head(projectId);
  }

  setHeadMark(projectId: string, at: number | null): void {
    const prev = this.marks.get(projectId);
    this.marks.set(projectId, prev === undefined || prev === null || (at !== null && at > prev) ? at : prev);
  }

  /** A project's known renders, newest first (v1's list order; the sync's page arithmetic). */
  projectRenders(projectId: string): V1Render[] {
    return [...(this.byProject.get(projectId) ?? [])]
      .map((id) => (this.renders.get(id) as RenderEntry).render)
      .sort((a, b) => b.created_at - a.created_at || ordered(a.id, b.id));
  }

  /** The renders newest first, ties by uuid (the resource's default order): built once, kept as renders arrive. */
  newestFirst(): readonly RenderEntry[] {
    if (!this.newest) this.newest = [...this.renders.values()].sort(newestOrder);
    return this.newest;
  }

  /** A new render takes its place in the kept order (most arrive at the head: a binary search, one splice). */
  private placeNewest(e: RenderEntry): void {
    const list = this.newest;
    if (!list) return;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (newestOrder(list[mid] as RenderEntry, e) < 0) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, e);
  }

  // ------------------------------------------------------------------ legacy records (for readers)

  renderRecord(v1Id: string): Rec | undefined {
    let rec = this.recs.get(v1Id);
    if (rec) return rec;
    const e = this.renders.get(v1Id);
    if (!e) return undefined;
    rec = this.builder.render(e.render, this.data.get(v1Id) ?? {}, this.projects.get(e.render.project.id)?.project);
    this.recs.set(v1Id, rec);
    return rec;
  }

  renderRecords(): Rec[] {
    if (!this.renderList) {
      const out: Rec[] = [];
      for (const id of this.renders.keys()) out.push(this.renderRecord(id) as Rec);
      this.renderList = out;
    }
    return this.renderList;
  }

  /** One project's render records. */
  rendersOfProject(projectId: string): Rec[] {
    return [...(this.byProject.get(projectId) ?? [])].map((id) => this.renderRecord(id) as Rec);
  }

  /** The v1 id of a render uuid of this team. */
  renderV1(uuid: string): string | undefined {
    return this.renderUuids.get(uuid);
  }

  private ensureProjects(): void {
    if (this.projectRecs) return;
    this.projectRecs = new Map();
    this.projectUuids = new Map();
    for (const [id, e] of this.projects) {
      const rec = this.builder.project(e.project);
      this.projectRecs.set(id, rec);
      this.projectUuids.set(rec.id as string, id);
    }
    this.projectList = [...this.projectRecs.values()];
  }

  projectRecords(): Rec[] {
    this.ensureProjects();
    return this.projectList as Rec[];
  }

  projectV1(uuid: string): string | undefined {
    this.ensureProjects();
    return this.projectUuids?.get(uuid);
  }

  projectRecord(v1Id: string): Rec | undefined {
    this.ensureProjects();
    return this.projectRecs?.get(v1Id);
  }

  templateRecords(): Rec[] {
    if (!this.templateList) {
      const out: Rec[] = [];
      for (const e of this.projects.values()) for (const t of e.templates ?? []) out.push(this.builder.template(t, e.project));
      this.templateList = out;
    }
    return this.templateList;
  }

  accountRecord(): Rec {
    this.accountRec ??= this.builder.account(this.team, this.members);
    return this.accountRec;
  }

  /**
   * The first `n` renders of a project (or of the whole team when `projectId` is null) in primary-key (legacy
   * uuid) order, as Directus lists related items; the order is kept until a render is added.
   */
  rendersByKey(projectId: string | null, n: number): Rec[] {
    const k = projectId ?? '*';
    let c = this.byKey.get(k);
    const size = projectId ? (this.byProject.get(projectId)?.size ?? 0) : this.renders.size;
    if (!c || c.version !== size) {
      const ids = projectId ? [...(this.byProject.get(projectId) ?? [])] : [...this.renders.keys()];
      const keyed = ids.map((id) => ({ id, k: (this.renders.get(id) as RenderEntry).uuid })).sort((a, b) => ordered(a.k, b.k));
      c = { version: size, ids: keyed.map((x) => x.id) };
      this.byKey.set(k, c);
    }
    return c.ids.slice(0, n).map((id) => this.renderRecord(id) as Rec);
  }

  projectsByKey(n: number): Rec[] {
    return this.projectRecords().slice().sort((a, b) => ordered(a.id as string, b.id as string)).slice(0, n);
  }
}

/** Newest first, then by uuid: the order of `-date_created,id` (an ISO date orders as its epoch time). */
function newestOrder(a: RenderEntry, b: RenderEntry): number {
  return b.render.created_at - a.render.created_at || ordered(a.uuid, b.uuid);
}

/** A rough size of a render held in memory (its JSON length × 2 for the object graph, plus the record). */
function approxSize(r: V1Render): number {
  // the v1 object, its legacy record and the maps that hold them (measured: ~2.7 kB for a complete render)
  let n = 1100 + r.name.length * 4;
  for (const v of Object.values(r.output ?? {})) n += 60 + v.length * 2;
  return n;
}
