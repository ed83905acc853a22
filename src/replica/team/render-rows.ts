import { stateOf, supersedes as supersedesState } from '../../store/recency.js';
import type { RecordBuilder } from './records.js';
import { FINAL_STATUSES, RENDER_STATUSES, type RenderStatus, type V1Render } from '../../v1/schemas.js';
import { CLOUD, Codes, Columns, DOWNLOAD_READY, OVERLAY, PAIRED, REMOVED, rowBytes, STATUS_CODE, uuidHash } from './columns.js';
import { OutputCodec, type PackedOutput } from './output-codec.js';
import { RowTable } from '../../lib/row-table.js';
import { hashString } from '../../lib/text-column.js';

/** A render as the replica holds it, rebuilt as v1 showed it. */
export interface RenderEntry {
  readonly render: V1Render;
  readonly seenAt: number;
}

/** Status, times and output variants of a render (what the sync compares), and when v1 showed it. */
export interface RenderState { status: RenderStatus; updated: number; variants: string; seenAt: number }

/** What writing a render into its row did. */
export interface RowWrite {
  readonly row: number;
  /** The render is new to the team (a row was added). */
  readonly added: boolean;
  /** Its created_at changed (the newest-first order is built again). */
  readonly createdChanged: boolean;
}

/** The recency rule (src/store/recency.ts) on v1 renders. */
function supersedes(prev: Pick<V1Render, 'updated_at' | 'created_at' | 'status'> | undefined, next: V1Render): boolean {
  return supersedesState(prev ? stateOf(prev) : undefined, stateOf(next));
}

/**
 * One team's renders as rows of the columns: which row holds which render (by v1 id and by legacy uuid), a render
 * written into its row under the recency rule, and read back as v1 showed it. Rows are never renumbered: a dropped
 * project's rows are marked removed.
 */
export class RenderRows {
  readonly c = new Columns();
  readonly codes = new Codes();
  private readonly codec = new OutputCodec();
  /** v1 id → row, and legacy uuid → row (of live rows): hash tables over the columns' own ids and uuid keys. */
  private readonly rowOf = new RowTable<string>((row) => this.c.v1IdHash(row), (row, id) => this.c.v1IdIs(row, id), true);
  private readonly rowOfUuid = new RowTable<string>((row) => this.c.uuidHash(row), (row, uuid) => this.c.uuidIs(row, uuid));
  private readonly moving = new Set<number>();
  /** Rows marked removed. */
  removed = 0;
  /** Bumped whenever a render joins, moves between projects or leaves (the primary-key orders are built again). */
  membership = 0;
  /** A rough figure of the memory the rows hold. */
  bytes = 0;

  constructor(private readonly teamId: string, private readonly builder: RecordBuilder) {}

  /** Writes a render into its row unless the row holds a newer state of it; undefined when not written. */
  write(r: V1Render, seenAt: number): RowWrite | undefined {
    const idHash = hashString(r.id);
    const found = this.rowOf.find(idHash, r.id);
    const known = found < 0 ? undefined : found;
    if (known !== undefined && !supersedes(this.stateOf(known), r)) return undefined;
    const c = this.c;
    let i = known;
    if (i === undefined) {
      const imported = this.builder.importedUuid('render', r.id);
      i = c.add(r.id, imported ?? this.builder.uuid('render', r.id), imported !== undefined);
      this.rowOf.add(idHash, i);
      this.rowOfUuid.add(c.uuidHash(i), i);
    } else {
      this.bytes -= rowBytes(c.v1Id(i), c.title(i), c.outRest(i));
    }
    const project = this.codes.project(r.project.id);
    if (known !== undefined && c.project[i] !== project) {
      const rows = this.codes.projRows[c.project[i] as number] as number[];
      rows.splice(rows.indexOf(i), 1);
      (this.codes.projRows[project] as number[]).push(i);
      this.membership++;
    } else if (known === undefined) {
      (this.codes.projRows[project] as number[]).push(i);
      this.membership++;
    }
    const createdChanged = known !== undefined && c.created[i] !== r.created_at;
    c.setTitle(i, r.name);
    c.status[i] = STATUS_CODE.get(r.status) as number;
    c.project[i] = project;
    c.user[i] = this.codes.user(r.created_by);
    c.created[i] = r.created_at;
    c.updated.set(i, r.updated_at ?? Number.NaN);
    c.widen('created', r.created_at);
    if (r.updated_at !== null && r.updated_at !== undefined) c.widen('updated', r.updated_at);
    c.seen.set(i, seenAt);
    c.expires.set(i, Number.NaN);
    const out = this.codec.encode(r.id, r.output);
    c.shape[i] = out.shape;
    c.exp.set(i, out.exp);
    c.setOutRest(i, out.rest);
    let flags = (c.flags[i] as number) & PAIRED;
    if (this.builder.hasOverlay('render', r.id)) flags |= OVERLAY;
    if (r.type === 'cloud') flags |= CLOUD;
    if (this.builder.downloadReady(r)) flags |= DOWNLOAD_READY;
    c.flags[i] = flags;
    c.writes++;
    this.bytes += rowBytes(r.id, r.name, out.rest);
    if (FINAL_STATUSES.has(r.status)) this.moving.delete(i);
    else this.moving.add(i);
    return { row: i, added: known === undefined, createdChanged };
  }

