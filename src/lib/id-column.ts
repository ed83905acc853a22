import { ByteBlocks } from './byte-blocks.js';

/**
 * A column of ids, one a row, appended in row order and never changed (a render's v1 id), held as bytes: an id that is
 * a prefix and an even number of lowercase hex digits (`rend_` + 20 digits) is kept as the prefix's number and the
 * digits packed two to a byte (11 bytes for a v1 render id, not a 25-character string); any other id as Latin-1 or
 * UTF-16. Bytes in blocks never moved (`ByteBlocks`); where a row's bytes start is its one word (they end where the next
 * row's start, or where its block's bytes end).
 */
const RAW = 0;
const WIDE = 255;
/** Prefixes a column learns (then ids with a new one are kept raw). */
const MOST_PREFIXES = 254;
const HEX_ID = /^([\x00-\xff]*_)((?:[0-9a-f]{2})+)$/;
const HEX = Buffer.from('0123456789abcdef', 'latin1');

export class IdColumn {
  private readonly blocks = new ByteBlocks();
  private start = new Int32Array(64);
  private rows = 0;
  private readonly prefixes: string[] = [];
  private readonly prefixOf = new Map<string, number>();
  private scratch = Buffer.allocUnsafeSlow(256);

  get size(): number {
    return this.rows;
  }

  /** Bytes the column holds. */
  get bytes(): number {
    return this.blocks.bytes + this.start.byteLength;
  }

  /** Appends the id of the next row; its row number. */
  push(id: string): number {
    const m = HEX_ID.exec(id);
    let tag = m ? this.prefixOf.get(m[1] as string) : undefined;
    if (m && tag === undefined && this.prefixes.length < MOST_PREFIXES) {
      this.prefixes.push(m[1] as string);
      tag = this.prefixes.length;
      this.prefixOf.set(m[1] as string, tag);
    }
    let wide = false;
    if (tag === undefined) for (let i = 0; i < id.length && !wide; i++) wide = id.charCodeAt(i) > 255;
    const n = 1 + (tag !== undefined ? (m![2] as string).length / 2 : wide ? id.length * 2 : id.length);
    const place = this.blocks.alloc(n);
    const a = this.blocks.block(place);
    let at = this.blocks.offset(place);
    if (tag !== undefined) {
      a[at++] = tag;
      at += a.write(m![2] as string, at, 'hex');
    } else {
      a[at++] = wide ? WIDE : RAW;
      at += a.write(id, at, wide ? 'utf16le' : 'latin1');
    }
    if (this.rows >= this.start.length) this.resize(this.start.length * 2);
    this.start[this.rows] = place;
    return this.rows++;
  }

  get(row: number): string {
    const place = this.start[row] as number;
    const next = row + 1 < this.rows ? (this.start[row + 1] as number) : -1;
    const a = this.blocks.block(place);
    const s = this.blocks.offset(place);
    // the next row's bytes follow in the same block, or this row's end its block's
    const e = next > place && this.blocks.block(next) === a ? this.blocks.offset(next) : this.blocks.end(place);
    const tag = a[s] as number;
    if (tag === RAW) return a.toString('latin1', s + 1, e);
    if (tag === WIDE) return a.toString('utf16le', s + 1, e);
    // the prefix and the digits written into one buffer: one flat string
    const prefix = this.prefixes[tag - 1] as string;
    const n = prefix.length + (e - s - 1) * 2;
    if (n > this.scratch.length) this.scratch = Buffer.allocUnsafeSlow(n * 2);
    const out = this.scratch;
    let at = out.write(prefix, 0, 'latin1');
    for (let i = s + 1; i < e; i++) {
      const b = a[i] as number;
      out[at++] = HEX[b >> 4] as number;
      out[at++] = HEX[b & 15] as number;
    }
    return out.toString('latin1', 0, n);
  }

  /** Frees the spare room (after a load), but 3 %. */
  trim(): void {
    if (this.start.length > this.rows * 1.03 + 64) this.resize(Math.ceil(this.rows * 1.03) + 64);
  }

  private resize(n: number): void {
    const s = new Int32Array(n);
    s.set(this.start.subarray(0, this.rows));
    this.start = s;
  }

}
