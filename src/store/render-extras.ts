import { sql, type Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { ChangeBus } from './changes.js';
import type { Database } from './schema.js';

/** The stored JSON text of render data kept in memory, at most (a render's data is up to MAX_PAYLOAD_BYTES). */
export const DATA_KEPT_BYTES = 32 * 1_048_576;

/** What one kept entry costs besides its JSON text, about (bytes). */
const KEPT_OVERHEAD = 64;

/** Marks a render the store has no data for (renders created elsewhere): absent answers are kept too. */
const NONE = Symbol('no data');

/** What the gateway keeps about renders (the data it sent) and overlays (legacy PATCHes v1 cannot apply). */
export class RenderDataStore {
  /** Recently read renders' data (or NONE), so a warm read of a render costs no store round trip. */
  /**
   * Data read lately, by v1 id: at most 20 000 renders and DATA_KEPT_BYTES of their stored JSON text (data is the
   * client's own, up to MAX_PAYLOAD_BYTES a render: bounded in bytes, not entries).
   */
  private readonly kept = new LRUCache<string, { v: unknown; size: number }>({ max: 20_000, maxSize: DATA_KEPT_BYTES, sizeCalculation: (e) => e.size });

  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number = Date.now,
    private readonly bus?: ChangeBus,
  ) {
    bus?.on('render_data', (id) => {
      if (id === '*') this.kept.clear();
      else this.kept.delete(id);
    });
    bus?.onResync(() => this.kept.clear());
  }

  /** The stored JSON text of the data kept in memory, about (bytes). */
  keptBytes(): number { return this.kept.calculatedSize; }

  async put(v1Id: string, data: unknown, title: string | null, createdBy: string | null): Promise<void> {
    const text = JSON.stringify(data ?? {});
    await this.db
      .insertInto('render_data')
      .values({ v1_id: v1Id, data: text, data_chars: text.length, title, created_by: createdBy, created_at: this.now() })
      .onConflict((oc) => oc.column('v1_id').doUpdateSet({ data: text, data_chars: text.length }))
      .execute();
    this.kept.delete(v1Id);
    await this.bus?.publish('render_data', v1Id);
  }

  /**
   * Claims a render for a request: stores its data only when no request did before (a render created elsewhere and
   * adopted after a lost answer must not take another request's data). True when this call claimed it.
   */
  async claim(v1Id: string, data: unknown, title: string | null, createdBy: string | null): Promise<boolean> {
    const text = JSON.stringify(data ?? {});
    const r = await this.db
      .insertInto('render_data')
      .values({ v1_id: v1Id, data: text, data_chars: text.length, title, created_by: createdBy, created_at: this.now() })
      .onConflict((oc) => oc.column('v1_id').doNothing())
      .executeTakeFirst();
    this.kept.delete(v1Id);
    await this.bus?.publish('render_data', v1Id);
    return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
  }

  /** Which of these renders the gateway already holds data for (claimed by a request). */
  async claimed(v1Ids: readonly string[]): Promise<Set<string>> {
    if (v1Ids.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('render_data')
      .select('v1_id')
      .where('v1_id', 'in', [...v1Ids])
      .execute();
    return new Set(rows.map((r) => r.v1_id));
  }

  /**
   * The stored size of each render's data (its JSON text's characters, `data_chars`: no more than the bytes its answer
   * writes), read without the data itself; absent ids hold none. A read weighs the data it is about to read first (src/translate/data-at-hand.ts).
   */
  async sizes(v1Ids: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const missing: string[] = [];
    for (const id of v1Ids) {
      const k = this.kept.get(id);
      if (k === undefined) missing.push(id);
      else if (k.v !== NONE) out.set(id, k.size - KEPT_OVERHEAD);
    }
    for (let i = 0; i < missing.length; i += 500) {
      const chunk = missing.slice(i, i + 500);
      // (a row written before migration 0019 is weighed by its text)
      const rows = await this.db.selectFrom('render_data').select(['v1_id', sql<number>`coalesce(data_chars, length(data))`.as('size')])
        .where('v1_id', 'in', chunk).execute();
      for (const r of rows) out.set(r.v1_id, Number(r.size));
    }
    return out;
  }

  /** Data for many renders at once (absent ids are renders created elsewhere). */
  async many(v1Ids: readonly string[]): Promise<Map<string, unknown>> {
    const out = new Map<string, unknown>();
    const missing: string[] = [];
    for (const id of v1Ids) {
      const k = this.kept.get(id);
      if (k === undefined) missing.push(id);
      else if (k.v !== NONE) out.set(id, k.v);
    }
    for (let i = 0; i < missing.length; i += 500) {
      const chunk = missing.slice(i, i + 500);
      const rows = await this.db.selectFrom('render_data').select(['v1_id', 'data']).where('v1_id', 'in', chunk).execute();
      const found = new Map(rows.map((r) => [r.v1_id, { v: JSON.parse(r.data) as unknown, size: r.data.length + KEPT_OVERHEAD }]));
      // scans read many renders once: only small look-ups (an answer's page) are kept
      const keep = v1Ids.length <= 200;
      for (const id of chunk) {
        const f = found.get(id);
        if (f !== undefined) out.set(id, f.v);
        if (keep) this.kept.set(id, f ?? { v: NONE, size: KEPT_OVERHEAD });
      }
    }
    return out;
  }
}

/**
 * How far before the newest update time read a resync looks (writers' clocks and commits: a value written with an
 * earlier time, committed after a read, is still found).
 */
const RESYNC_MARGIN_MS = 5_000;

/** The longest id list a change names (PostgreSQL's NOTIFY takes 8 000 bytes); past it the change names the type alone. */
const CHANGE_IDS_CHARS = 6_000;

/** An overlay change as published: `type` (all its items) or `type:id,id,…` (those items). */
export function overlayKey(type: string, v1Ids: readonly string[]): string {
  const list = v1Ids.join(',');
  return list.length > 0 && list.length <= CHANGE_IDS_CHARS ? `${type}:${list}` : type;
}

/** A published overlay change read back: its type (`*`: every type) and the items it names (undefined: all of them). */
export function overlayChange(key: string): { type: string; ids?: readonly string[] } {
  const at = key.indexOf(':');
  return at < 0 ? { type: key } : { type: key.slice(0, at), ids: key.slice(at + 1).split(',') };
}

/** `held` with the items `ids` set to what `rows` holds of them (an item absent from rows: no overlay now). */
export function applyRows(
  held: Map<string, Record<string, unknown>>, ids: readonly string[], rows: ReadonlyMap<string, Record<string, unknown>>,
): Map<string, Record<string, unknown>> {
  for (const id of ids) {
    const r = rows.get(id);
    if (r) held.set(id, r);
    else held.delete(id);
  }
  return held;
}

/** Overlay rows one upsert statement writes (6 values a row: well within SQLite's bound on a statement's variables). */
const OVERLAY_ROWS = 150;

export class OverlayStore {
  /** All overlays per type, kept in memory (every read needs them), the items a change names read again. */
  private readonly kept = new Map<string, Promise<Map<string, Record<string, unknown>>>>();
  /** Per type, the newest update time read (a resync reads back what was written since). */
  private readonly since = new Map<string, number>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number = Date.now,
    private readonly bus?: ChangeBus,
  ) {
    bus?.on('overlays', (key) => {
      const change = overlayChange(key);
      if (change.type === '*') this.kept.clear();
      else if (!change.ids) this.kept.delete(change.type);
      else {
        // only those items read again: the rest of the type's overlays stand (a write of 40 000 items in chunks of 100
        // read every overlay back after each chunk: attack pass 15)
        const ids = change.ids;
        this.patch(change.type, async (m) => applyRows(new Map(m), ids, await this.ofIds(change.type, ids)));
      }
    });
    // another process may have written (SQLite: any commit of another connection; PostgreSQL: a lost connection): the
    // items written since the newest value read, less a margin, are read back — not every overlay (two instances on one
    // SQLite file read every overlay back at each other's commits, every second or so: the re-check of attack pass 15)
    bus?.onResync(() => {
      for (const type of [...this.kept.keys()]) {
        const from = this.since.get(type);
        if (from === undefined) { this.kept.delete(type); continue; }
        this.patch(type, async (m) => {
          const ids = await this.writtenSince(type, from - RESYNC_MARGIN_MS);
          return ids.length === 0 ? m : applyRows(new Map(m), ids, await this.ofIds(type, ids));
        });
      }
    });
  }

  /** The overlays of a type kept, changed by `change` once they are read (a failure drops them: read whole next time). */
  private patch(type: string, change: (m: Map<string, Record<string, unknown>>) => Promise<Map<string, Record<string, unknown>>>): void {
    const held = this.kept.get(type);
    if (!held) return;
    const next = held.then(change);
    this.kept.set(type, next);
    next.catch(() => { if (this.kept.get(type) === next) this.kept.delete(type); });
  }

  /** The items of a type with a value written at or after `at` (their update times as written). */
  private async writtenSince(type: string, at: number): Promise<string[]> {
    const rows = await this.db.selectFrom('overlays').select('v1_id').distinct().where('type', '=', type).where('updated_at', '>=', at).execute();
    return rows.map((r) => r.v1_id);
  }

  /** Notes the newest update time read of a type. */
  private saw(type: string, at: number): void {
    if (at > (this.since.get(type) ?? Number.NEGATIVE_INFINITY)) this.since.set(type, at);
  }

  async set(type: string, v1Id: string, values: Readonly<Record<string, unknown>>, userId: string | null): Promise<void> {
    await this.setMany(type, [{ v1Id, values }], userId);
  }

  /**
   * The values of many items of one type kept in one transaction (multi-row upserts of OVERLAY_ROWS rows), one change
   * published: a write by query of 2 000 items wrote a row and a commit an item, and published a change an item (attack
   * pass 14 and its re-check, H1: 2 ms an item on the event loop).
   */
  async setMany(
    type: string, items: readonly { readonly v1Id: string; readonly values: Readonly<Record<string, unknown>> }[], userId: string | null,
  ): Promise<void> {
    const at = this.now();
    // one row a (item, field), the later value winning: PostgreSQL refuses an upsert that names a row twice (a PATCH of
    // keys [X, X]: a review of this change)
    const merged = new Map<string, Record<string, unknown>>();
    for (const { v1Id, values } of items) merged.set(v1Id, { ...merged.get(v1Id), ...values });
    const rows = [...merged].flatMap(([v1Id, values]) => Object.entries(values).map(([field, value]) => ({
      type, v1_id: v1Id, field, value: JSON.stringify(value), updated_by: userId, updated_at: at,
    })));
    if (rows.length === 0) return;
    await this.db.transaction().execute(async (tx) => {
      for (let i = 0; i < rows.length; i += OVERLAY_ROWS) {
        await tx.insertInto('overlays').values(rows.slice(i, i + OVERLAY_ROWS))
          .onConflict((oc) => oc.columns(['type', 'v1_id', 'field']).doUpdateSet((eb) => ({
            value: eb.ref('excluded.value'), updated_by: eb.ref('excluded.updated_by'), updated_at: eb.ref('excluded.updated_at'),
          })))
          .execute();
      }
    });
    const ids = [...merged.keys()];
    const key = overlayKey(type, ids);
    if (!this.bus) this.kept.delete(type);
    await this.bus?.publish('overlays', key);
  }

  /** The overlays of some items of a type (those a change names), by v1 id; an item without any is absent. */
  async ofIds(type: string, v1Ids: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
    const out = new Map<string, Record<string, unknown>>();
    for (let i = 0; i < v1Ids.length; i += 500) {
      const rows = await this.db.selectFrom('overlays').select(['v1_id', 'field', 'value', 'updated_at']).where('type', '=', type)
        .where('v1_id', 'in', v1Ids.slice(i, i + 500)).execute();
      this.gather(type, rows, out);
    }
    return out;
  }

  /** Rows (one a field) gathered into each item's values, the newest update time noted. */
  private gather(
    type: string, rows: readonly { v1_id: string; field: string; value: string; updated_at: number }[], into: Map<string, Record<string, unknown>>,
  ): Map<string, Record<string, unknown>> {
    for (const r of rows) {
      this.saw(type, Number(r.updated_at));
      const o = into.get(r.v1_id) ?? {};
      o[r.field] = JSON.parse(r.value);
      into.set(r.v1_id, o);
    }
    return into;
  }

  /** All overlays of a type (they are few: one row per PATCHed field). Callers must not change the map. */
  ofType(type: string): Promise<Map<string, Record<string, unknown>>> {
    let p = this.kept.get(type);
    if (!p) {
      p = this.load(type);
      this.kept.set(type, p);
      p.catch(() => this.kept.delete(type));
    }
    return p;
  }

  private async load(type: string): Promise<Map<string, Record<string, unknown>>> {
    const rows = await this.db.selectFrom('overlays').select(['v1_id', 'field', 'value', 'updated_at']).where('type', '=', type).execute();
    return this.gather(type, rows, new Map());
  }
}
