import { BLOCK_SPAN, type ByteBlocks } from './byte-blocks.js';

/**
 * A value looked for in a whole text column at once: each block of its bytes searched by the runtime's own search
 * (`Buffer.indexOf`), a block at a time, and each place found turned back into the row whose bytes it falls in — a
 * fraction of a nanosecond a byte while places found are few (each costs a call of the search and a look-up), where a
 * test row by row costs tens of nanoseconds a row. What the search needs is kept by the column once a question has asked
 * for it (`TextLayout`): where each entry of its blocks is, and the blocks' bytes in lower case. Pure memory, no I/O.
 */

/** The work a search is counted (in the steps of `TextWork.walk`, ~2 ns each): a step for this many bytes searched… */
export const BYTES_A_STEP = 4;
/** …and these for each place found (a call of the runtime's search, a look-up of its entry). */
export const STEPS_A_PLACE = 32;

/** A row's mark: its text holds the value, does not, or the row is to be asked (null, its lower case not as long, set since). */
export const HOLDS = 1;
export const LACKS = 0;
export const ASK = 2;

/** Rows set since the layouts were made that are remembered, at least (marks older than them ask every row). */
const CHANGES_KEPT = 4096;

/**
 * The rows of a column set since its layouts were made (what marks made before must ask again), the last
 * `CHANGES_KEPT` to twice that of them: `base` counts the ones forgotten, so a mark knows whether the list still covers
 * its time (a mark outlives at least `CHANGES_KEPT` rows set after it).
 */
export class TextChanges {
  private list: number[] = [];
  base = 0;
  /** Whether the column was written afresh since (the layouts no longer follow it: marks made before ask every row). */
  retired = false;

  /** How many rows were ever set (forgotten ones included). */
  get count(): number {
    return this.base + this.list.length;
  }

  push(row: number): void {
    if (this.list.length >= 2 * CHANGES_KEPT) {
      this.base += CHANGES_KEPT;
      this.list = this.list.slice(CHANGES_KEPT);
    }
    this.list.push(row);
  }

  /** The rows set from change `from` on (undefined: some of them forgotten). */
  since(from: number): readonly number[] | undefined {
    return from < this.base ? undefined : this.list.slice(from - this.base);
  }
}

/** A layout's arrays for `n` entries: an eighth more, at least 1 024. */
const layoutRoom = (n: number) => Math.max(1024, n + (n >> 3));

/**
 * Every entry of a column's blocks, in the order of their places (entries are written one after another, a block filled
 * and then the next, so they are listed in order as they come): an entry left behind by a row set again stays listed
 * — its row has moved — until the column is written afresh. Also the blocks in lower case, as far as they are written
 * (a block's written bytes never change): one-byte blocks byte by byte through a table, UTF-16 ones an entry at a time.
 */
export class TextLayout {
  private places = new Int32Array(layoutRoom(0));
  private owners = new Int32Array(layoutRoom(0));
  private n = 0;
  private readonly foldedBlocks: Buffer[] = [];
  /** One-byte blocks: bytes folded so far, a block. */
  private readonly foldedTo: number[] = [];
  /** UTF-16 blocks: entries folded so far, and the rows whose lower case is not as long as their text (asked). */
  foldedEntries = 0;
  readonly unfolded = new Set<number>();

  /** Bytes held beyond the column's own. */
  get bytes(): number {
    let n = this.places.byteLength + this.owners.byteLength;
    for (const b of this.foldedBlocks) n += b ? b.length : 0;
    return n;
  }

  /** An entry written at `place` for `row` (the arrays grown by an eighth: 8 bytes a row of a large column, not 16). */
  add(row: number, place: number): void {
    if (this.n === this.places.length) {
      const room = layoutRoom(this.n);
      const p = new Int32Array(room);
      const o = new Int32Array(room);
      p.set(this.places);
      o.set(this.owners);
      this.places = p;
      this.owners = o;
    }
    this.places[this.n] = place;
    this.owners[this.n++] = row;
  }

  /** Block `k` in lower case (made as long as the column's block: `length`). */
  foldedBlock(k: number, length: number): Buffer {
    let f = this.foldedBlocks[k];
    if (!f) this.foldedBlocks[k] = f = Buffer.allocUnsafeSlow(length);
    return f;
  }

  /** Block `k` in lower case, as far as it was folded. */
  folded(k: number): Buffer {
    return this.foldedBlocks[k] as Buffer;
  }

  /** One-byte blocks folded through `table` as far as they are written. */
  foldBytes(blocks: ByteBlocks, table: Uint8Array): void {
    for (let k = 0; k < blocks.count; k++) {
      const { block, used } = blocks.nth(k);
      const out = this.foldedBlock(k, block.length);
      for (let i = this.foldedTo[k] ?? 0; i < used; i++) out[i] = table[block[i] as number] as number;
      this.foldedTo[k] = used;
    }
  }

