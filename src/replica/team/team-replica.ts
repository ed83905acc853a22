import type { Rec } from '../../query/compile.js';
import { traitsOf } from '../../query/resources.js';
import type { BackfillState, ProjectRow, RenderRow, TeamRow } from '../../store/replica-rows.js';
import type { V1Render, V1Team, V1TeamMember } from '../../v1/schemas.js';
import type { RenderColumns } from './column-filter.js';
import { HeadMarks } from './head-marks.js';
import { RenderRecords } from './record-view.js';
import type { RecordBuilder } from './records.js';
import { RenderOrders } from './render-orders.js';
import { RenderRows, type RenderEntry, type RenderState } from './render-rows.js';
import { TeamRecords, type ProjectEntry } from './team-records.js';

/** Whether a team's webhooks are trusted (`sync/receiver-health.ts` answers it). */
export interface WebhookTrust {
  /** The team's webhooks are registered and no delivery of it may have been lost since its last catch-up. */
  trusted(teamId: string, now: number): boolean;
  /** Deliveries of the team may have been lost since its last catch-up: its last delivery says nothing of its freshness. */
  pending(teamId: string, now: number): boolean;
}

/** The process-wide sequence of replica versions (see `TeamReplica.version`). */
let changeSeq = 0;
const nextChange = () => ++changeSeq;

/** What a refresh of signed URLs reads of a render's row (`TeamReplica.outputOf`). */
export interface OutputFacts { readonly row: number; readonly projectId: string; readonly expiresAt: number; readonly seenAt: number }

/**
 * One team of the replica in memory: the team, members, projects and templates as v1 objects; its renders as rows of
 * typed columns (`RenderRows`, a few hundred bytes a render), read as legacy records through views of them
 * (`RenderRecords`), in kept orders (`RenderOrders`); the records of its projects, templates and account
 * (`TeamRecords`). Pure data: the sync and the readers do the I/O.
 */
export class TeamReplica {
  team: V1Team;
  members: readonly V1TeamMember[];
  state: BackfillState;
  backfilledAt: number | null;
  syncedAt: number | null;
  webhookAt: number | null;
  /** Whether the team's webhooks are trusted (`webhook-trust.ts`): set by the registry; null, never (no replica service). */
  trust: WebhookTrust | null = null;
  /** When a legacy request last read the team (background syncs run for teams being read). */
  readAt = 0;
  /**
   * The store's change mark this copy holds every render change before (`ReplicaStore.changeMark`): a lost change bus is
   * caught up from it (`catch-up.ts`). Null: unknown (a team adopted empty), read whole again instead.
   */
  changeMark: number | null = null;
  readonly projects = new Map<string, ProjectEntry>();
  /** Moves when a project is added or dropped (not when one is seen again): which projects the team has. */
  projectSet = 0;
  private readonly marks = new HeadMarks();
  private readonly rows: RenderRows;
  private readonly records: RenderRecords;
  private readonly orders: RenderOrders;
  private readonly teamRecords: TeamRecords;
  private changes = nextChange();

  constructor(row: TeamRow, builder: RecordBuilder) {
    this.team = row.team;
    this.members = row.members;
    this.state = row.state;
    this.backfilledAt = row.backfilledAt;
    this.syncedAt = row.syncedAt;
    this.webhookAt = row.webhookAt;
    this.rows = new RenderRows(row.team.id, builder);
    this.records = new RenderRecords(this.rows, row.team.id, builder, this);
    this.orders = new RenderOrders(this.rows);
    this.teamRecords = new TeamRecords(builder, this);
  }

  get id(): string {
    return this.team.id;
  }

  /**
   * Moves on every change an answer can show (a render, a project or template, the team and its members, data,
   * overlays or imported ids): an answer computed at one version is the answer at that version (the answer cache).
   * Versions come from one process-wide sequence: a team read back from the store (a new TeamReplica) never repeats a
   * version an earlier copy of it had.
   */
  get version(): number {
    return this.changes;
  }

  get size(): number {
    return this.rows.c.size - this.rows.removed;
  }

  /** A rough figure of the memory the team's replica holds (for INDEX_MEMORY_MB), its titles' search layouts included. */
  get approxBytes(): number {
    return this.rows.bytes + this.rows.c.titles.scanBytes;
  }

