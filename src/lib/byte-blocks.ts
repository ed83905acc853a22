/**
 * Bytes handed out from blocks that are never moved or grown (4 KiB first, each block twice the last up to 1 MiB):
 * filling a column allocates new blocks and frees none, so no freed copy is left behind as a hole in malloc's heap
 * (growing one buffer by doubling frees every step). A place is one number: block × 2^20 + offset; an entry never
 * spans two blocks (one larger than a block gets a block of its own).
 */
const FIRST = 4096;
const MOST = 1 << 20;
/** A place's block is its number over this (`place = block × BLOCK_SPAN + offset`). */
export const BLOCK_SPAN = MOST;
/** Blocks a column may have (2 GiB of entries at 1 MiB a block). */
const MOST_BLOCKS = 2047;

export class ByteBlocks {
  private readonly blocks: Buffer[] = [];
  /** Bytes used in each block. */
  private readonly ends: number[] = [];

  /** Bytes held (every block, used or not). */
  get bytes(): number {
    let n = 0;
    for (const b of this.blocks) n += b.length;
    return n;
  }

  /** Room for `n` bytes in one block: its place (the caller writes them with `block` and `offset`). */
  alloc(n: number): number {
    const last = this.blocks.length - 1;
    if (last >= 0 && (this.ends[last] as number) + n <= (this.blocks[last] as Buffer).length) {
      const at = this.ends[last] as number;
      this.ends[last] = at + n;
      return last * MOST + at;
    }
    if (this.blocks.length >= MOST_BLOCKS) throw new RangeError('a column past 2 GiB');
    const size = Math.max(n, last < 0 ? FIRST : Math.min(MOST, (this.blocks[last] as Buffer).length * 2));
    this.blocks.push(Buffer.allocUnsafeSlow(size));
    this.ends.push(n);
    return (last + 1) * MOST;
  }

  /** How many blocks there are. */
  get count(): number {
    return this.blocks.length;
  }

  /** Block `k` (counted from 0) and the bytes used in it. */
  nth(k: number): { block: Buffer; used: number } {
    return { block: this.blocks[k] as Buffer, used: this.ends[k] as number };
  }

  /** The block of a place. */
  block(place: number): Buffer {
    return this.blocks[Math.floor(place / MOST)] as Buffer;
  }

  /** Where in its block a place is. */
  offset(place: number): number {
    return place % MOST;
  }

  /** Where the bytes used in a place's block end. */
  end(place: number): number {
    return this.ends[Math.floor(place / MOST)] as number;
  }
}
