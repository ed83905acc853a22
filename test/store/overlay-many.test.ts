import { afterAll, describe, expect, it } from 'vitest';
import { openChangeBus } from '../../src/store/changes.js';
import { openDb, type Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';
import { OverlayStore, overlayKey } from '../../src/store/render-extras.js';
import { databases } from '../helpers/databases.js';

/**
 * Many items' overlays kept at once: one transaction of multi-row upserts and one change published, on both stores (a
 * write by query of 2 000 items made a row, a commit and a change an item: attack pass 14's re-check, H1).
 */
const opened: Db[] = [];
afterAll(async () => { for (const db of opened) await db.close(); });

for (const { name, url } of await databases()) {
  describe(`OverlayStore.setMany (${name})`, () => {
    it('writes 400 items × 2 fields (past one statement\'s rows), replaces on a second write, publishes once a call', async () => {
      const db = await openDb(url);
      opened.push(db);
      await migrate(db.kysely);
      const bus = await openChangeBus(db, url, 0);
      let t = 1_000;
      const s = new OverlayStore(db.kysely, () => t, bus);
      const heard: string[] = [];
      bus.on('overlays', (k) => heard.push(k));
      const items = Array.from({ length: 400 }, (_, i) => ({ v1Id: `rend_${i}`, values: { title: `t${i}`, note: i } }));
      await s.setMany('render', items, 'u1');
      expect(heard).toEqual([overlayKey('render', items.map((x) => x.v1Id))]);
      const first = await s.ofType('render');
      expect(first.size).toBe(400);
      expect(first.get('rend_399')).toEqual({ title: 't399', note: 399 });
      t = 2_000;
      await s.setMany('render', items.slice(0, 200).map((x) => ({ v1Id: x.v1Id, values: { title: 'again' } })), 'u2');
      expect(heard).toEqual([overlayKey('render', items.map((x) => x.v1Id)), overlayKey('render', items.slice(0, 200).map((x) => x.v1Id))]);
      const second = await s.ofType('render');
      expect(second.get('rend_5')).toEqual({ title: 'again', note: 5 });
      expect(second.get('rend_300')).toEqual({ title: 't300', note: 300 });
      const row = await db.kysely.selectFrom('overlays').selectAll().where('v1_id', '=', 'rend_5').where('field', '=', 'title').executeTakeFirstOrThrow();
      expect({ by: row.updated_by, at: Number(row.updated_at) }).toEqual({ by: 'u2', at: 2_000 });
      // one item named twice (a PATCH of keys [X, X], or an array naming X twice): the later value wins — PostgreSQL
      // refused the statement naming a row twice (a review of this change)
      await s.setMany('render', [{ v1Id: 'rend_7', values: { title: 'first' } }, { v1Id: 'rend_7', values: { title: 'second', extra: 1 } }], 'u2');
      expect((await s.ofType('render')).get('rend_7')).toEqual({ title: 'second', note: 7, extra: 1 });
      // a change naming its items patched the kept overlays: the same as every overlay read anew
      const kept = await s.ofType('render');
      const fresh = await new OverlayStore(db.kysely, () => t).ofType('render');
      expect(kept).toEqual(fresh);
      expect(kept.size).toBe(400);
      heard.pop();
      // nothing to write: nothing published
      await s.setMany('render', [{ v1Id: 'rend_1', values: {} }], 'u3');
      expect(heard).toHaveLength(2);
      await bus.close();
    });
  });
}
