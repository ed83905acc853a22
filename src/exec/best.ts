import { sortYielding } from '../plan/sort-yielding.js';

/** Past twice the wanted count plus this many, the buffer is pruned to the wanted count. */
const SLACK = 1024;

/**
 * The best `wanted` items seen so far by `cmp`, kept as they arrive: a buffer sorted and cut back to `wanted` whenever
 * it fills (O(n log k) over a scan). Once pruned, the last kept item bounds what can still enter (`bound`): a caller
 * that tests items against it first spends one comparison on most of them.
 */
export class Best<T> {
  items: T[] = [];
  /** Whether the buffer was ever cut back (the answer is a top-k, not a sort of everything matched). */
  pruned = false;
  private last: T | undefined;

  constructor(private readonly wanted: number, private readonly cmp: (a: T, b: T) => number) {}

  /** The worst item that can still be answered, once the buffer has been cut back (undefined before). */
  get bound(): T | undefined {
    return this.last;
  }

  add(x: T): void {
    this.items.push(x);
  }

  /** Cuts the buffer back when it holds more than it may (`touch` readies the items for comparing first). */
  async pruneIfFull(touch?: (items: readonly T[]) => Promise<void>): Promise<void> {
    if (this.items.length >= 2 * this.wanted + SLACK) {
      await this.prune(touch);
      this.pruned = true;
    }
  }

  /** Sorts the buffer (a slice at a time for large ones) and keeps the wanted count. */
  async prune(touch?: (items: readonly T[]) => Promise<void>): Promise<void> {
    if (touch) await touch(this.items);
    this.items = await sortYielding(this.items, this.cmp);
    if (this.items.length > this.wanted) {
      this.items = this.items.slice(0, this.wanted);
      this.last = this.items[this.items.length - 1];
    }
  }

  clear(): void {
    this.items = [];
    this.last = undefined;
  }
}