  /** The last entry whose place is at most `place`, looked for from entry `from` on (-1: none). */
  seek(place: number, from: number): number {
    const p = this.places;
    let lo = from >= 0 && from < this.n && (p[from] as number) <= place ? from : -1;
    if (lo < 0) {
      if (this.n === 0 || (p[0] as number) > place) return -1;
      lo = 0;
    }
    // galloping forward, then halving: the places found one after another are close when hits are dense
    let step = 1;
    let hi = lo + 1;
    while (hi < this.n && (p[hi] as number) <= place) {
      lo = hi;
      step *= 2;
      hi = lo + step;
    }
    if (hi > this.n) hi = this.n;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if ((p[mid] as number) <= place) lo = mid;
      else hi = mid;
    }
    return lo;
  }

  place(entry: number): number {
    return this.places[entry] as number;
  }

  owner(entry: number): number {
    return this.owners[entry] as number;
  }

  get entries(): number {
    return this.n;
  }
}

/** A value looked for: its bytes, its text as the searched bytes read, and which entries it is looked for in. */
export interface Needle {
  readonly bytes: Uint8Array;
  readonly text: string;
  /** Whether an entry (its row and place) is its row's current text. */
  readonly live: (row: number, place: number) => boolean;
  /** Two bytes a character: a place found must be an even number of bytes into its entry. */
  readonly wide: boolean;
}

/**
 * Calls `hit` with each row whose entry holds the needle, once a row; `hay(k)` is block `k`'s bytes as searched (the
 * column's own, or in lower case). `spend` is told the work as it goes, a block at a time (it may throw: the search
 * stops there): `BYTES_A_STEP` a byte searched, `STEPS_A_PLACE` a place found. A place found between two characters of a
 * UTF-16 entry has that entry read as a string instead (once: a text made of such places costs no more than its length).
 */
export function scanBlocks(blocks: ByteBlocks, layout: TextLayout, hay: (k: number) => Buffer, needle: Needle, hit: (row: number) => void,
  spend: (steps: number) => void): void {
  const { bytes: value, text, live, wide } = needle;
  const m = value.length;
  let entry = -1;
  for (let k = 0; k < blocks.count; k++) {
    const used = blocks.nth(k).used;
    if (used < m || m === 0) continue;
    const bytes = hay(k).subarray(0, used);
    const base = k * BLOCK_SPAN;
    // (an entry larger than a block has a block of its own, longer than BLOCK_SPAN: every place in it is that entry's)
    const single = used > BLOCK_SPAN;
    let places = 0;
    let from = 0;
    while (from <= used - m) {
      const pos = bytes.indexOf(value, from);
      if (pos < 0) break;
      places++;
      entry = layout.seek(single ? base : base + pos, entry);
      if (entry < 0) {
        from = pos + 1;
        continue;
      }
      // an entry ends where the next begins (entries follow one another), the last of a block where its bytes end
      const at = single ? 0 : layout.place(entry) - base;
      const next = !single && entry + 1 < layout.entries ? layout.place(entry + 1) - base : used;
      const end = Math.min(next, used);
      const row = layout.owner(entry);
      if (pos + m <= end && live(row, base + at)) {
        if (!wide || ((pos - at) & 1) === 0) hit(row);
        else {
          // found between two characters: the entry read whole, its later places included
          spend(Math.ceil((end - at) / BYTES_A_STEP));
          if (bytes.toString('utf16le', at, end).includes(text)) hit(row);
        }
      }
      // the rest of the entry is skipped: a row is found once, and a place past its end - m is not inside it
      from = Math.max(pos + 1, end);
    }
    spend(Math.ceil(used / BYTES_A_STEP) + places * STEPS_A_PLACE);
  }
}

/** Marks of a column's rows for one value, made by one scan, asking again the rows set since. */
export class TextMarks {
  /** Changes of the column seen (`TextChanges.count` when last caught up). */
  private seen: number;
  /** The column was written afresh since, or more rows set than remembered: every row is asked. */
  private dead = false;

  constructor(private readonly marks: Uint8Array, private readonly changes: TextChanges) {
    this.seen = changes.count;
  }

  /** `HOLDS`, `LACKS` or `ASK` for `row`. */
  at(row: number): number {
    if (this.dead) return ASK;
    if (this.seen !== this.changes.count || this.changes.retired) this.catchUp();
    return row < this.marks.length && !this.dead ? (this.marks[row] as number) : ASK;
  }

  /** Answers of rows below `size` (1: passes): a mark read, negated or not, `ask` where the row is to be asked. */
  answers(size: number, ask: (row: number) => boolean, negate: boolean): Uint8Array {
    const out = new Uint8Array(size);
    if (this.seen !== this.changes.count || this.changes.retired) this.catchUp();
    const marks = this.marks;
    const known = this.dead ? 0 : Math.min(size, marks.length);
    const yes = negate ? LACKS : HOLDS;
    for (let row = 0; row < known; row++) {
      const k = marks[row] as number;
      if (k === yes) out[row] = 1;
      else if (k === ASK && ask(row)) out[row] = 1;
    }
    for (let row = known; row < size; row++) if (ask(row)) out[row] = 1;
    return out;
  }

  private catchUp(): void {
    const set = this.changes.retired ? undefined : this.changes.since(this.seen);
    if (!set) {
      this.dead = true;
      return;
    }
    for (const row of set) if (row < this.marks.length) this.marks[row] = ASK;
    this.seen = this.changes.count;
  }
}
