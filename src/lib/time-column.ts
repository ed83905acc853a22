/**
 * A column of times (numbers, NaN for none) a row: 4 bytes a row — an Int32 offset from the first time the column held
 * — while every time is a whole number within ±2^31 of it (v1's seconds always are, its milliseconds over a few weeks);
 * the first time that is not turns the column into Float64 for good. Values read back exactly as written.
 */
const NONE = -2147483648;
/** An offset is held with its sign bit flipped, so a zero word (a new array, never written) reads as no time. */
const FLIP = -2147483648;

export class TimeColumn {
  private ints: Int32Array | null;
  private floats: Float64Array | null = null;
  private base = Number.NaN;

  constructor(n: number) {
    this.ints = new Int32Array(n);
  }

  get length(): number {
    return (this.ints ?? (this.floats as Float64Array)).length;
  }

  /** Bytes a row (4 as offsets, 8 once widened). */
  get width(): number {
    return this.ints ? 4 : 8;
  }

  get(row: number): number {
    const a = this.ints;
    if (a !== null) {
      const v = a[row] as number;
      return v === 0 ? Number.NaN : this.base + (v ^ FLIP);
    }
    return (this.floats as Float64Array)[row] as number;
  }

  set(row: number, t: number): void {
    const a = this.ints;
    if (a === null) {
      (this.floats as Float64Array)[row] = t;
      return;
    }
    if (Number.isNaN(t)) {
      a[row] = 0;
      return;
    }
    if (Number.isNaN(this.base) && Number.isInteger(t)) this.base = t;
    const d = t - this.base;
    if (Number.isInteger(t) && d > NONE && d <= 2147483647 && !Object.is(t, -0)) a[row] = d ^ FLIP;
    else {
      this.widen();
      (this.floats as Float64Array)[row] = t;
    }
  }

  /** Room for `n` rows; the first `keep` rows kept. */
  resize(n: number, keep: number): void {
    const k = Math.min(n, keep);
    if (this.ints) {
      const b = new Int32Array(n);
      b.set(this.ints.subarray(0, k));
      this.ints = b;
    } else {
      const b = new Float64Array(n).fill(Number.NaN);
      b.set((this.floats as Float64Array).subarray(0, k));
      this.floats = b;
    }
  }

  private widen(): void {
    const a = this.ints as Int32Array;
    const f = new Float64Array(a.length);
    for (let i = 0; i < a.length; i++) f[i] = a[i] === 0 ? Number.NaN : this.base + ((a[i] as number) ^ FLIP);
    this.floats = f;
    this.ints = null;
  }
}
