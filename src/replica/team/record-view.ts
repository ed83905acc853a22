import type { Rec } from '../../query/compile.js';
import { RENDER_STATUSES, type V1Project } from '../../v1/schemas.js';
import { DOWNLOAD_READY, OVERLAY, type Columns } from './columns.js';
import type { RenderColumns } from './column-filter.js';
import type { RecordBuilder } from './records.js';
import type { RenderRows } from './render-rows.js';
import { dataAtHand, renderDataOf } from '../../translate/data-at-hand.js';
import { ShapedRecords } from './shaped-records.js';

/**
 * What a full record is built from besides the render's row: the render's project. (Not the data the gateway sent: the
 * replica does not hold it; a view reads it from the evaluation's hand, `data-at-hand.ts`.)
 */
export interface ViewInputs {
  readonly projects: ReadonlyMap<string, { readonly project: V1Project }>;
}

/**
 * A legacy render read from the replica's columns: the fields a scan tests (status, dates, ids, title) come straight
 * from them; the rest (output, data, process_id, and every field of a render with an overlay) from the record the
 * translator builds, made on demand and not kept.
 */
export interface RenderView {
  readonly t: RenderRecords;
  readonly row: number;
  /** The team's records' version the kept values below were read at (they are read again once it moves). */
  at: number;
  /** id, title, date_created, date_updated as answered, kept once read (sorts compare them often). */
  u: string | undefined;
  ti: string | undefined;
  dc: string | null | undefined;
  du: string | null | undefined;
}

/** Full records a team keeps built (about 2 kB each): a hot page or two of every list. */
const FULL_RECORDS_KEPT = 256;

/**
 * One team's legacy render records, a view of a row of its columns each. Views are made when asked for and not held
 * (a view is a few words; holding one a row cost more than the row's columns): while a sort runs, a row's view is
 * made once (`viewsKept`). Ids, title, status and the other fast fields
 * are read from the columns (as the translator would answer them); any other field, and every field of a render with
 * an overlay, from the translator's record, built on demand (the last few kept).
 */
export class RenderRecords implements RenderColumns {
  /** @internal */ readonly c: Columns;
  /** The legacy status of each v1 status code. */
  /** @internal */ readonly statusNames: readonly unknown[];
  /** The views made while a sort runs (a row's view made once a sort), else null. */
  private kept: Map<number, Rec> | null = null;
  /** Moves whenever a row changes (what a view keeps is read again). */
  version = 0;
  private readonly View: new (t: RenderRecords, row: number) => Rec;
  // the related uuids a view answers (project, creator, account), asked once
  private projUuids: (string | undefined)[] = [];
  private userUuids: (string | null | undefined)[] = [];
  private accountUuid: string | undefined;
  /**
   * Full records built lately, by row, least recently used first (a projection reads a record's fields one after
   * another, and a hot list answers the same renders again); a row leaves it whenever it changes.
   */
  private readonly fullCache = new Map<number, Rec>();
  /** Records as answered (projected, with their JSON text), by row; a row leaves whenever its full record does. */
  private readonly shapedCache = new ShapedRecords();

  constructor(
    private readonly rows: RenderRows, private readonly teamId: string, private readonly builder: RecordBuilder,
    private readonly inputs: ViewInputs,
  ) {
    this.c = rows.c;
    this.View = viewClass(builder);
    this.statusNames = RENDER_STATUSES.map((x) => builder.status(x));
  }

  /** A row was added. */
  add(): void {
    this.version++;
  }

  /** A row changed: its full record and what its views keep are read again. */
  changed(row: number): void {
    this.fullCache.delete(row);
    this.shapedCache.forget(row);
    this.version++;
  }

  /** A row's full record is built again on next use (its data changed, or it was removed). */
  forget(row: number): void {
    this.fullCache.delete(row);
    this.shapedCache.forget(row);
  }

  /** Rows were removed. */
  removed(rows: readonly number[]): void {
    for (const i of rows) {
      this.fullCache.delete(i);
      this.shapedCache.forget(i);
    }
    this.version++;
  }

  /** Every full record is built again (a thumbnail its outputs fall back to changed). */
  clearFull(): void {
    this.fullCache.clear();
    this.shapedCache.clear();
  }