  /** Marks a project's rows removed (gone from every map and count); the rows it marked. */
  drop(projectId: string): readonly number[] {
    const p = this.codes.projectCode(projectId);
    const rows = p === undefined ? [] : (this.codes.projRows[p] as number[]);
    if (rows.length === 0) return rows;
    const c = this.c;
    for (const i of rows) {
      c.flags[i] = (c.flags[i] as number) | REMOVED;
      this.rowOf.remove(c.v1IdHash(i), i);
      this.rowOfUuid.remove(c.uuidHash(i), i);
      this.moving.delete(i);
      this.bytes -= rowBytes(c.v1Id(i), c.title(i), c.outRest(i));
    }
    this.removed += rows.length;
    c.writes++;
    this.codes.projRows[p as number] = [];
    this.membership++;
    return rows;
  }

  /** Every live row's uuid and overlay flag read again (overlays or imported ids changed); no pair counts as handed. */
  reidentify(): void {
    const c = this.c;
    this.rowOfUuid.clear();
    for (let i = 0; i < c.size; i++) {
      if (((c.flags[i] as number) & REMOVED) !== 0) continue;
      const id = c.v1Id(i);
      const imported = this.builder.importedUuid('render', id);
      c.setUuid(i, imported ?? this.builder.uuid('render', id), imported !== undefined);
      this.rowOfUuid.add(c.uuidHash(i), i);
      const f = (c.flags[i] as number) & ~(OVERLAY | PAIRED);
      c.flags[i] = this.builder.hasOverlay('render', id) ? f | OVERLAY : f;
    }
    c.writes++;
  }

  /**
   * The overlay flag of these renders' rows read again (their overlays changed); their uuids stand — an overlay write
   * re-derived every render's uuid of every team, per item written (attack pass 14, H1: a 100-key PATCH froze an
   * instance of 40 000 renders 13–15 s).
   */
  reflag(v1Ids: Iterable<string>): boolean {
    const c = this.c;
    let held = false;
    for (const id of v1Ids) {
      const i = this.row(id);
      if (i === undefined || ((c.flags[i] as number) & REMOVED) !== 0) continue;
      held = true;
      const f = (c.flags[i] as number) & ~OVERLAY;
      c.flags[i] = this.builder.hasOverlay('render', id) ? f | OVERLAY : f;
    }
    if (held) c.writes++;
    return held;
  }

  /** Frees the columns' and look-ups' spare room (after a load or a backfill). */
  trim(): void {
    this.c.trim();
    this.rowOf.trim();
    this.rowOfUuid.trim();
  }

  row(v1Id: string): number | undefined {
    const i = this.rowOf.find(hashString(v1Id), v1Id);
    return i < 0 ? undefined : i;
  }

  rowOfRecord(uuid: string): number | undefined {
    const i = this.rowOfUuid.find(uuidHash(uuid), uuid);
    return i < 0 ? undefined : i;
  }