  setRow(row: TeamRow): void {
    if (JSON.stringify(row.team) !== JSON.stringify(this.team) || JSON.stringify(row.members) !== JSON.stringify(this.members)) {
      this.team = row.team;
      this.members = row.members;
      this.teamRecords.accountChanged();
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
    if (!prev) this.projectSet++;
    const templates = row.templates ?? prev?.templates ?? null;
    const sameThumb = prev && prev.project.thumbnail_url === row.project.thumbnail_url;
    this.projects.set(row.project.id, {
      project: row.project, templates, backfilled: row.backfilled || !!prev?.backfilled, seenAt: sameThumb ? prev.seenAt : seenAt,
    });
    this.projectsChanged();
    if (row.headMark !== undefined && row.headMark !== null) {
      this.setHeadMark(row.project.id, row.headMark);
      this.storedMarks.set(row.project.id, row.headMark);
    }
    // a render's output falls back to its project's thumbnail
    if (!prev || prev.project.thumbnail_url !== row.project.thumbnail_url) this.records.clearFull();
  }

  /**
   * Forgets a project and its renders. Their rows stay in the columns, marked removed (row numbers never change, so a
   * record a reader holds keeps reading its own render); they are gone from every map, order and count, and the
   * columns are compacted when the team is next read back from the store.
   */
  dropProject(projectId: string): void {
    if (this.projects.delete(projectId)) this.projectSet++;
    this.marks.drop(projectId);
    this.projectsChanged();
    const rows = this.rows.drop(projectId);
    if (rows.length === 0) return;
    this.records.removed(rows);
    this.orders.reset();
  }

  private projectsChanged(): void {
    this.changes = nextChange();
    this.teamRecords.projectsChanged();
  }

  /** Applies a render unless the replica holds a newer state of it; true when applied. */
  apply(r: V1Render, seenAt: number): boolean {
    const w = this.rows.write(r, seenAt);
    if (!w) return false;
    if (w.added) {
      this.records.add();
      this.orders.place(w.row);
      this.marks.created(r.project.id, r.created_at);
    } else if (w.createdChanged) this.orders.reset();
    this.records.changed(w.row);
    this.orders.moved(w.row, w.added);
    this.changes = nextChange();
    return true;
  }

  load(rows: readonly RenderRow[]): void {
    for (const row of rows) this.apply(row.render, row.seenAt);
  }

  /** Frees the columns' spare capacity (after a load or a backfill). */
  compact(): void {
    this.rows.trim();
  }

  /**
   * The data the gateway sent for these renders was written (or may have been, unseen): the replica holds none of it
   * (a read reads it from the store), but what it kept of their answered records is made again, and answers move on.
   */
  dataChanged(v1Ids: readonly string[]): void {
    let any = false;
    for (const id of v1Ids) {
      const i = this.rows.row(id);
      if (i === undefined) continue;
      this.records.forget(i);
      any = true;
    }
    if (any) this.changes = nextChange();
  }

  /** Every legacy record is built again on next use (overlays or imported ids changed). */
  invalidateRecords(): void {
    this.rows.reidentify();
    this.recordsChanged();
  }

  /**
   * The overlays changed (`renders`: the v1 ids of the renders whose own overlays did; `others`: a project's or an
   * account's did too): those rows' flags are read again and every record built from the overlays is built anew; uuids
   * stand.
   */
  overlaysChanged(renders: Iterable<string>, others = true): void {
    // (only other teams' renders changed: nothing of this team is built from them)
    if (!this.rows.reflag(renders) && !others) return;
    this.recordsChanged();
  }

  private recordsChanged(): void {
    this.records.clearRelated();
    this.orders.resetAll();
    this.teamRecords.accountChanged();
    this.records.clearFull();
    this.projectsChanged();
  }

  /** Pairs a failed write lost: renders' are given again when next answered, and the cached related uuids are asked again. */
  forgetPaired(type: string, v1Id: string): void {
    if (!traitsOf(type).rows) this.records.clearRelated();
    else if (!this.rows.unpair(v1Id)) return;
    // a kept answer is not read again, so it would not give the pair again: the next read is computed
    this.changes = nextChange();
  }

  // ------------------------------------------------------------------ v1 state (for the sync)

  /** A render as v1 last showed it, and when. */
  render(v1Id: string): RenderEntry | undefined { return this.rows.render(v1Id); }
  renderState(v1Id: string): RenderState | undefined { return this.rows.renderState(v1Id); }
  expiryOf(v1Id: string, compute: (r: V1Render, seenAt: number) => number): number | undefined { return this.rows.expiryOf(v1Id, compute); }
  has(v1Id: string): boolean { return this.rows.row(v1Id) !== undefined; }
  movingIds(): string[] { return this.rows.movingIds(); }
  head(projectId: string): number | null { return this.orders.head(projectId); }
  projectRenderIds(projectId: string): string[] { return this.orders.projectRenderIds(projectId); }

  /**
   * What a refresh of signed URLs looks at of an answered render, found by its legacy uuid (one look-up): its row, its
   * project, when its output URLs expire and when v1 showed them. Undefined when the team does not hold the render;
   * null when the render answers no output.
   */
  outputOf(uuid: string, compute: (r: V1Render, seenAt: number) => number): OutputFacts | null | undefined {
    const i = this.rows.rowOfRecord(uuid);
    if (i === undefined) return undefined;
    if (!this.rows.hasOutputAt(i)) return null;
    return { row: i, projectId: this.projectOfRow(i), expiresAt: this.rows.expiryAt(i, compute), seenAt: this.rows.c.seen.get(i) };
  }

  /** The v1 project id of a render. */
  projectOf(v1Id: string): string | undefined { const i = this.rows.row(v1Id); return i === undefined ? undefined : this.projectOfRow(i); }

  /** The newest created_at of a project as of the last walk of its list that completed (the newest known before any). */
  headMark(projectId: string): number | null { return this.marks.get(projectId, () => this.head(projectId)); }
  setHeadMark(projectId: string, at: number | null): void { this.marks.set(projectId, at); }
  /** The team's projects active at `now` (a render created in them within `windowMs`), and when the first turns quiet. */
  activeProjects(now: number, windowMs: number): { readonly ids: Set<string>; readonly until: number } {
    return this.marks.active(this.projects.keys(), now, windowMs);
  }
  /** The head marks the store holds (read with the projects, or written by this instance's syncs). */
  get storedMarks(): Map<string, number> { return this.marks.stored; }

  // ------------------------------------------------------------------ legacy records (for readers)

  newestFirst(): readonly number[] { return this.orders.newestFirst(); }
  /** The newest-first order; a large team's sorted a slice at a time the first time. */
  newestFirstReady(): Promise<readonly number[]> { return this.orders.newestFirstReady(); }
  /** The render columns, as questions answered without records read them. */
  renderColumns(): RenderColumns { return this.records; }
  /** Live rows in a query's order (`name` naming it, `cmp` comparing rows by it), kept as renders change. */
  sortedRows(name: string, cmp: (a: number, b: number) => number): readonly number[] | undefined {
    // (a large team's new order is sorted a slice at a time, each slice with its views kept)
    const kept = <R>(f: () => R): R => this.records.viewsKept(f);
    return kept(() => this.orders.sortedBy(name, cmp, kept));
  }
  /** The same order, one being sorted waited for (undefined: its sort was dropped, rows removed meanwhile). */
  sortedRowsReady(name: string, cmp: (a: number, b: number) => number): Promise<readonly number[] | undefined> {
    const kept = <R>(f: () => R): R => this.records.viewsKept(f);
    return kept(() => this.orders.sortedByReady(name, cmp, kept));
  }
  /** A project's rows (read, not copied; empty when none). */
  projectRows(projectId: string): readonly number[] { return this.rows.codes.rowsOf(projectId); }
  /** The v1 project id of a row (the newest-first walk's project scope). */
  projectOfRow(row: number): string { return this.rows.codes.projIds[this.rows.c.project[row] as number] as string; }
  idOfRow(row: number): string { return this.rows.c.v1Id(row); }
  view(row: number): Rec { return this.records.view(row); }
  renderRecords(): readonly Rec[] { return this.records.all(); }
  rendersOfProject(projectId: string): Rec[] { return this.rows.codes.rowsOf(projectId).map((i) => this.records.view(i)); }
  rendersByKey(projectId: string | null, n: number): Rec[] { return this.orders.rendersByKey(projectId, n, (i) => this.records.view(i)); }

  renderRecord(v1Id: string): Rec | undefined { const i = this.rows.row(v1Id); return i === undefined ? undefined : this.records.view(i); }
  /** The v1 id of an answered render whose uuid ↔ v1 pair was not handed to the id store yet (marked as handed now). */
  unpaired(uuid: string): string | undefined { return this.rows.unpaired(uuid); }

  /** The v1 id of a render uuid of this team. */
  renderV1(uuid: string): string | undefined { const i = this.rows.rowOfRecord(uuid); return i === undefined ? undefined : this.rows.c.v1Id(i); }

  projectRecords(): Rec[] { return this.teamRecords.projectRecords(); }
  projectV1(uuid: string): string | undefined { return this.teamRecords.projectV1(uuid); }
  projectRecord(v1Id: string): Rec | undefined { return this.teamRecords.projectRecord(v1Id); }
  templateRecords(): Rec[] { return this.teamRecords.templateRecords(); }
  template(uuid: string): { rec: Rec; projectId: string } | undefined { return this.teamRecords.template(uuid); }
  accountRecord(): Rec { return this.teamRecords.accountRecord(); }
  projectsByKey(n: number): Rec[] { return this.teamRecords.projectsByKey(n); }
}
