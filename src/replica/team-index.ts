import { stateOf, supersedes as supersedesState } from './recency.js';
import type { Rec } from '../query/compile.js';
import type { IdType } from '../translate/ids.js';
import type { BackfillState, ProjectRow, RenderRow, TeamRow } from '../store/render-index.js';
import {
  FINAL_STATUSES, RENDER_STATUSES, type RenderStatus, type V1Project, type V1Render, type V1Team, type V1TeamMember,
  type V1TemplateSummary,
} from '../v1/schemas.js';
import { OutputCodec, type PackedOutput } from './output-codec.js';

/** Builds the legacy records of the index (translation lives in src/translate; this only says what to call). */
export interface RecordBuilder {
  /** The legacy uuid of a v1 id (without recording the pair: answered records are recorded by the reader). */
  uuid(type: 'render' | 'project' | 'account' | 'template', v1Id: string): string;
  /** The legacy uuid a record shows for a v1 id (as the translators answer it). */
  legacyId(type: IdType, v1Id: string): string;
  status(s: RenderStatus): unknown;
  iso(t: number | null): string | null;
  downloadReady(r: Pick<V1Render, 'status' | 'output'>): boolean;
  hasOverlay(type: string, v1Id: string): boolean;
  /** The fields of a legacy render (every one is readable on a record of the index). */
  readonly renderFields: readonly string[];
  render(r: V1Render, data: unknown, project: V1Project | undefined): Rec;
  project(p: V1Project): Rec;
  account(t: V1Team, members: readonly V1TeamMember[]): Rec;
  template(t: V1TemplateSummary, p: V1Project): Rec;
}

/** A render as the index holds it, rebuilt as v1 showed it. */
export interface RenderEntry {
  readonly render: V1Render;
  readonly seenAt: number;
}

export interface ProjectEntry {
  project: V1Project;
  templates: readonly V1TemplateSummary[] | null;
  backfilled: boolean;
  /** When the gateway got this copy (its thumbnail URL's lifetime counts from then). */
  seenAt: number;
  /** When its thumbnail URL expires (read from it on first need). */
  expiresAt?: number;
}

const ordered = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The recency rule (src/replica/recency.ts) on v1 renders. */
export function supersedes(prev: Pick<V1Render, 'updated_at' | 'created_at' | 'status'> | undefined, next: V1Render): boolean {
  return supersedesState(prev ? stateOf(prev) : undefined, stateOf(next));
}

const STATUS_CODE = new Map(RENDER_STATUSES.map((s, i) => [s, i]));
const CLOUD = 1;
const OVERLAY = 2;
const DOWNLOAD_READY = 4;
/** The render's uuid ↔ v1 pair has been handed to the id store (answered once). */
const PAIRED = 8;
/** The render's project is gone: the row is kept only for records readers still hold. */
const REMOVED = 16;

/** Growable typed columns (capacity doubles; trimmed once a load is done). */
class Columns {
  size = 0;
  status = new Uint8Array(64);
  flags = new Uint8Array(64);
  project = new Int32Array(64);
  user = new Int32Array(64);
  shape = new Int32Array(64);
  created = new Float64Array(64);
  updated = new Float64Array(64);
  seen = new Float64Array(64);
  exp = new Float64Array(64);
  expires = new Float64Array(64);
  readonly ids: string[] = [];
  readonly uuids: string[] = [];
  readonly names: string[] = [];
  readonly rest: (string | null)[] = [];

  grow(): void {
    if (this.size < this.status.length) return;
    this.resize(this.status.length * 2);
  }

  trim(): void {
    if (this.status.length > this.size * 1.125 + 64) this.resize(Math.ceil(this.size * 1.125) + 64);
  }

  private resize(n: number): void {
    const re = <T extends Uint8Array | Int32Array | Float64Array>(a: T, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a.subarray(0, Math.min(this.size, n)));
      return b;
    };
    this.status = re(this.status, (k) => new Uint8Array(k));
    this.flags = re(this.flags, (k) => new Uint8Array(k));
    this.project = re(this.project, (k) => new Int32Array(k));
    this.user = re(this.user, (k) => new Int32Array(k));
    this.shape = re(this.shape, (k) => new Int32Array(k));
    this.created = re(this.created, (k) => new Float64Array(k));
    this.updated = re(this.updated, (k) => new Float64Array(k));
    this.seen = re(this.seen, (k) => new Float64Array(k));
    this.exp = re(this.exp, (k) => new Float64Array(k));
    this.expires = re(this.expires, (k) => new Float64Array(k));
  }
}