  liveRows(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.c.size; i++) if (((this.c.flags[i] as number) & REMOVED) === 0) out.push(i);
    return out;
  }

  /** Renders not yet final (their status may still change). */
  movingIds(): string[] {
    return [...this.moving].map((i) => this.c.v1Id(i));
  }

  /** The v1 id of an answered render whose pair was not handed to the id store yet (marked as handed now). */
  unpaired(uuid: string): string | undefined {
    const i = this.rowOfRecord(uuid);
    if (i === undefined || ((this.c.flags[i] as number) & PAIRED) !== 0) return undefined;
    this.c.flags[i] = (this.c.flags[i] as number) | PAIRED;
    return this.c.v1Id(i);
  }

  /** A render's pair is to be handed again when next answered. */
  unpair(v1Id: string): boolean {
    const i = this.row(v1Id);
    if (i === undefined) return false;
    this.c.flags[i] = (this.c.flags[i] as number) & ~PAIRED;
    return true;
  }

  // ------------------------------------------------------------------ v1 state (for the sync)

  private stateOf(i: number): Pick<V1Render, 'updated_at' | 'created_at' | 'status'> {
    const u = this.c.updated.get(i);
    const status = RENDER_STATUSES[this.c.status[i] as number] as RenderStatus;
    return { status, created_at: this.c.created[i] as number, updated_at: Number.isNaN(u) ? null : u };
  }

  private packed(i: number): PackedOutput {
    return { shape: this.c.shape[i] as number, exp: this.c.exp.get(i), rest: this.c.outRest(i) };
  }

  private updatedAt(i: number): number | null {
    const u = this.c.updated.get(i);
    return Number.isNaN(u) ? null : u;
  }

  /** The render of a row as v1 showed it. */
  v1(i: number): V1Render {
    const c = this.c;
    const id = c.v1Id(i);
    const r: V1Render = {
      id,
      name: c.title(i),
      status: RENDER_STATUSES[c.status[i] as number] as RenderStatus,
      type: ((c.flags[i] as number) & CLOUD) !== 0 ? 'cloud' : 'local',
      project: { id: this.codes.projIds[c.project[i] as number] as string, team: this.teamId },
      created_by: this.codes.userIds[c.user[i] as number] ?? null,
      created_at: c.created[i] as number,
      updated_at: this.updatedAt(i),
    };
    const output = this.codec.decode(id, this.packed(i));
    if (output) r.output = output;
    return r;
  }

  /** A render as v1 last showed it, and when. */
  render(v1Id: string): RenderEntry | undefined {
    const i = this.row(v1Id);
    return i === undefined ? undefined : { render: this.v1(i), seenAt: this.c.seen.get(i) };
  }

  /** Status, times and output variants of a render (what the sync compares), without rebuilding its URLs. */
  renderState(v1Id: string): RenderState | undefined {
    const i = this.row(v1Id);
    if (i === undefined) return undefined;
    const s = this.stateOf(i);
    const variants = this.codec.variantsKey(this.packed(i));
    return { status: s.status, updated: s.updated_at ?? s.created_at, variants, seenAt: this.c.seen.get(i) };
  }

  /** When a render's output URLs expire: read once per state held (`compute` reads them from the URLs). */
  expiryOf(v1Id: string, compute: (r: V1Render, seenAt: number) => number): number | undefined {
    const i = this.row(v1Id);
    return i === undefined ? undefined : this.expiryAt(i, compute);
  }

  /** `expiryOf` by row. */
  expiryAt(i: number, compute: (r: V1Render, seenAt: number) => number): number {
    let t = this.c.expires.get(i);
    if (Number.isNaN(t)) this.c.expires.set(i, (t = compute(this.v1(i), this.c.seen.get(i))));
    return t;
  }

  /** Whether a row's render answers an output (complete, with output URLs): what a refresh looks at, without building it. */
  hasOutputAt(i: number): boolean {
    return RENDER_STATUSES[this.c.status[i] as number] === 'complete' && this.c.shape[i] !== -1;
  }
}