  /** The related uuids are asked again (imported ids, or pairs a failed write lost). */
  clearRelated(): void {
    this.projUuids = [];
    this.userUuids = [];
    this.accountUuid = undefined;
    this.shapedCache.clear();
    this.version++;
  }

  /** The legacy record of a row. */
  view(row: number): Rec {
    const kept = this.kept;
    if (kept === null) return new this.View(this, row);
    let v = kept.get(row);
    if (v === undefined) kept.set(row, (v = new this.View(this, row)));
    return v;
  }

  /** Runs `f` with each row's view made at most once (a sort compares records many times, reading their fields). */
  viewsKept<T>(f: () => T): T {
    if (this.kept !== null) return f();
    this.kept = new Map();
    try {
      return this.c.uuidsKept(f);
    } finally {
      this.kept = null;
    }
  }

  /** Every live render record (made now: a new array). */
  all(): readonly Rec[] {
    const c = this.c;
    const out: Rec[] = [];
    if (this.rows.removed === 0) for (let i = 0; i < c.size; i++) out.push(new this.View(this, i));
    else for (const i of this.rows.liveRows()) out.push(new this.View(this, i));
    return out;
  }

  /** The live row whose uuid is `uuid`. */
  rowOfUuid(uuid: string): number | undefined {
    return this.rows.rowOfRecord(uuid);
  }

  /** The legacy status a record without an overlay shows for a status code of the columns. */
  status(code: number): unknown {
    return this.statusNames[code];
  }

  /** The project uuid a record without an overlay shows for a project code of the columns. */
  project(p: number): string {
    let u = this.projUuids[p];
    if (u === undefined) this.projUuids[p] = u = this.builder.legacyId('project', this.rows.codes.projIds[p] as string);
    return u;
  }

  /** The creator uuid (or null) a record without an overlay shows for a creator code of the columns. */
  user(k: number): string | null {
    let u = this.userUuids[k];
    if (u === undefined) {
      const id = this.rows.codes.userIds[k] ?? null;
      this.userUuids[k] = u = id === null ? null : this.builder.legacyId('user', id);
    }
    return u;
  }

  /** The account uuid every render of the team shows. */
  account(): string {
    this.accountUuid ??= this.builder.legacyId('account', this.teamId);
    return this.accountUuid;
  }

  /** A v1 time as records answer it. */
  iso(t: number | null): string | null {
    return this.builder.iso(t);
  }

  /**
   * A row's record as answered by a selection that reads the record alone (`key` naming it; `make` projects it): kept,
   * frozen and with its JSON text, until the row changes.
   */
  shaped(row: number, key: string, make: () => unknown, whole: () => boolean = () => true): unknown {
    // an item made while render data was missing from the hand is made again once it is read: not kept (nor one made in
    // a round that stopped short: `whole`)
    const hand = dataAtHand();
    const before = hand?.misses ?? 0;
    return this.shapedCache.get(row, key, make, () => (hand?.misses ?? 0) === before && whole());
  }

  /**
   * @internal An overlaid row's kept field values: a fast field reads its value there, else its column — never the
   * whole record (built for each test past FULL_RECORDS_KEPT overlaid rows, a uuid v5 and dates each: a relational
   * filter over 2 000 overlaid titles held an instance seconds a round, attack pass 14's re-check).
   */
  overlaid(row: number): Readonly<Record<string, unknown>> | undefined {
    return this.builder.overlayOf('render', this.c.v1Id(row));
  }

  /** @internal */ fullRecord(row: number): Rec {
    const hit = this.fullCache.get(row);
    if (hit) {
      this.fullCache.delete(row);
      this.fullCache.set(row, hit);
      return hit;
    }
    const r = this.rows.v1(row);
    // (its data is read by the view from the hand, never from this record)
    const rec = this.builder.render(r, {}, this.inputs.projects.get(r.project.id)?.project);
    if (this.fullCache.size >= FULL_RECORDS_KEPT) this.fullCache.delete(this.fullCache.keys().next().value as number);
    this.fullCache.set(row, rec);
    return rec;
  }

