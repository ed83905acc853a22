import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadMappings } from '../../src/config/mappings.js';
import { Columns, ordered, uuidKey } from '../../src/replica/team/columns.js';
import { recordBuilder } from '../../src/replica/team/records.js';
import { TeamReplica } from '../../src/replica/team/team-replica.js';
import type { IdMapStore } from '../../src/store/idmap.js';
import { derivedUuid, IdTranslator } from '../../src/translate/ids.js';
import type { V1Render } from '../../src/v1/schemas.js';

const mappings = loadMappings('mappings');

describe('the replica columns', () => {
  it('derive each uuid from the v1 id (an imported one held instead), and order and find uuids by their keys', () => {
    const c = new Columns();
    const odd = 'ABCDEF00-0000-4000-8000-000000000001'; // an imported uuid with no lowercase-hex key
    const ids = Array.from({ length: 300 }, (_, i) => `rend_${i.toString(16).padStart(20, '0')}`);
    for (const [i, id] of ids.entries()) {
      const imported = i % 50 === 7 ? `${(i * 2654435761 >>> 0).toString(16).padStart(8, '0')}-0000-4000-8000-000000000000` : i === 11 ? odd : null;
      c.add(id, imported ?? derivedUuid('render', id), imported !== null);
    }
    const uuidOf = (i: number) => (i % 50 === 7 ? `${(i * 2654435761 >>> 0).toString(16).padStart(8, '0')}-0000-4000-8000-000000000000` : i === 11 ? odd : derivedUuid('render', ids[i] as string));
    for (let i = 0; i < 300; i++) {
      expect(c.v1Id(i)).toBe(ids[i]);
      expect(c.uuid(i)).toBe(uuidOf(i));
      expect(c.uuidIs(i, uuidOf(i))).toBe(true);
      expect(c.uuidIs(i, uuidOf((i + 1) % 300))).toBe(false);
    }
    expect(uuidKey(odd)).toBe(-1);
    // the order of uuids by keys is the order of their strings, the odd one included
    const rows = Array.from({ length: 300 }, (_, i) => i);
    const byKeys = c.uuidsKept(() => [...rows].sort((a, b) => c.compareUuids(a, b)));
    expect(byKeys.map((i) => c.uuid(i))).toEqual(rows.map((i) => uuidOf(i)).sort(ordered));
  });

  it('keep titles, outputs and times exactly (250 characters, emoji, NaN) through growth and trim', () => {
    fc.assert(fc.property(fc.array(fc.tuple(fc.string({ unit: 'binary', maxLength: 250 }), fc.option(fc.string(), { nil: null }), fc.double()), { minLength: 1, maxLength: 200 }), (rows) => {
      const c = new Columns();
      for (const [i, [title, rest, t]] of rows.entries()) {
        const row = c.add(`rend_${i}`, derivedUuid('render', `rend_${i}`), false);
        c.setTitle(row, title);
        c.setOutRest(row, rest);
        c.updated.set(row, t);
      }
      c.trim();
      for (const [i, [title, rest, t]] of rows.entries()) {
        expect(c.title(i)).toBe(title);
        expect(c.outRest(i)).toBe(rest);
        expect(Object.is(c.updated.get(i), t)).toBe(true);
      }
    }));
  });

  it('a team finds a render by uuid through a look-up, deriving about one uuid, not by a scan', () => {
    const ids = new IdTranslator({ imported: async () => [] } as unknown as IdMapStore);
    const builder = recordBuilder({ ids, mappings, timeUnit: 'auto' }, () => ({}), {});
    const team = { id: 'team_one', name: 'One', account_id: 'acct_one', role: 'admin' as const, created_at: 1_700_000_000 };
    const t = new TeamReplica({ team, members: [], state: 'ready', backfilledAt: 1, syncedAt: 1, webhookAt: null }, builder);
    for (let i = 0; i < 5000; i++) {
      const r: V1Render = {
        id: `rend_${i}`, name: `render ${i}`, status: 'complete', type: 'cloud', project: { id: 'proj_a', team: team.id },
        created_by: null, created_at: 1_700_000_000 + i, updated_at: null,
      };
      t.apply(r, 1);
    }
    const c = (t.renderColumns() as unknown as { c: Columns }).c;
    const uuid = c.uuid;
    let derived = 0;
    c.uuid = function (row: number) {
      derived++;
      return uuid.call(this, row);
    };
    for (let i = 0; i < 5000; i += 97) expect(t.renderV1(derivedUuid('render', `rend_${i}`))).toBe(`rend_${i}`);
    expect(t.renderV1(derivedUuid('render', 'rend_x'))).toBeUndefined();
    expect(derived).toBeLessThan(60); // 52 found, about one each
    // the same renders looked up again (an answered render is looked up several times): their uuids are not derived again
    c.uuid = uuid;
    const v1Id = c.v1Id;
    let read = 0;
    c.v1Id = function (row: number) {
      read++;
      return v1Id.call(this, row);
    };
    for (let pass = 0; pass < 3; pass++) for (let i = 0; i < 5000; i += 97) expect(t.renderV1(derivedUuid('render', `rend_${i}`))).toBe(`rend_${i}`);
    // each look-up reads the v1 id it answers; a derivation would read it once more (52 in the first pass at most)
    expect(read).toBeLessThanOrEqual(52 * 3 + 52);
  });

  it('views are made when asked for, not held; a view held across changes reads its row as it is now', async () => {
    const imported = [{ type: 'render', uuid: '11111111-2222-4333-8444-555555555555', v1Id: 'rend_1' }];
    const ids = new IdTranslator({ imported: async () => imported } as unknown as IdMapStore);
    const builder = recordBuilder({ ids, mappings, timeUnit: 'auto' }, () => ({}), {});
    const team = { id: 'team_one', name: 'One', account_id: 'acct_one', role: 'admin' as const, created_at: 1_700_000_000 };
    const t = new TeamReplica({ team, members: [], state: 'ready', backfilledAt: 1, syncedAt: 1, webhookAt: null }, builder);
    const r: V1Render = {
      id: 'rend_1', name: 'first 🎬', status: 'processing', type: 'cloud', project: { id: 'proj_a', team: team.id },
      created_by: null, created_at: 1_700_000_000, updated_at: 1_700_000_001,
    };
    t.apply(r, 1);
    const held = t.renderRecord('rend_1')!;
    expect([held.id, held.title, held.date_updated]).toEqual([derivedUuid('render', 'rend_1'), 'first 🎬', '2023-11-14T22:13:21.000Z']);
    expect(t.renderRecord('rend_1')).not.toBe(held); // a new view each time: none is held a row
    t.apply({ ...r, name: 'second', status: 'complete', updated_at: 1_700_000_009 }, 2);
    expect([held.title, held.status, held.date_updated]).toEqual(['second', 'complete', '2023-11-14T22:13:29.000Z']);
    await ids.load();
    t.invalidateRecords();
    expect(held.id).toBe(imported[0]!.uuid);
    expect(t.renderRecords().map((x) => x.id)).toEqual([imported[0]!.uuid]);
  });
});
