import { itemBytes, keepJson } from '../../lib/item-bytes.js';

/** Projected records a team keeps (with their JSON text): the pages a hot list answers again and again. */
const SHAPED_KEPT = 512;
/** …and at most this many bytes of their JSON text (a selection with a render's data may be a MB an item). */
export const SHAPED_KEPT_BYTES = 8 * 1_048_576;
/** An item larger than this is answered and not kept. */
const SHAPED_ITEM_MOST = 256 * 1024;

/**
 * A team's render records as answered — projected by a selection that reads the record alone (no relation expanded),
 * frozen and kept with their JSON text — by row, the most recently answered kept; a row leaves whenever its record
 * would change (the same moments its full record is built again). A row holds the item of one selection at a time.
 * Bounded in entries and in bytes of JSON text.
 */
export class ShapedRecords {
  private readonly kept = new Map<number, { key: string; item: unknown; bytes: number }>();
  private held = 0;

  constructor(private readonly most = SHAPED_KEPT, private readonly mostBytes = SHAPED_KEPT_BYTES) {}

  /**
   * The row's record projected by the selection named `key` (`make` projects it when it is not kept; it is kept when
   * `keepable` says so after it was made).
   */
  get(row: number, key: string, make: () => unknown, keepable: () => boolean = () => true): unknown {
    const hit = this.kept.get(row);
    if (hit && hit.key === key) {
      this.kept.delete(row);
      this.kept.set(row, hit);
      return hit.item;
    }
    const made = make();
    if (typeof made !== 'object' || made === null || !keepable()) return made;
    const item = keepJson(made);
    const bytes = itemBytes(item)?.length ?? 0;
    this.forget(row);
    if (bytes > SHAPED_ITEM_MOST) return item;
    while (this.kept.size > 0 && (this.kept.size >= this.most || this.held + bytes > this.mostBytes)) {
      this.forget(this.kept.keys().next().value as number);
    }
    this.kept.set(row, { key, item, bytes });
    this.held += bytes;
    return item;
  }

  forget(row: number): void {
    const hit = this.kept.get(row);
    if (!hit) return;
    this.kept.delete(row);
    this.held -= hit.bytes;
  }

  clear(): void {
    this.kept.clear();
    this.held = 0;
  }

  get size(): number {
    return this.kept.size;
  }

  /** Bytes of JSON text kept. */
  get bytes(): number {
    return this.held;
  }
}