/**
 * A legacy render read from the index's columns: the fields a scan tests (status, dates, ids, title) come straight
 * from them; the rest (output, data, process_id, and every field of a render with an overlay) from the record the
 * translator builds, made on demand and not kept.
 */
export interface RenderView {
  readonly t: TeamIndex;
  readonly row: number;
  /** date_created / date_updated as answered, kept once read (sorts compare them often); cleared when the row changes. */
  dc: string | null | undefined;
  du: string | null | undefined;
}

/** The process-wide sequence of index versions (see `TeamIndex.version`). */
let changeSeq = 0;
const nextChange = () => ++changeSeq;

/**
 * One team's index in memory, held column by column (a few hundred bytes a render: ids, title, codes, times, output
 * URLs as their varying part), with the team, members, projects and templates as v1 objects. Legacy records are read
 * through views of the columns. Pure data: the sync and the readers do the I/O.
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

  /** @internal */ c = new Columns();
  private readonly codec = new OutputCodec();
  private rowOf = new Map<string, number>();
  private rowOfUuid = new Map<string, number>();
  private views: Rec[] = [];
  private readonly View: new (t: TeamIndex, row: number) => Rec;
  /** The legacy status of each v1 status code. */
  /** @internal */ readonly statusNames: readonly unknown[];
  /** Projects renders point at (interned): v1 id, rows, legacy uuid. */
  private projIds: string[] = [];
  private readonly projIdx = new Map<string, number>();
  private projRows: number[][] = [];
  private projUuids: (string | undefined)[] = [];
  /** Creators (interned): v1 id (null for none) and legacy uuid. */
  private readonly userIds: (string | null)[] = [];
  private readonly userIdx = new Map<string | null, number>();
  private userUuids: (string | null | undefined)[] = [];
  private accountUuid: string | undefined;
  private moving = new Set<number>();
  /** Rows marked removed, and the records of the live rows when there are any. */
  private removed = 0;
  private liveViews: Rec[] | null = null;
  /** Bumped whenever a render joins, moves between projects or leaves (the primary-key orders are built again). */
  private membership = 0;
  private bytes = 0;
  private readonly marks = new Map<string, number | null>();
  /** The head marks the store holds (read with the projects, or written by this instance's syncs). */
  readonly storedMarks = new Map<string, number>();

  // legacy records of projects, templates, account; orders, built lazily
  private projectRecs: Map<string, Rec> | null = null;
  private projectList: Rec[] | null = null;
  private projectUuids: Map<string, string> | null = null;
  private templateList: Rec[] | null = null;
  private templateByUuid: Map<string, { rec: Rec; projectId: string }> | null = null;
  private accountRec: Rec | null = null;
  private readonly byKey = new Map<string, { version: number; rows: number[] }>();
  /** Rows newest first (created_at descending, then uuid ascending): the default legacy order. */
  private newest: number[] | null = null;
  /**
   * Full records built lately, by row, least recently used first (a projection reads a record's fields one after
   * another, and a hot list answers the same renders again); a row leaves it whenever it changes.
   */
  private readonly fullCache = new Map<number, Rec>();

  constructor(row: TeamRow, private readonly builder: RecordBuilder) {
    this.team = row.team;
    this.members = row.members;
    this.state = row.state;
    this.backfilledAt = row.backfilledAt;
    this.syncedAt = row.syncedAt;
    this.webhookAt = row.webhookAt;
    this.View = viewClass(builder);
    this.statusNames = RENDER_STATUSES.map((x) => builder.status(x));
  }

  get id(): string {
    return this.team.id;
  }

  /**
   * Moves on every change an answer can show (a render, a project or template, the team and its members, data,
   * overlays or imported ids): an answer computed at one version is the answer at that version (the answer cache).
   * Versions come from one process-wide sequence: a team read back from the store (a new TeamIndex) never repeats a
   * version an earlier copy of it had.
   */
  get version(): number {
    return this.changes;
  }

  private changes = nextChange();

  get size(): number {
    return this.c.size - this.removed;
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
      this.changes = nextChange();
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
    if (row.headMark !== undefined && row.headMark !== null) {
      this.setHeadMark(row.project.id, row.headMark);
      this.storedMarks.set(row.project.id, row.headMark);
    }
    // a render's output falls back to its project's thumbnail
    if (!prev || prev.project.thumbnail_url !== row.project.thumbnail_url) this.fullCache.clear();
  }

  /**
   * Forgets a project and its renders. Their rows stay in the columns, marked removed (row numbers never change, so a
   * record a reader holds keeps reading its own render); they are gone from every map, order and count, and the
   * columns are compacted when the team is next read back from the store.
   */
  dropProject(projectId: string): void {
    this.projects.delete(projectId);
    this.invalidateProjects();
    const p = this.projIdx.get(projectId);
    const rows = p === undefined ? [] : (this.projRows[p] as number[]);
    if (rows.length === 0) return;
    const c = this.c;
    for (const i of rows) {
      c.flags[i] = (c.flags[i] as number) | REMOVED;
      this.rowOf.delete(c.ids[i] as string);
      this.rowOfUuid.delete(c.uuids[i] as string);
      this.moving.delete(i);
      this.fullCache.delete(i);
      this.bytes -= rowBytes(c.names[i] as string, c.rest[i] ?? null);
    }
    this.removed += rows.length;
    this.projRows[p as number] = [];
    this.newest = null;
    this.liveViews = null;
    this.membership++;
  }

  private invalidateProjects(): void {
    this.changes = nextChange();
    this.projectRecs = null;
    this.projectList = null;
    this.projectUuids = null;
    this.templateList = null;
    this.templateByUuid = null;
  }

  /** Applies a render unless the index holds a newer state of it; true when applied. */
  apply(r: V1Render, seenAt: number): boolean {
    const known = this.rowOf.get(r.id);
    if (known !== undefined && !supersedes(this.stateOf(known), r)) return false;
    const c = this.c;
    let i = known;
    if (i === undefined) {
      c.grow();
      i = c.size++;
      c.ids.push(r.id);
      const uuid = this.builder.uuid('render', r.id);
      c.uuids.push(uuid);
      c.names.push(r.name);
      c.rest.push(null);
      this.rowOf.set(r.id, i);
      this.rowOfUuid.set(uuid, i);
      this.views.push(new this.View(this, i));
    } else {
      this.bytes -= rowBytes(c.names[i] as string, c.rest[i] ?? null);
    }
    const project = this.internProject(r.project.id);
    if (known !== undefined && c.project[i] !== project) {
      const rows = this.projRows[c.project[i] as number] as number[];
      rows.splice(rows.indexOf(i), 1);
      (this.projRows[project] as number[]).push(i);
      this.membership++;
    } else if (known === undefined) {
      (this.projRows[project] as number[]).push(i);
      this.membership++;
      this.liveViews = null;
    }
    const createdChanged = known !== undefined && c.created[i] !== r.created_at;
    c.names[i] = r.name;
    c.status[i] = STATUS_CODE.get(r.status) as number;
    c.project[i] = project;
    c.user[i] = this.internUser(r.created_by);
    c.created[i] = r.created_at;
    c.updated[i] = r.updated_at ?? Number.NaN;
    c.seen[i] = seenAt;
    c.expires[i] = Number.NaN;
    const out = this.codec.encode(r.id, r.output);
    c.shape[i] = out.shape;
    c.exp[i] = out.exp;
    c.rest[i] = out.rest;
    let flags = (c.flags[i] as number) & PAIRED;
    if (this.builder.hasOverlay('render', r.id)) flags |= OVERLAY;
    if (r.type === 'cloud') flags |= CLOUD;
    if (this.builder.downloadReady(r)) flags |= DOWNLOAD_READY;
    c.flags[i] = flags;
    this.bytes += rowBytes(r.name, out.rest);
    if (known === undefined) this.placeNewest(i);
    else if (createdChanged) this.newest = null;
    if (FINAL_STATUSES.has(r.status)) this.moving.delete(i);
    else this.moving.add(i);
    this.fullCache.delete(i);
    const view = this.views[i] as unknown as RenderView;
    view.dc = undefined;
    view.du = undefined;
    this.changes = nextChange();
    return true;
  }

  load(rows: readonly RenderRow[]): void {
    for (const row of rows) this.apply(row.render, row.seenAt);
  }

  /** Frees the columns' spare capacity (after a load or a backfill). */
  compact(): void {
    this.c.trim();
  }

  setData(v1Id: string, data: unknown): void {
    this.data.set(v1Id, data);
    this.changes = nextChange();
    const i = this.rowOf.get(v1Id);
    if (i !== undefined) this.fullCache.delete(i);
  }

  /** Every legacy record is built again on next use (overlays or imported ids changed). */
  invalidateRecords(): void {
    const c = this.c;
    this.rowOfUuid = new Map();
    for (let i = 0; i < c.size; i++) {
      if (((c.flags[i] as number) & REMOVED) !== 0) continue;
      const id = c.ids[i] as string;
      const uuid = this.builder.uuid('render', id);
      c.uuids[i] = uuid;
      this.rowOfUuid.set(uuid, i);
      const f = (c.flags[i] as number) & ~(OVERLAY | PAIRED);
      c.flags[i] = this.builder.hasOverlay('render', id) ? f | OVERLAY : f;
    }
    this.projUuids = [];
    this.userUuids = [];
    this.accountUuid = undefined;
    this.byKey.clear();
    this.newest = null;
    this.accountRec = null;
    this.fullCache.clear();
    this.invalidateProjects();
  }

  private internProject(id: string): number {
    let p = this.projIdx.get(id);
    if (p === undefined) {
      p = this.projIds.length;
      this.projIds.push(id);
      this.projIdx.set(id, p);
      this.projRows.push([]);
    }
    return p;
  }

  private internUser(id: string | null): number {
    let u = this.userIdx.get(id);
    if (u === undefined) {
      u = this.userIds.length;
      this.userIds.push(id);
      this.userIdx.set(id, u);
    }
    return u;
  }

  // ------------------------------------------------------------------ v1 state (for the sync)

  private stateOf(i: number): Pick<V1Render, 'updated_at' | 'created_at' | 'status'> {
    const u = this.c.updated[i] as number;
    const status = RENDER_STATUSES[this.c.status[i] as number] as RenderStatus;
    return { status, created_at: this.c.created[i] as number, updated_at: Number.isNaN(u) ? null : u };
  }

  private packed(i: number): PackedOutput {
    return { shape: this.c.shape[i] as number, exp: this.c.exp[i] as number, rest: this.c.rest[i] ?? null };
  }

  /** The render of a row as v1 showed it. */
  private v1(i: number): V1Render {
    const c = this.c;
    const id = c.ids[i] as string;
    const r: V1Render = {
      id,
      name: c.names[i] as string,
      status: RENDER_STATUSES[c.status[i] as number] as RenderStatus,
      type: ((c.flags[i] as number) & CLOUD) !== 0 ? 'cloud' : 'local',
      project: { id: this.projIds[c.project[i] as number] as string, team: this.team.id },
      created_by: this.userIds[c.user[i] as number] ?? null,
      created_at: c.created[i] as number,
      updated_at: Number.isNaN(c.updated[i] as number) ? null : (c.updated[i] as number),
    };
    const output = this.codec.decode(id, this.packed(i));
    if (output) r.output = output;
    return r;
  }

  /** A render as v1 last showed it, and when. */
  render(v1Id: string): RenderEntry | undefined {
    const i = this.rowOf.get(v1Id);
    return i === undefined ? undefined : { render: this.v1(i), seenAt: this.c.seen[i] as number };
  }

  /** Status, times and output variants of a render (what the sync compares), without rebuilding its URLs. */
  renderState(v1Id: string): { status: RenderStatus; updated: number; variants: string; seenAt: number } | undefined {
    const i = this.rowOf.get(v1Id);
    if (i === undefined) return undefined;
    const s = this.stateOf(i);
    const variants = this.codec.variantsKey(this.packed(i));
    return { status: s.status, updated: s.updated_at ?? s.created_at, variants, seenAt: this.c.seen[i] as number };
  }

  /** When a render's output URLs expire: read once per state held (`compute` reads them from the URLs). */
  expiryOf(v1Id: string, compute: (r: V1Render, seenAt: number) => number): number | undefined {
    const i = this.rowOf.get(v1Id);
    if (i === undefined) return undefined;
    if (Number.isNaN(this.c.expires[i] as number)) this.c.expires[i] = compute(this.v1(i), this.c.seen[i] as number);
    return this.c.expires[i] as number;
  }

  /** Whether a render answers an output (complete, with output URLs): what a refresh looks at, without building it. */
  hasOutput(v1Id: string): boolean {
    const i = this.rowOf.get(v1Id);
    return i !== undefined && RENDER_STATUSES[this.c.status[i] as number] === 'complete' && this.c.shape[i] !== -1;
  }

  /** The v1 project id of a render. */
  projectOf(v1Id: string): string | undefined {
    const i = this.rowOf.get(v1Id);
    return i === undefined ? undefined : this.projIds[this.c.project[i] as number];
  }

  has(v1Id: string): boolean {
    return this.rowOf.has(v1Id);
  }

  /** Renders not yet final (their status may still change). */
  movingIds(): string[] {
    return [...this.moving].map((i) => this.c.ids[i] as string);
  }

  /** The newest created_at known in a project (null when none is known). */
  head(projectId: string): number | null {
    const p = this.projIdx.get(projectId);
    let max: number | null = null;
    for (const i of p === undefined ? [] : (this.projRows[p] as number[])) {
      const c = this.c.created[i] as number;
      if (max === null || c > max) max = c;
    }
    return max;
  }

  /** The newest created_at of a project as of the last walk of its list that completed (the newest known before any). */
  headMark(projectId: string): number | null {
    return this.marks.has(projectId) ? (this.marks.get(projectId) as number | null) : this.head(projectId);
  }

  setHeadMark(projectId: string, at: number | null): void {
    const prev = this.marks.get(projectId);
    this.marks.set(projectId, prev === undefined || prev === null || (at !== null && at > prev) ? at : prev);
  }

  /** A project's known render ids, newest first (v1's list order; the sync's page arithmetic). */
  projectRenderIds(projectId: string): string[] {
    const p = this.projIdx.get(projectId);
    const rows = p === undefined ? [] : [...(this.projRows[p] as number[])];
    const c = this.c;
    rows.sort((a, b) => (c.created[b] as number) - (c.created[a] as number) || ordered(c.ids[a] as string, c.ids[b] as string));
    return rows.map((i) => c.ids[i] as string);
  }

  /** Rows newest first, ties by uuid (the resource's default order): built once, kept as renders arrive. */
  newestFirst(): readonly number[] {
    if (!this.newest) {
      this.newest = this.liveRows().sort((a, b) => this.newestOrder(a, b));
    }
    return this.newest;
  }

  private newestOrder(a: number, b: number): number {
    const c = this.c;
    return (c.created[b] as number) - (c.created[a] as number) || ordered(c.uuids[a] as string, c.uuids[b] as string);
  }

  /** A new render takes its place in the kept order (most arrive at the head: a binary search, one splice). */
  private placeNewest(i: number): void {
    const list = this.newest;
    if (!list) return;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.newestOrder(list[mid] as number, i) < 0) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, i);
  }

  /** The v1 project id of a row (the newest-first walk's project scope). */
  projectOfRow(row: number): string {
    return this.projIds[this.c.project[row] as number] as string;
  }

  /** The v1 id of a row. */
  idOfRow(row: number): string {
    return this.c.ids[row] as string;
  }

  // ------------------------------------------------------------------ legacy records (for readers)

  /** The legacy record of a row. */
  view(row: number): Rec {
    return this.views[row] as Rec;
  }

  renderRecord(v1Id: string): Rec | undefined {
    const i = this.rowOf.get(v1Id);
    return i === undefined ? undefined : (this.views[i] as Rec);
  }

  /** Every render record (read, not copied). */
  renderRecords(): readonly Rec[] {
    if (this.removed === 0) return this.views;
    this.liveViews ??= this.liveRows().map((i) => this.views[i] as Rec);
    return this.liveViews;
  }

  private liveRows(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.c.size; i++) if (((this.c.flags[i] as number) & REMOVED) === 0) out.push(i);
    return out;
  }

  /** One project's render records. */
  rendersOfProject(projectId: string): Rec[] {
    const p = this.projIdx.get(projectId);
    return p === undefined ? [] : (this.projRows[p] as number[]).map((i) => this.views[i] as Rec);
  }

  /**
   * The v1 id of an answered render whose uuid ↔ v1 pair was not handed to the id store yet (marked as handed now), so
   * each pair is written once, with no cache of its own.
   */
  unpaired(uuid: string): string | undefined {
    const i = this.rowOfUuid.get(uuid);
    if (i === undefined || ((this.c.flags[i] as number) & PAIRED) !== 0) return undefined;
    this.c.flags[i] = (this.c.flags[i] as number) | PAIRED;
    return this.c.ids[i];
  }

  /** Pairs a failed write lost: renders' are given again when next answered, and the cached related uuids are asked again. */
  forgetPaired(type: string, v1Id: string): void {
    if (type !== 'render') {
      this.projUuids = [];
      this.userUuids = [];
      this.accountUuid = undefined;
      this.changes = nextChange(); // (as below: the next answer gives the pair again)
      return;
    }
    const i = this.rowOf.get(v1Id);
    if (i === undefined) return;
    this.c.flags[i] = (this.c.flags[i] as number) & ~PAIRED;
    // a kept answer is not read again, so it would not give the pair again: the next read is computed
    this.changes = nextChange();
  }

  /** The v1 id of a render uuid of this team. */
  renderV1(uuid: string): string | undefined {
    const i = this.rowOfUuid.get(uuid);
    return i === undefined ? undefined : this.c.ids[i];
  }

  // column reads of a view (the fast fields)

  /** @internal */ fullRecord(row: number): Rec {
    const hit = this.fullCache.get(row);
    if (hit) {
      this.fullCache.delete(row);
      this.fullCache.set(row, hit);
      return hit;
    }
    const id = this.c.ids[row] as string;
    const r = this.v1(row);
    const rec = this.builder.render(r, this.data.get(id) ?? {}, this.projects.get(r.project.id)?.project);
    if (this.fullCache.size >= FULL_RECORDS_KEPT) this.fullCache.delete(this.fullCache.keys().next().value as number);
    this.fullCache.set(row, rec);
    return rec;
  }

  /**
   * @internal The scan fields of a view, read from the columns (what the translator would answer); id, title and status
   * are read by their getters straight from the columns (viewClass).
   */
  readonly fast: Readonly<Record<string, (row: number) => unknown>> = {
    date_created: (row) => {
      const v = this.views[row] as unknown as RenderView;
      if (v.dc === undefined) v.dc = this.builder.iso(this.c.created[row] as number);
      return v.dc;
    },
    date_updated: (row) => {
      const v = this.views[row] as unknown as RenderView;
      if (v.du === undefined) {
        const u = this.c.updated[row] as number;
        v.du = this.builder.iso(Number.isNaN(u) ? null : u);
      }
      return v.du;
    },
    project: (row) => {
      const p = this.c.project[row] as number;
      let u = this.projUuids[p];
      if (u === undefined) this.projUuids[p] = u = this.builder.legacyId('project', this.projIds[p] as string);
      return u;
    },
    account: () => {
      this.accountUuid ??= this.builder.legacyId('account', this.team.id);
      return this.accountUuid;
    },
    user_created: (row) => {
      const k = this.c.user[row] as number;
      let u = this.userUuids[k];
      if (u === undefined) {
        const id = this.userIds[k] ?? null;
        this.userUuids[k] = u = id === null ? null : this.builder.legacyId('user', id);
      }
      return u;
    },
    download_ready: (row) => ((this.c.flags[row] as number) & DOWNLOAD_READY) !== 0,
    playback_id: () => null,
  };

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
      this.templateByUuid = new Map();
      for (const e of this.projects.values()) {
        for (const t of e.templates ?? []) {
          const rec = this.builder.template(t, e.project);
          out.push(rec);
          this.templateByUuid.set(rec.id as string, { rec, projectId: e.project.id });
        }
      }
      this.templateList = out;
    }
    return this.templateList;
  }

  /** A template's record by uuid, and the v1 id of its project (its poster is the project's signed thumbnail). */
  template(uuid: string): { rec: Rec; projectId: string } | undefined {
    this.templateRecords();
    return this.templateByUuid?.get(uuid);
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
    let cached = this.byKey.get(k);
    const p = projectId === null ? undefined : this.projIdx.get(projectId);
    const rows = projectId === null ? null : p === undefined ? [] : (this.projRows[p] as number[]);
    if (!cached || cached.version !== this.membership) {
      const list = rows ? [...rows] : this.liveRows();
      const uuids = this.c.uuids;
      list.sort((a, b) => ordered(uuids[a] as string, uuids[b] as string));
      cached = { version: this.membership, rows: list };
      this.byKey.set(k, cached);
    }
    return cached.rows.slice(0, n).map((i) => this.views[i] as Rec);
  }

  projectsByKey(n: number): Rec[] {
    return this.projectRecords().slice().sort((a, b) => ordered(a.id as string, b.id as string)).slice(0, n);
  }
}

