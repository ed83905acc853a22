import { BLOCK_SPAN, ByteBlocks } from './byte-blocks.js';
import { ASK, HOLDS, LACKS, scanBlocks, TextChanges, TextLayout, TextMarks } from './text-scan.js';

/** Rows a step of work, counted for each scan's marks (one byte a row, made and read). */
const ROWS_A_STEP = 2;

/**
 * A column of strings (or nulls), one a row, held as bytes in blocks (`ByteBlocks`) instead of a JS string each: a string
 * whose every character is below 256 is kept one byte a character (Latin-1), any other as UTF-16 (exact for every JS
 * string, lone surrogates included), each kind in blocks of its own. Each row holds where its bytes start and a length
 * word (1 + bytes × 2, + 1 for Latin-1; 0 for null: a new array, never written, is nulls). A row set again writes its
 * new bytes at the end; what it held before is counted as garbage and the blocks are written afresh when garbage passes
 * half.
 */
const NULL = -1;

/** Whether every character of `s` is below 256 (it is kept one byte a character). */
function oneByte(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 255) return false;
  return true;
}

/** FNV-1a (32 bits) over character codes: a string's hash, equal to `TextColumn.hash` of a row holding it. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export class TextColumn {
  /** The one-byte rows' bytes, and the UTF-16 rows'. */
  private narrow = new ByteBlocks();
  private wideBlocks = new ByteBlocks();
  private used = 0;
  private garbage = 0;
  private start = new Int32Array(64);
  private len = new Int32Array(64);
  /** Rows below this have been set at least once (the rest read as null). */
  private rows = 0;
  /** Rows kept as UTF-16. */
  private wide = 0;
  /** Where each entry is and the rows set since, kept once a value has been looked for in the whole column. */
  private scan: { narrow: TextLayout; wide: TextLayout; changes: TextChanges } | undefined;

  /** Bytes the column holds (its blocks, its two words a row, and its layouts once made). */
  get bytes(): number {
    return this.narrow.bytes + this.wideBlocks.bytes + this.start.byteLength + this.len.byteLength + this.scanBytes;
  }

  /** Bytes held for whole-column searches (the layouts and their lower-case copies; none until a search asked). */
  get scanBytes(): number {
    return this.scan ? this.scan.narrow.bytes + this.scan.wide.bytes : 0;
  }

  /** Rows set at least once (a row past them reads as null). */
  get size(): number {
    return this.rows;
  }

  /** Room for `n` rows (rows beyond `n` are dropped). */
  resize(n: number): void {
    const s = new Int32Array(n);
    const l = new Int32Array(n);
    const keep = Math.min(n, this.rows);
    s.set(this.start.subarray(0, keep));
    l.set(this.len.subarray(0, keep));
    for (let row = keep; row < this.rows; row++) if (this.isWide(row)) this.wide--;
    this.start = s;
    this.len = l;
    this.rows = keep;
  }

  /** Frees the spare room (after a load), but 3 %. */
  trim(): void {
    if (this.start.length > this.rows * 1.03 + 64) this.resize(Math.ceil(this.rows * 1.03) + 64);
    if (this.garbage * 4 > this.used) this.rewrite();
  }

  get(row: number): string | null {
    const l = (this.len[row] as number) - 1;
    if (l === NULL || row >= this.rows) return null;
    const place = this.start[row] as number;
    const latin1 = (l & 1) === 1;
    const blocks = latin1 ? this.narrow : this.wideBlocks;
    const s = blocks.offset(place);
    return blocks.block(place).toString(latin1 ? 'latin1' : 'utf16le', s, s + (l >> 1));
  }

  set(row: number, value: string | null): void {
    if (row >= this.start.length) this.resize(Math.max(row + 1, this.start.length * 2));
    const prev = row < this.rows ? (this.len[row] as number) - 1 : NULL;
    // a row written again with what it holds (a render's new state, its title unchanged) writes nothing
    if (prev === NULL ? value === null && row < this.rows : value !== null && this.equals(row, value)) return;
    if (prev !== NULL) this.garbage += prev >> 1;
    if (prev !== NULL && (prev & 1) === 0) this.wide--;
    if (row >= this.rows) this.rows = row + 1;
    if (value === null) {
      this.len[row] = 0;
      this.scan?.changes.push(row);
      return;
    }
    const latin1 = oneByte(value);
    if (!latin1) this.wide++;
    const n = latin1 ? value.length : value.length * 2;
    if (this.garbage > 4096 && this.garbage * 2 > this.used) this.rewrite();
    const blocks = latin1 ? this.narrow : this.wideBlocks;
    const place = blocks.alloc(n);
    if (n > 0) blocks.block(place).write(value, blocks.offset(place), n, latin1 ? 'latin1' : 'utf16le');
    this.start[row] = place;
    this.len[row] = 1 + n * 2 + (latin1 ? 1 : 0);
    this.used += n;
    if (this.scan) {
      (latin1 ? this.scan.narrow : this.scan.wide).add(row, place);
      this.scan.changes.push(row);
    }
  }

  /** Whether a row holds exactly `s` (Latin-1 rows compared byte by byte, without making a string). */
  equals(row: number, s: string): boolean {
    const l = row < this.rows ? (this.len[row] as number) - 1 : NULL;
    if (l === NULL) return false;
    if ((l & 1) === 0) return this.get(row) === s;
    const n = l >> 1;
    if (n !== s.length) return false;
    const place = this.start[row] as number;
    const a = this.narrow.block(place);
    const at = this.narrow.offset(place);
    for (let i = 0; i < n; i++) if (a[at + i] !== s.charCodeAt(i)) return false;
    return true;
  }

  /**
   * A test of a row's text without making a string when it is kept one byte a character: `latin1` on its bytes (the
   * character codes, from `at` to `end` in `bytes`); `other` on the string of any other row; `ifNull` for a null row.
   */
  test(row: number, latin1: (bytes: Buffer, at: number, end: number) => boolean, other: (s: string) => boolean, ifNull: boolean): boolean {
    const l = row < this.rows ? (this.len[row] as number) - 1 : NULL;
    if (l === NULL) return ifNull;
    if ((l & 1) === 0) return other(this.get(row) as string);
    const place = this.start[row] as number;
    const at = this.narrow.offset(place);
    return latin1(this.narrow.block(place), at, at + (l >> 1));
  }

  /** Whether a row is kept as UTF-16. */
  private isWide(row: number): boolean {
    const l = (this.len[row] as number) - 1;
    return l !== NULL && (l & 1) === 0;
  }

  /** `hashString` of what a row holds (0 for null). */
  hash(row: number): number {
    const l = row < this.rows ? (this.len[row] as number) - 1 : NULL;
    if (l === NULL) return 0;
    if ((l & 1) === 0) return hashString(this.get(row) as string);
    const place = this.start[row] as number;
    const a = this.narrow.block(place);
    const at = this.narrow.offset(place);
    let h = 0x811c9dc5;
    for (let i = at, end = at + (l >> 1); i < end; i++) h = Math.imul(h ^ (a[i] as number), 0x01000193);
    return h >>> 0;
  }

  /**
   * Which rows hold `value` anywhere in their text: the one-byte rows' blocks searched at once for its one-byte form, the
   * UTF-16 rows' for its two-byte form (`scanBlocks`), the first time after the column is written afresh so that the
   * entries are listed in order. With `fold` (a string's lower case, and `table` the same of each one-byte character),
   * the texts are searched in lower case and `value` must be in lower case already. A null row, a row whose lower case
   * is not as long as its text, and a row set after the marks were made are marked `ASK`. `spend` is told the work as it
   * goes (`scanBlocks`; the marks, a step for `ROWS_A_STEP` rows): it may throw, and the search stops there.
   */
  containing(value: string, fold: { table: Uint8Array; lower: (s: string) => string } | undefined, spend: (steps: number) => void): TextMarks {
    spend(Math.ceil(this.rows / ROWS_A_STEP));
    if (!this.scan) {
      this.scan = { narrow: new TextLayout(), wide: new TextLayout(), changes: new TextChanges() };
      this.rewrite();
    }
    const scan = this.scan as NonNullable<TextColumn['scan']>;
    if (fold) {
      scan.narrow.foldBytes(this.narrow, fold.table);
      this.foldWide(scan.wide, fold.lower);
    }
    const marks = new Uint8Array(this.rows);
    for (let row = 0; row < this.rows; row++) marks[row] = (this.len[row] as number) === 0 ? ASK : LACKS;
    if (fold) for (const row of scan.wide.unfolded) if (row < this.rows) marks[row] = ASK;
    // an entry is looked in while it is its row's text (one byte a character or not: each kind in its own blocks)
    const live = (row: number, place: number) => this.start[row] === place && marks[row] === LACKS;
    const hit = (row: number) => (marks[row] = HOLDS);
    if (oneByte(value)) {
      const hay = fold ? (k: number) => scan.narrow.folded(k) : (k: number) => this.narrow.nth(k).block;
      const one = (row: number, place: number) => live(row, place) && !this.isWide(row);
      scanBlocks(this.narrow, scan.narrow, hay, { bytes: Buffer.from(value, 'latin1'), text: value, live: one, wide: false }, hit, spend);
    }
    if (this.wide > 0) {
      const hay = fold ? (k: number) => scan.wide.folded(k) : (k: number) => this.wideBlocks.nth(k).block;
      const two = (row: number, place: number) => live(row, place) && this.isWide(row);
      scanBlocks(this.wideBlocks, scan.wide, hay, { bytes: Buffer.from(value, 'utf16le'), text: value, live: two, wide: true }, hit, spend);
    }
    return new TextMarks(marks, scan.changes);
  }

  /** The UTF-16 entries listed since the last fold written in lower case (`lower`) into the layout's folded blocks. */
  private foldWide(layout: TextLayout, lower: (s: string) => string): void {
    const n = layout.entries;
    for (let e = layout.foldedEntries; e < n; e++) {
      const place = layout.place(e);
      const k = Math.floor(place / BLOCK_SPAN);
      const { block, used } = this.wideBlocks.nth(k);
      const at = place - k * BLOCK_SPAN;
      const next = e + 1 < n ? layout.place(e + 1) : Number.POSITIVE_INFINITY;
      const end = next < (k + 1) * BLOCK_SPAN ? next - k * BLOCK_SPAN : used;
      const out = layout.foldedBlock(k, block.length);
      const s = block.toString('utf16le', at, end);
      const low = lower(s);
      if (low.length === s.length) out.write(low, at, end - at, 'utf16le');
      else {
        out.fill(0, at, end);
        layout.unfolded.add(layout.owner(e));
      }
    }
    layout.foldedEntries = n;
  }

  /** The live rows' bytes copied into new blocks: the garbage is gone (and the layouts, if kept, made again in order). */
  private rewrite(): void {
    const narrow = new ByteBlocks();
    const wide = new ByteBlocks();
    const scan = this.scan ? { narrow: new TextLayout(), wide: new TextLayout(), changes: new TextChanges() } : undefined;
    if (this.scan) this.scan.changes.retired = true;
    let used = 0;
    for (let row = 0; row < this.rows; row++) {
      const l = (this.len[row] as number) - 1;
      if (l === NULL) continue;
      const latin1 = (l & 1) === 1;
      const [from, to] = latin1 ? [this.narrow, narrow] : [this.wideBlocks, wide];
      const old = this.start[row] as number;
      const n = l >> 1;
      const place = to.alloc(n);
      const s = from.offset(old);
      from.block(old).copy(to.block(place), to.offset(place), s, s + n);
      this.start[row] = place;
      if (scan) (latin1 ? scan.narrow : scan.wide).add(row, place);
      used += n;
    }
    this.scan = scan;
    this.narrow = narrow;
    this.wideBlocks = wide;
    this.used = used;
    this.garbage = 0;
  }
}
