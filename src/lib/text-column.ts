import { ByteBlocks } from './byte-blocks.js';

/**
 * A column of strings (or nulls), one a row, held as bytes in blocks (`ByteBlocks`) instead of a JS string each: a string
 * whose every character is below 256 is kept one byte a character (Latin-1), any other as UTF-16 (exact for every JS
 * string, lone surrogates included). Each row holds where
 * its bytes start and a length word (1 + bytes × 2, + 1 for Latin-1; 0 for null: a new array, never written, is nulls). A row set again writes its new bytes at
 * the end; what it held before is counted as garbage and the blocks are written afresh when garbage passes half.
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
  private blocks = new ByteBlocks();
  private used = 0;
  private garbage = 0;
  private start = new Int32Array(64);
  private len = new Int32Array(64);
  /** Rows below this have been set at least once (the rest read as null). */
  private rows = 0;

  /** Bytes the column holds (its blocks and its two words a row). */
  get bytes(): number {
    return this.blocks.bytes + this.start.byteLength + this.len.byteLength;
  }

  /** Room for `n` rows (rows beyond `n` are dropped). */
  resize(n: number): void {
    const s = new Int32Array(n);
    const l = new Int32Array(n);
    const keep = Math.min(n, this.rows);
    s.set(this.start.subarray(0, keep));
    l.set(this.len.subarray(0, keep));
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
    const s = this.blocks.offset(place);
    return this.blocks.block(place).toString((l & 1) === 1 ? 'latin1' : 'utf16le', s, s + (l >> 1));
  }

  set(row: number, value: string | null): void {
    if (row >= this.start.length) this.resize(Math.max(row + 1, this.start.length * 2));
    const prev = row < this.rows ? (this.len[row] as number) - 1 : NULL;
    // a row written again with what it holds (a render's new state, its title unchanged) writes nothing
    if (prev === NULL ? value === null && row < this.rows : value !== null && this.equals(row, value)) return;
    if (prev !== NULL) this.garbage += prev >> 1;
    if (row >= this.rows) this.rows = row + 1;
    if (value === null) {
      this.len[row] = 0;
      return;
    }
    const latin1 = oneByte(value);
    const n = latin1 ? value.length : value.length * 2;
    if (this.garbage > 4096 && this.garbage * 2 > this.used) this.rewrite();
    const place = this.blocks.alloc(n);
    if (n > 0) this.blocks.block(place).write(value, this.blocks.offset(place), n, latin1 ? 'latin1' : 'utf16le');
    this.start[row] = place;
    this.len[row] = 1 + n * 2 + (latin1 ? 1 : 0);
    this.used += n;
  }

  /** Whether a row holds exactly `s` (Latin-1 rows compared byte by byte, without making a string). */
  equals(row: number, s: string): boolean {
    const l = row < this.rows ? (this.len[row] as number) - 1 : NULL;
    if (l === NULL) return false;
    if ((l & 1) === 0) return this.get(row) === s;
    const n = l >> 1;
    if (n !== s.length) return false;
    const place = this.start[row] as number;
    const a = this.blocks.block(place);
    const at = this.blocks.offset(place);
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
    const at = this.blocks.offset(place);
    return latin1(this.blocks.block(place), at, at + (l >> 1));
  }

  /** `hashString` of what a row holds (0 for null). */
  hash(row: number): number {
    const l = row < this.rows ? (this.len[row] as number) - 1 : NULL;
    if (l === NULL) return 0;
    if ((l & 1) === 0) return hashString(this.get(row) as string);
    const place = this.start[row] as number;
    const a = this.blocks.block(place);
    const at = this.blocks.offset(place);
    let h = 0x811c9dc5;
    for (let i = at, end = at + (l >> 1); i < end; i++) h = Math.imul(h ^ (a[i] as number), 0x01000193);
    return h >>> 0;
  }

  /** The live rows' bytes copied into new blocks: the garbage is gone. */
  private rewrite(): void {
    const from = this.blocks;
    const to = new ByteBlocks();
    let used = 0;
    for (let row = 0; row < this.rows; row++) {
      const l = (this.len[row] as number) - 1;
      if (l === NULL) continue;
      const old = this.start[row] as number;
      const n = l >> 1;
      const place = to.alloc(n);
      const s = from.offset(old);
      from.block(old).copy(to.block(place), to.offset(place), s, s + n);
      this.start[row] = place;
      used += n;
    }
    this.blocks = to;
    this.used = used;
    this.garbage = 0;
  }
}
