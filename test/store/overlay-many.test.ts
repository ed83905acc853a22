import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
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

describe('two processes on one SQLite file (re-check of attack pass 15, H: each read every overlay back at the other\'s commits)', () => {
  it('a resync reads back the items written since, not every overlay', async () => {
    const url = join(mkdtempSync(join(tmpdir(), 'gw-overlay-resync-')), 'store.db');
    const one = await openDb(url);
    const two = await openDb(url);
    opened.push(one, two);
    await migrate(one.kysely);
    let t = 1_000;
    const busOne = await openChangeBus(one, url, 0);
    const busTwo = await openChangeBus(two, url, 0);
    const mine = new OverlayStore(one.kysely, () => t, busOne);
    const theirs = new OverlayStore(two.kysely, () => t, busTwo);
    await mine.setMany('render', Array.from({ length: 5_000 }, (_, i) => ({ v1Id: `rend_${i}`, values: { title: `t${i}` } })), 'u1');
    expect((await mine.ofType('render')).size).toBe(5_000);
    t = 30_000; // (a later write of its own: the newest time it has read — a resync looks from a margin before it)
    await mine.setMany('render', [{ v1Id: 'rend_9', values: { title: 'mine' } }], 'u1');
    await mine.ofType('render');
    await busOne.sync(); // (its own commits are seen once: the version it starts from)
    // the other process writes two items, one of them new, a minute later
    t = 61_000;
    await theirs.setMany('render', [{ v1Id: 'rend_7', values: { title: 'changed' } }, { v1Id: 'rend_new', values: { title: 'new' } }], 'u2');
    const loaded = vi.spyOn(mine as unknown as { load: (type: string) => Promise<unknown> }, 'load');
    const read: string[][] = [];
    const ofIds = mine.ofIds.bind(mine);
    vi.spyOn(mine, 'ofIds').mockImplementation(async (type, ids) => { read.push([...ids]); return ofIds(type, ids); });
    await busOne.sync(); // SQLite's poll: another connection committed — a resync
    const after = await mine.ofType('render');
    expect(after.get('rend_7')).toEqual({ title: 'changed' });
    expect(after.get('rend_new')).toEqual({ title: 'new' });
    expect(after.get('rend_8')).toEqual({ title: 't8' });
    expect(after.size).toBe(5_001);
    expect(loaded).not.toHaveBeenCalled(); // no type read whole
    expect(read.flat().sort()).toEqual(['rend_7', 'rend_9', 'rend_new']); // (written since 30 000 less the margin)
    // the same as every overlay read anew
    expect(after).toEqual(await new OverlayStore(one.kysely, () => t).ofType('render'));
    await busOne.close();
    await busTwo.close();
  });
});
