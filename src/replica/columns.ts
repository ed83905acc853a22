import { RENDER_STATUSES } from '../v1/schemas.js';

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

/** About what a row costs: its columns, its strings, the maps and the view that hold it. */
export function rowBytes(name: string, rest: string | null): number {
  return 400 + name.length + (rest?.length ?? 0);
}

/** Growable typed columns (capacity doubles; trimmed once a load is done). */
export class Columns {
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
  private readonly ids: string[] = [];
  private readonly uuids: string[] = [];
  private readonly names: string[] = [];
  private readonly rests: (string | null)[] = [];
  /** The least and greatest time each date column ever held (a question on dates halves between them). */
  readonly span = { created: [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY], updated: [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY] };

  /** A new row for a render (its title and output set by the caller): its number. */
  add(v1Id: string, uuid: string): number {
    this.grow();
    this.ids.push(v1Id);
    this.uuids.push(uuid);
    this.names.push('');
    this.rests.push(null);
    return this.size++;
  }

  /** The v1 id of a row. */
  v1Id(row: number): string {
    return this.ids[row] as string;
  }

  /** The legacy uuid of a row. */
  uuid(row: number): string {
    return this.uuids[row] as string;
  }

  setUuid(row: number, uuid: string): void {
    this.uuids[row] = uuid;
  }

  /** The title (v1 name) of a row. */
  title(row: number): string {
    return this.names[row] as string;
  }

  setTitle(row: number, name: string): void {
    this.names[row] = name;
  }

  /** The varying part of a row's output as the output codec packed it (null: none). */
  outRest(row: number): string | null {
    return this.rests[row] ?? null;
  }

  setOutRest(row: number, rest: string | null): void {
    this.rests[row] = rest;
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
