/**
 * A look-up from keys to row numbers as one open-addressing hash table in an Int32Array (linear probing): no object a
 * key, 4 bytes a slot, at most 3/4 of the slots in use (half after growing; 0.7 once trimmed). The keys themselves are not kept: the caller holds them in its
 * rows and gives the table a row's hash (`hashOf`, read again when the table grows) and an equality test of a row with
 * a key; a key's hash must equal `hashOf` of a row holding it. When `hashOf` is costly (a v1 id unpacked from its column
 * and hashed), `keepHashes` keeps each row's hash (4 bytes a row) so growing and trimming read them instead: the table
 * of a 100 000-render team is placed again in a few milliseconds, not tens (one event-loop turn of a backfill page).
 */
const EMPTY = 0;
const GONE = -1;

/** A hash's first slot: the hash mixed (the bits of FNV or of a uuid's first digits are not spread enough alone). */
function slot(h: number, n: number): number {
  const m = Math.imul(h ^ (h >>> 16), 0x45d9f3b);
  return ((m ^ (m >>> 15)) >>> 0) % n;
}

export class RowTable<K> {
  /** row + 1 a slot in use; 0 empty; -1 a removed row's slot (probing goes on past it). */
  private slots = new Int32Array(16);
  private live = 0;
  private taken = 0;
  /** Each row's hash, by row (with `keepHashes`). */
  private hashes: Int32Array | null;

  constructor(
    private readonly hashOf: (row: number) => number,
    private readonly holds: (row: number, key: K) => boolean,
    keepHashes = false,
  ) {
    this.hashes = keepHashes ? new Int32Array(16) : null;
  }

  get size(): number {
    return this.live;
  }

  /** Bytes the table holds. */
  get bytes(): number {
    return this.slots.byteLength + (this.hashes?.byteLength ?? 0);
  }

  /** The row holding `key` (whose hash is `hash`), or -1. */
  find(hash: number, key: K): number {
    const s = this.slots;
    const n = s.length;
    for (let i = slot(hash, n); ; i = i + 1 === n ? 0 : i + 1) {
      const v = s[i] as number;
      if (v === EMPTY) return -1;
      if (v !== GONE && this.holds(v - 1, key)) return v - 1;
    }
  }

  /** Adds a row under its hash (the caller knows no row holds its key yet). */
  add(hash: number, row: number): void {
    if ((this.taken + 1) * 4 > this.slots.length * 3) this.rebuild(this.live + 1);
    const s = this.slots;
    const n = s.length;
    let i = slot(hash, n);
    while ((s[i] as number) > 0) i = i + 1 === n ? 0 : i + 1;
    if (s[i] === EMPTY) this.taken++;
    s[i] = row + 1;
    this.live++;
    if (this.hashes) this.keepHash(row, hash);
  }

  /** Removes a row (found under its hash); false when the table does not hold it. */
  remove(hash: number, row: number): boolean {
    const s = this.slots;
    const n = s.length;
    for (let i = slot(hash, n); ; i = i + 1 === n ? 0 : i + 1) {
      const v = s[i] as number;
      if (v === EMPTY) return false;
      if (v === row + 1) {
        s[i] = GONE;
        this.live--;
        return true;
      }
    }
  }

  /** Frees spare slots (after a load): 0.7 of them in use. */
  trim(): void {
    if (this.slots.length > Math.ceil(this.live / 0.7) + 16) this.rebuild(this.live, 0.7);
    const h = this.hashes;
    if (h) {
      let top = 0; // the highest row held, + 1
      for (const v of this.slots) if (v > top) top = v;
      if (h.length > top + 16) this.hashes = h.slice(0, top);
    }
  }

  clear(): void {
    this.slots = new Int32Array(16);
    if (this.hashes) this.hashes = new Int32Array(16);
    this.live = 0;
    this.taken = 0;
  }

  /** Slots for `n` rows (`load` of them in use), the rows placed again by their hashes. */
  private rebuild(n: number, load = 0.5): void {
    const cap = Math.max(16, Math.ceil(n / load));
    const old = this.slots;
    const s = new Int32Array(cap);
    const h = this.hashes;
    for (const v of old) {
      if (v <= 0) continue;
      let i = slot(h ? (h[v - 1] as number) : this.hashOf(v - 1), cap);
      while (s[i] !== EMPTY) i = i + 1 === cap ? 0 : i + 1;
      s[i] = v;
    }
    this.slots = s;
    this.taken = this.live;
  }

  private keepHash(row: number, hash: number): void {
    let h = this.hashes as Int32Array;
    if (row >= h.length) {
      const grown = new Int32Array(Math.max(row + 1, h.length * 2));
      grown.set(h);
      this.hashes = h = grown;
    }
    h[row] = hash;
  }
}
