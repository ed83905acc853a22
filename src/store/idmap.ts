import type { Kysely } from 'kysely';
import type { ChangeBus } from './changes.js';
import type { Database } from './schema.js';

export interface IdPair { readonly type: string; readonly uuid: string; readonly v1Id: string; readonly source: 'derived' | 'imported' }

export class IdConflictError extends Error {}

/** uuid ↔ v1 id pairs, so any gateway instance resolves a uuid it did not emit itself. */
export class IdMapStore {
  constructor(private readonly db: Kysely<Database>, private readonly now: () => number = Date.now, readonly bus?: ChangeBus) {}

  /** Stores derived pairs; existing ones are left alone. */
  async remember(pairs: readonly IdPair[]): Promise<void> {
    for (let i = 0; i < pairs.length; i += 400) {
      const chunk = pairs.slice(i, i + 400);
      await this.db.insertInto('id_map')
        .values(chunk.map((p) => ({ type: p.type, uuid: p.uuid, v1_id: p.v1Id, source: p.source, created_at: this.now() })))
        .onConflict((oc) => oc.columns(['uuid', 'type']).doNothing())
        .execute();
    }
  }

  /** Imports legacy pairs (they win over derived uuids). A uuid already naming another v1 object is a conflict. */
  async importPairs(pairs: readonly { type: string; uuid: string; v1Id: string }[]): Promise<{ imported: number; unchanged: number }> {
    let imported = 0;
    let unchanged = 0;
    await this.db.transaction().execute(async (tx) => {
      for (const p of pairs) {
        const uuid = p.uuid.toLowerCase();
        const existing = await tx.selectFrom('id_map').select(['v1_id', 'source']).where('uuid', '=', uuid).where('type', '=', p.type).executeTakeFirst();
        if (existing && existing.v1_id !== p.v1Id) throw new IdConflictError(`${p.type} ${uuid} already names ${existing.v1_id}, not ${p.v1Id}`);
        if (existing && existing.source === 'imported') { unchanged++; continue; }
        if (existing) await tx.updateTable('id_map').set({ source: 'imported' }).where('type', '=', p.type).where('uuid', '=', uuid).execute();
        else await tx.insertInto('id_map').values({ type: p.type, uuid, v1_id: p.v1Id, source: 'imported', created_at: this.now() }).execute();
        imported++;
      }
    });
    if (imported > 0) await this.bus?.publish('ids');
    return { imported, unchanged };
  }

  async v1IdFor(type: string, uuid: string): Promise<string | undefined> {
    const r = await this.db.selectFrom('id_map').select('v1_id').where('type', '=', type).where('uuid', '=', uuid.toLowerCase()).executeTakeFirst();
    return r?.v1_id;
  }

  /** The v1 id each uuid names, whatever its type (one query per 500 uuids). */
  async v1IdsFor(uuids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (let i = 0; i < uuids.length; i += 500) {
      const chunk = uuids.slice(i, i + 500).map((u) => u.toLowerCase());
      if (chunk.length === 0) continue;
      const rows = await this.db.selectFrom('id_map').select(['uuid', 'v1_id']).where('uuid', 'in', chunk).execute();
      for (const r of rows) out.set(r.uuid, r.v1_id);
    }
    return out;
  }

  /** The imported pairs, the first imported first (then by uuid): a v1 id imported twice answers its first uuid. */
  async imported(): Promise<IdPair[]> {
    const rows = await this.db.selectFrom('id_map').selectAll().where('source', '=', 'imported').orderBy('created_at').orderBy('uuid').execute();
    return rows.map((r) => ({ type: r.type, uuid: r.uuid, v1Id: r.v1_id, source: 'imported' as const }));
  }

  async all(): Promise<IdPair[]> {
    // (a v1 id's rows in the order they answer: the first imported first — the one `imported()` gives it)
    const rows = await this.db.selectFrom('id_map').selectAll().orderBy('type').orderBy('v1_id').orderBy('created_at').orderBy('uuid').execute();
    return rows.map((r) => ({ type: r.type, uuid: r.uuid, v1Id: r.v1_id, source: r.source as 'derived' | 'imported' }));
  }
}
