/**
 * A look-up from keys to row numbers as one open-addressing hash table in an Int32Array (linear probing): no object a
 * key, 4 bytes a slot, at most 3/4 of the slots in use. The keys themselves are not kept: the caller holds them in its
 * rows and gives the table a row's hash (`hashOf`, read again when the table grows) and an equality test of a row with
 * a key; a key's hash must equal `hashOf` of a row holding it.
 */
const EMPTY = 0;
const GONE = -1;

/** Spreads a 32-bit hash over the slots (the low bits of FNV or of a uuid's first digits are not enough alone). */
const mix = (h: number) => Math.imul(h ^ (h >>> 16), 0x45d9f3b) ^ (Math.imul(h, 0x2c1b3c6d) >>> 15);

export class RowTable<K> {
  /** row + 1 a slot in use; 0 empty; -1 a removed row's slot (probing goes on past it). */
  private slots = new Int32Array(16);
  private live = 0;
  private taken = 0;

  constructor(
    private readonly hashOf: (row: number) => number,
    private readonly holds: (row: number, key: K) => boolean,
  ) {}

  get size(): number {
    return this.live;
  }

  /** Bytes the table holds. */
  get bytes(): number {
    return this.slots.byteLength;
  }

  /** The row holding `key` (whose hash is `hash`), or -1. */
  find(hash: number, key: K): number {
    const s = this.slots;
    const mask = s.length - 1;
    for (let i = mix(hash) & mask; ; i = (i + 1) & mask) {
      const v = s[i] as number;
      if (v === EMPTY) return -1;
      if (v !== GONE && this.holds(v - 1, key)) return v - 1;
    }
  }

  /** Adds a row under its hash (the caller knows no row holds its key yet). */
  add(hash: number, row: number): void {
    if ((this.taken + 1) * 4 > this.slots.length * 3) this.rebuild(this.live + 1);
    const s = this.slots;
    const mask = s.length - 1;
    let i = mix(hash) & mask;
    while ((s[i] as number) > 0) i = (i + 1) & mask;
    if (s[i] === EMPTY) this.taken++;
    s[i] = row + 1;
    this.live++;
  }

  /** Removes a row (found under its hash); false when the table does not hold it. */
  remove(hash: number, row: number): boolean {
    const s = this.slots;
    const mask = s.length - 1;
    for (let i = mix(hash) & mask; ; i = (i + 1) & mask) {
      const v = s[i] as number;
      if (v === EMPTY) return false;
      if (v === row + 1) {
        s[i] = GONE;
        this.live--;
        return true;
      }
    }
  }

  clear(): void {
    this.slots = new Int32Array(16);
    this.live = 0;
    this.taken = 0;
  }

  /** Slots for `n` rows (a power of two, at most half full), the rows placed again by their hashes. */
  private rebuild(n: number): void {
    let cap = 16;
    while (cap < n * 2) cap *= 2;
    const old = this.slots;
    const s = new Int32Array(cap);
    const mask = cap - 1;
    for (const v of old) {
      if (v <= 0) continue;
      let i = mix(this.hashOf(v - 1)) & mask;
      while (s[i] !== EMPTY) i = (i + 1) & mask;
      s[i] = v;
    }
    this.slots = s;
    this.taken = this.live;
  }
}