  /**
   * @internal The scan fields of a view, read from the columns (what the translator would answer); id, title and status
   * are read by their getters straight from the columns (viewClass).
   */
  readonly fast: Readonly<Record<string, (row: number, v: RenderView) => unknown>> = {
    date_created: (row, v) => {
      if (v.at !== this.version) fresh(v);
      if (v.dc === undefined) v.dc = this.builder.iso(this.c.created[row] as number);
      return v.dc;
    },
    date_updated: (row, v) => {
      if (v.at !== this.version) fresh(v);
      if (v.du === undefined) {
        const u = this.c.updated.get(row);
        v.du = this.builder.iso(Number.isNaN(u) ? null : u);
      }
      return v.du;
    },
    project: (row) => this.project(this.c.project[row] as number),
    account: () => this.account(),
    user_created: (row) => this.user(this.c.user[row] as number),
    download_ready: (row) => ((this.c.flags[row] as number) & DOWNLOAD_READY) !== 0,
    playback_id: () => null,
  };
}

/** A view's kept values forgotten (its team's records moved since they were read). */
function fresh(v: RenderView): void {
  v.at = v.t.version;
  v.u = undefined;
  v.ti = undefined;
  v.dc = undefined;
  v.du = undefined;
}

/** The record class of the renders (one per builder: every team's views share one shape and one set of getters). */
const viewClasses = new WeakMap<RecordBuilder, new (t: RenderRecords, row: number) => Rec>();
const FAST_FIELDS = ['id', 'title', 'status', 'date_created', 'date_updated', 'project', 'account', 'user_created', 'download_ready', 'playback_id'];

/**
 * One getter per legacy field: a fast field reads its column (a render with an overlay reads the overlay's value for
 * the fields it keeps); any other field reads the translator's record.
 */
function viewClass(builder: RecordBuilder): new (t: RenderRecords, row: number) => Rec {
  const known = viewClasses.get(builder);
  if (known) return known;
  class View implements RenderView {
    at: number;
    u: string | undefined = undefined;
    ti: string | undefined = undefined;
    dc: string | null | undefined = undefined;
    du: string | null | undefined = undefined;
    constructor(readonly t: RenderRecords, readonly row: number) {
      this.at = t.version;
    }
  }
  for (const name of new Set([...builder.renderFields, ...FAST_FIELDS])) {
    let get: (this: View) => unknown;
    // the hottest fields read their column straight away
    if (name === 'id') {
      // (a uuid is never overlaid; deriving it is a SHA-1: a view keeps it)
      get = function (this: View) {
        if (this.at !== this.t.version) fresh(this);
        this.u ??= this.t.c.uuid(this.row);
        return this.u;
      };
    }
    else if (name === 'data') {
      // the data the gateway sent: read from the evaluation's hand (never held by the replica)
      get = function (this: View) {
        return renderDataOf(this.t.c.v1Id(this.row));
      };
    } else if (name === 'status') {
      get = function (this: View) {
        const t = this.t;
        const c = t.c;
        if (((c.flags[this.row] as number) & OVERLAY) !== 0) {
          const o = t.overlaid(this.row);
          if (o && Object.hasOwn(o, 'status')) return o.status;
        }
        return t.statusNames[c.status[this.row] as number];
      };
    } else if (name === 'title') {
      get = function (this: View) {
        const t = this.t;
        const c = t.c;
        if (((c.flags[this.row] as number) & OVERLAY) !== 0) {
          const o = t.overlaid(this.row);
          if (o && Object.hasOwn(o, 'title')) return o.title;
        }
        if (this.at !== t.version) fresh(this);
        this.ti ??= c.title(this.row);
        return this.ti;
      };
    } else if (FAST_FIELDS.includes(name)) {
      get = function (this: View) {
        const t = this.t;
        if (((t.c.flags[this.row] as number) & OVERLAY) !== 0) {
          const o = t.overlaid(this.row);
          if (o && Object.hasOwn(o, name)) return o[name];
        }
        return t.fast[name]!(this.row, this);
      };
    } else get = function (this: View) { return this.t.fullRecord(this.row)[name]; };
    Object.defineProperty(View.prototype, name, { enumerable: true, get });
  }
  viewClasses.set(builder, View as unknown as new (t: RenderRecords, row: number) => Rec);
  return View as unknown as new (t: RenderRecords, row: number) => Rec;
}
