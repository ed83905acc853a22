import { keepJson } from '../exec/item-json.js';

/** Projected records a team keeps (with their JSON text): the pages a hot list answers again and again. */
const SHAPED_KEPT = 512;

/**
 * A team's render records as answered — projected by a selection that reads the record alone (no relation expanded),
 * frozen and kept with their JSON text — by row, the most recently answered kept; a row leaves whenever its record
 * would change (the same moments its full record is built again). A row holds the item of one selection at a time.
 */
export class ShapedRecords {
  private readonly kept = new Map<number, { key: string; item: unknown }>();

  constructor(private readonly most = SHAPED_KEPT) {}

  /** The row's record projected by the selection named `key` (`make` projects it when it is not kept). */
  get(row: number, key: string, make: () => unknown): unknown {
    const hit = this.kept.get(row);
    if (hit && hit.key === key) {
      this.kept.delete(row);
      this.kept.set(row, hit);
      return hit.item;
    }
    const made = make();
    if (typeof made !== 'object' || made === null) return made;
    const item = keepJson(made);
    if (hit) this.kept.delete(row);
    else if (this.kept.size >= this.most) this.kept.delete(this.kept.keys().next().value as number);
    this.kept.set(row, { key, item });
    return item;
  }

  forget(row: number): void {
    this.kept.delete(row);
  }

  clear(): void {
    this.kept.clear();
  }

  get size(): number {
    return this.kept.size;
  }
}