/** Full records a team keeps built (about 2 kB each): a hot page or two of every list. */
const FULL_RECORDS_KEPT = 256;

/** About what a row costs: its columns, its strings, the maps and the view that hold it. */
function rowBytes(name: string, rest: string | null): number {
  return 400 + name.length + (rest?.length ?? 0);
}

/** The record class of the renders (one per builder: every team's views share one shape and one set of getters). */
const viewClasses = new WeakMap<RecordBuilder, new (t: TeamIndex, row: number) => Rec>();
const FAST_FIELDS = ['id', 'title', 'status', 'date_created', 'date_updated', 'project', 'account', 'user_created', 'download_ready', 'playback_id'];

/**
 * One getter per legacy field: a fast field reads its column (a render with an overlay reads the translator's record,
 * its id excepted); any other field reads the translator's record.
 */
function viewClass(builder: RecordBuilder): new (t: TeamIndex, row: number) => Rec {
  const known = viewClasses.get(builder);
  if (known) return known;
  class View implements RenderView {
    dc: string | null | undefined = undefined;
    du: string | null | undefined = undefined;
    constructor(readonly t: TeamIndex, readonly row: number) {}
  }
  for (const name of new Set([...builder.renderFields, ...FAST_FIELDS])) {
    let get: (this: View) => unknown;
    // the hottest fields read their column straight away
    if (name === 'id') get = function (this: View) { return this.t.c.uuids[this.row]; }; // (a uuid is never overlaid)
    else if (name === 'status') {
      get = function (this: View) {
        const t = this.t;
        const c = t.c;
        return ((c.flags[this.row] as number) & OVERLAY) !== 0 ? t.fullRecord(this.row).status : t.statusNames[c.status[this.row] as number];
      };
    } else if (name === 'title') {
      get = function (this: View) {
        const t = this.t;
        const c = t.c;
        return ((c.flags[this.row] as number) & OVERLAY) !== 0 ? t.fullRecord(this.row).title : c.names[this.row];
      };
    } else if (FAST_FIELDS.includes(name)) {
      get = function (this: View) {
        const t = this.t;
        return ((t.c.flags[this.row] as number) & OVERLAY) !== 0 ? t.fullRecord(this.row)[name] : t.fast[name]!(this.row);
      };
    } else get = function (this: View) { return this.t.fullRecord(this.row)[name]; };
    Object.defineProperty(View.prototype, name, { enumerable: true, get });
  }
  viewClasses.set(builder, View as unknown as new (t: TeamIndex, row: number) => Rec);
  return View as unknown as new (t: TeamIndex, row: number) => Rec;
}
