import { IdColumn } from '../../lib/id-column.js';
import { hashString, TextColumn } from '../../lib/text-column.js';
import { TimeColumn } from '../../lib/time-column.js';
import { derivedUuid } from '../../translate/ids.js';
import { RENDER_STATUSES } from '../../v1/schemas.js';

/** The code of each v1 render status in the status column. */
export const STATUS_CODE = new Map(RENDER_STATUSES.map((s, i) => [s, i]));

// the flags column
export const CLOUD = 1;
export const OVERLAY = 2;
export const DOWNLOAD_READY = 4;
/** The render's uuid ↔ v1 pair has been handed to the id store (answered once). */
export const PAIRED = 8;
/** The render's project is gone: the row is kept only for records readers still hold. */
export const REMOVED = 16;

export const ordered = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Derived uuids a team keeps at most between two clearings (`Columns.uuid`). */
const RECENT_UUIDS = 1024;

/**
 * About what a row costs (bench:replica-memory measures it): its typed columns (~40 bytes), its v1 id (hex digits
 * packed two to a byte) and its title and packed output in arenas (a byte a character, + 4-8 bytes each), the two
 * look-ups (~12), its place in its project's rows and in the kept orders (8 each), and malloc's own share.
 */
export function rowBytes(v1Id: string, name: string, rest: string | null): number {
  return 96 + (v1Id.length >> 1) + name.length + (rest?.length ?? 0);
}

/**
 * The first eight hex digits of a uuid as a number (-1 when they are not lowercase hex): two uuids whose keys differ
 * compare as their keys do, and the key is the uuid's hash in the look-up by uuid.
 */
export function uuidKey(s: string): number {
  let k = 0;
  for (let i = 0; i < 8; i++) {
    const ch = s.charCodeAt(i);
    const d = ch >= 48 && ch <= 57 ? ch - 48 : ch >= 97 && ch <= 102 ? ch - 87 : -1;
    if (d < 0) return -1;
    k = k * 16 + d;
  }
  return k;
}

/** The hash of a uuid in the look-up by uuid (its key; a uuid without one, its string's hash). */
export function uuidHash(s: string): number {
  const k = uuidKey(s);
  return k >= 0 ? k : hashString(s);
}

/**
 * Growable typed columns, a row a render (capacity doubles; trimmed once a load is done). Strings are not held as JS
 * strings: v1 ids (`IdColumn`: hex digits packed), titles and the packed outputs (`TextColumn`) are bytes in arenas; a uuid is not held at all but
 * derived from the v1 id (UUID v5) when read, except an imported one (a small map); its first eight hex digits are
 * kept (`ukey`) to order and find uuids without deriving them. Times other than `created` are 4-byte offsets while they
 * fit (`TimeColumn`).
 */
export class Columns {
  size = 0;
  /** Moves whenever a row's status, flags or liveness may have changed (what counts kept per status are valid for). */
  writes = 0;
  status = new Uint8Array(64);
  flags = new Uint8Array(64);
  project = new Int32Array(64);
  user = new Int32Array(64);
  shape = new Int16Array(64);
  created = new Float64Array(64);
  /** The first eight hex digits of each row's uuid (see `uuidKey`; rows in `unkeyed` have none). */
  ukey = new Uint32Array(64);
  readonly updated = new TimeColumn(64);
  readonly seen = new TimeColumn(64);
  readonly exp = new TimeColumn(64);
  readonly expires = new TimeColumn(64);
  private readonly ids = new IdColumn();
  private readonly names = new TextColumn();
  private readonly rests = new TextColumn();
  /** Rows whose uuid is imported (not the one derived from their v1 id). */
  private readonly imported = new Map<number, string>();
  /** Rows whose uuid has no key (an imported uuid not in lowercase hex). */
  private readonly unkeyed = new Set<number>();
  /** Uuids derived while a sort runs (each row's SHA-1 once a sort), else null. */
  private memo: Map<number, string> | null = null;
  /**
   * The uuids derived most recently (a row's v1 id never changes, so neither does its derived uuid): a row answered is
   * looked up by its uuid several times (its team, its state, its pair, its signed URLs), each a SHA-1 without this.
   * At most RECENT_UUIDS a team, emptied when full.
   */
  private readonly recent = new Map<number, string>();
  /** The least and greatest time each date column ever held (a question on dates halves between them). */
  readonly span = { created: [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY], updated: [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY] };

  /** A new row for a render (its title and output set by the caller): its number. */
  add(v1Id: string, uuid: string, imported: boolean): number {
    this.grow();
    const row = this.size++;
    this.ids.push(v1Id);
    this.setUuid(row, uuid, imported);
    return row;
  }

  /** The v1 id of a row. */
  v1Id(row: number): string {
    return this.ids.get(row) as string;
  }

  /** Whether a row's v1 id is `id` (compared in place). */
  v1IdIs(row: number, id: string): boolean {
    return this.ids.get(row) === id;
  }

  /** `hashString` of a row's v1 id. */
  v1IdHash(row: number): number {
    return hashString(this.ids.get(row));
  }

  /** The legacy uuid of a row: its imported uuid, else derived from its v1 id. */
  uuid(row: number): string {
    if (this.imported.size > 0) {
      const u = this.imported.get(row);
      if (u !== undefined) return u;
    }
    const m = this.memo;
    if (m === null) {
      let r = this.recent.get(row);
      if (r === undefined) {
        if (this.recent.size >= RECENT_UUIDS) this.recent.clear();
        this.recent.set(row, (r = derivedUuid('render', this.v1Id(row))));
      }
      return r;
    }
    let u = m.get(row);
    if (u === undefined) m.set(row, (u = derivedUuid('render', this.v1Id(row))));
    return u;
  }

