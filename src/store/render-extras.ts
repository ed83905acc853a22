import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** What the gateway keeps about renders (the data it sent) and overlays (legacy PATCHes v1 cannot apply). */
export class RenderDataStore {
  constructor(private readonly db: Kysely<Database>, private readonly now: () => number = Date.now) {}

  async put(v1Id: string, data: unknown, title: string | null, createdBy: string | null): Promise<void> {
    await this.db.insertInto('render_data').values({ v1_id: v1Id, data: JSON.stringify(data ?? {}), title, created_by: createdBy, created_at: this.now() })
      .onConflict((oc) => oc.column('v1_id').doUpdateSet({ data: JSON.stringify(data ?? {}) })).execute();
  }

  /** Data for many renders at once (absent ids are renders created elsewhere). */
  async many(v1Ids: readonly string[]): Promise<Map<string, unknown>> {
    const out = new Map<string, unknown>();
    for (let i = 0; i < v1Ids.length; i += 500) {
      const chunk = v1Ids.slice(i, i + 500);
      if (chunk.length === 0) continue;
      const rows = await this.db.selectFrom('render_data').select(['v1_id', 'data']).where('v1_id', 'in', chunk).execute();
      for (const r of rows) out.set(r.v1_id, JSON.parse(r.data));
    }
    return out;
  }
}

export class OverlayStore {
  constructor(private readonly db: Kysely<Database>, private readonly now: () => number = Date.now) {}

  async set(type: string, v1Id: string, values: Readonly<Record<string, unknown>>, userId: string | null): Promise<void> {
    for (const [field, value] of Object.entries(values)) {
      await this.db.insertInto('overlays').values({ type, v1_id: v1Id, field, value: JSON.stringify(value), updated_by: userId, updated_at: this.now() })
        .onConflict((oc) => oc.columns(['type', 'v1_id', 'field']).doUpdateSet({ value: JSON.stringify(value), updated_by: userId, updated_at: this.now() }))
        .execute();
    }
  }

  /** All overlays of a type (they are few: one row per PATCHed field). */
  async ofType(type: string): Promise<Map<string, Record<string, unknown>>> {
    const rows = await this.db.selectFrom('overlays').select(['v1_id', 'field', 'value']).where('type', '=', type).execute();
    const out = new Map<string, Record<string, unknown>>();
    for (const r of rows) {
      const o = out.get(r.v1_id) ?? {};
      o[r.field] = JSON.parse(r.value);
      out.set(r.v1_id, o);
    }
    return out;
  }
}