  /** Whether a row's uuid is `uuid` (its key compared first: most rows are told apart without deriving theirs). */
  uuidIs(row: number, uuid: string): boolean {
    const k = uuidKey(uuid);
    if (k >= 0 && (this.unkeyed.size === 0 || !this.unkeyed.has(row)) && this.ukey[row] !== k) return false;
    return this.uuid(row) === uuid;
  }

  /** `uuidHash` of a row's uuid. */
  uuidHash(row: number): number {
    return this.unkeyed.size > 0 && this.unkeyed.has(row) ? hashString(this.uuid(row)) : (this.ukey[row] as number);
  }

  /** Two rows' uuids compared as strings (by their keys when they differ). */
  compareUuids(a: number, b: number): number {
    if (this.unkeyed.size === 0 || (!this.unkeyed.has(a) && !this.unkeyed.has(b))) {
      const ka = this.ukey[a] as number;
      const kb = this.ukey[b] as number;
      if (ka !== kb) return ka < kb ? -1 : 1;
    }
    return ordered(this.uuid(a), this.uuid(b));
  }

  /** Runs `f` with each row's uuid derived at most once (a sort compares uuids many times). */
  uuidsKept<T>(f: () => T): T {
    if (this.memo !== null) return f();
    this.memo = new Map();
    try {
      return f();
    } finally {
      this.memo = null;
    }
  }

  setUuid(row: number, uuid: string, imported: boolean): void {
    if (imported) this.imported.set(row, uuid);
    else this.imported.delete(row);
    const k = uuidKey(uuid);
    if (k < 0) this.unkeyed.add(row);
    else {
      this.unkeyed.delete(row);
      this.ukey[row] = k;
    }
  }

  /** The titles as bytes (what text tests read without making strings). */
  get titles(): TextColumn {
    return this.names;
  }

  /** The title (v1 name) of a row. */
  title(row: number): string {
    return this.names.get(row) as string;
  }

  setTitle(row: number, name: string): void {
    this.names.set(row, name);
  }

  /** The varying part of a row's output as the output codec packed it (null: none). */
  outRest(row: number): string | null {
    return this.rests.get(row);
  }

  setOutRest(row: number, rest: string | null): void {
    this.rests.set(row, rest);
  }

  /** Bytes the columns hold (typed arrays and arenas; the imported uuids roughly). */
  get bytes(): number {
    const cap = this.status.length;
    const fixed = cap * (1 + 1 + 4 + 4 + 2 + 8 + 4 + this.updated.width + this.seen.width + this.exp.width + this.expires.width);
    return fixed + this.ids.bytes + this.names.bytes + this.rests.bytes + (this.imported.size + this.unkeyed.size) * 120;
  }

  /** A date column holds a time (its span widens to it; NaN, no time, is not one). */
  widen(which: 'created' | 'updated', t: number): void {
    const s = this.span[which];
    if (t < (s[0] as number)) s[0] = t;
    if (t > (s[1] as number)) s[1] = t;
  }

  grow(): void {
    if (this.size < this.status.length) return;
    this.resize(this.status.length * 2);
  }

  /**
   * Frees the spare room of the arenas' offsets (after a load). The typed columns are not copied smaller: their spare
   * rows were never written (a new array's pages are not resident until written), and the larger copy freed would stay
   * a hole in malloc's heap (bench:replica-memory: ~35 B of RSS a render more with them trimmed).
   */
  trim(): void {
    this.ids.trim();
    this.names.trim();
    this.rests.trim();
  }

  private resize(n: number): void {
    const re = <T extends Uint8Array | Int16Array | Int32Array | Uint32Array | Float64Array>(a: T, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a.subarray(0, Math.min(this.size, n)));
      return b;
    };
    this.status = re(this.status, (k) => new Uint8Array(k));
    this.flags = re(this.flags, (k) => new Uint8Array(k));
    this.project = re(this.project, (k) => new Int32Array(k));
    this.user = re(this.user, (k) => new Int32Array(k));
    this.shape = re(this.shape, (k) => new Int16Array(k));
    this.created = re(this.created, (k) => new Float64Array(k));
    this.ukey = re(this.ukey, (k) => new Uint32Array(k));
    for (const t of [this.updated, this.seen, this.exp, this.expires]) t.resize(n, this.size);
  }
}

/**
 * The values the project and creator columns hold as codes (interned): each project's v1 id and rows, each creator's
 * v1 id (null for none). A code never changes meaning.
 */
export class Codes {
  readonly projIds: string[] = [];
  private readonly projIdx = new Map<string, number>();
  readonly projRows: number[][] = [];
  readonly userIds: (string | null)[] = [];
  private readonly userIdx = new Map<string | null, number>();

  project(id: string): number {
    let p = this.projIdx.get(id);
    if (p === undefined) {
      p = this.projIds.length;
      this.projIds.push(id);
      this.projIdx.set(id, p);
      this.projRows.push([]);
    }
    return p;
  }

  user(id: string | null): number {
    let u = this.userIdx.get(id);
    if (u === undefined) {
      u = this.userIds.length;
      this.userIds.push(id);
      this.userIdx.set(id, u);
    }
    return u;
  }

  /** The code of a project renders point at (undefined when none ever did). */
  projectCode(id: string): number | undefined {
    return this.projIdx.get(id);
  }

  /** A project's rows (read, not copied; empty when none). */
  rowsOf(projectId: string): readonly number[] {
    const p = this.projIdx.get(projectId);
    return p === undefined ? [] : (this.projRows[p] as number[]);
  }
}
