import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RecordInputs } from '../../src/replica/holding/record-inputs.js';
import { RenderRows } from '../../src/replica/team/render-rows.js';
import { RenderRecords } from '../../src/replica/team/record-view.js';
import { TeamReplica } from '../../src/replica/team/team-replica.js';
import type { ChangeBus } from '../../src/store/changes.js';
import { overlayKey, type OverlayStore } from '../../src/store/render-extras.js';
import type { IdMapStore } from '../../src/store/idmap.js';
import { IdTranslator } from '../../src/translate/ids.js';
import { RENDER_STATUSES, type V1Render, type V1Team } from '../../src/v1/schemas.js';
import { mappings } from '../query/fixtures.js';

/**
 * Overlay writes reach the replica's records at the cost of what changed: the writes heard in one turn are read back
 * once, and only the rows whose overlays changed are flagged again — no render's uuid is derived again (attack pass 14,
 * H1: each item of a 100-key PATCH re-derived every render's uuid of every team; the instance froze 13–15 s).
 */
const T0 = 1_700_000_000;
const team: V1Team = { id: 'team_o', name: 'o', account_id: 'acct_o', role: 'admin', created_at: T0 };

function setup() {
  const listeners = new Map<string, ((key: string) => void)[]>();
  const bus = {
    on: (topic: string, fn: (key: string) => void) => listeners.set(topic, [...(listeners.get(topic) ?? []), fn]),
    onResync: () => {},
    publish: async (topic: string, key = '*') => { for (const fn of listeners.get(topic) ?? []) fn(key); },
  } as unknown as ChangeBus;
  const stored = new Map<string, Record<string, unknown>>();
  let reads = 0;
  let idsRead = 0;
  const overlays = {
    ofType: async (type: string) => { reads++; return type === 'render' ? new Map([...stored].map(([k, v]) => [k, { ...v }])) : new Map(); },
    ofIds: async (type: string, v1Ids: readonly string[]) => {
      idsRead += v1Ids.length;
      return new Map(type === 'render' ? v1Ids.flatMap((id) => (stored.has(id) ? [[id, { ...stored.get(id) }] as const] : [])) : []);
    },
  } as unknown as OverlayStore;
  const ids = new IdTranslator({ imported: async () => [] } as unknown as IdMapStore);
  const teams: TeamReplica[] = [];
  const inputs = new RecordInputs({
    logger: pino({ level: 'silent' }), bus, ids, mappings, overlays, timeUnit: 'auto', credits: {}, teams: () => teams,
  });
  inputs.listen();
  const t = new TeamReplica({ team, members: [], state: 'ready', backfilledAt: 1, syncedAt: 1, webhookAt: null }, inputs.builder);
  t.setProject({
    project: { id: 'proj_0', name: 'p0', team: { id: team.id, name: team.name }, created_by: null, created_at: T0, updated_at: null, thumbnail_url: null },
    templates: [], backfilled: true,
  }, 1);
  for (let i = 0; i < 2_000; i++) {
    t.apply({
      id: `rend_${i}`, name: `title ${i}`, status: RENDER_STATUSES[i % 7]!, type: 'cloud', project: { id: 'proj_0', team: team.id },
      created_by: null, created_at: T0 + i, updated_at: null,
    } as V1Render, 1);
  }
  teams.push(t);
  return { bus, stored, inputs, t, teams, reads: () => reads, idsRead: () => idsRead };
}

afterEach(() => vi.restoreAllMocks());

describe('overlay writes and the replica', () => {
  it('100 writes, each awaited as a write by query awaits its store: read back once, no uuid derived again, the records show them', async () => {
    const { bus, stored, inputs, t, reads } = setup();
    await inputs.ready;
    const uuidBefore = t.renderRecord('rend_5')!.id;
    const reidentified = vi.spyOn(RenderRows.prototype, 'reidentify');
    const readsBefore = reads();
    for (let i = 0; i < 100; i++) {
      stored.set(`rend_${i}`, { title: `kept ${i}` });
      await bus.publish('overlays', 'render');
      for (let k = 0; k < 5; k++) await Promise.resolve(); // (a store write that resolves at once)
    }
    await inputs.ready;
    expect(reidentified).not.toHaveBeenCalled();
    // one read of each overlay type (3) for the 100 writes
    expect(reads() - readsBefore).toBe(3);
    expect(t.renderRecord('rend_5')!.title).toBe('kept 5');
    expect(t.renderRecord('rend_5')!.id).toBe(uuidBefore);
    expect(t.renderRecord('rend_150')!.title).toBe('title 150');
    // an overlay taken away: the render reads v1's title again
    stored.delete('rend_5');
    await bus.publish('overlays', 'render');
    await inputs.ready;
    expect(t.renderRecord('rend_5')!.title).toBe('title 5');
    expect(reidentified).not.toHaveBeenCalled();
  });

  it('a change that names its items reads those items only, and a team holding none of them keeps its records (attack pass 15: every chunk of a write by query read every overlay back)', async () => {
    const { bus, stored, inputs, t, teams, reads, idsRead } = setup();
    const other = new TeamReplica({ team: { ...team, id: 'team_x' }, members: [], state: 'ready', backfilledAt: 1, syncedAt: 1, webhookAt: null }, inputs.builder);
    other.apply({
      id: 'rend_x', name: 'x', status: 'complete', type: 'cloud', project: { id: 'proj_x', team: 'team_x' }, created_by: null, created_at: T0, updated_at: null,
    } as V1Render, 1);
    teams.push(other);
    await inputs.ready;
    const readsBefore = reads();
    const otherRebuilt = vi.spyOn(other as unknown as { recordsChanged: () => void }, 'recordsChanged');
    const mineRebuilt = vi.spyOn(t as unknown as { recordsChanged: () => void }, 'recordsChanged');
    // 2 000 items written in chunks of 100, each chunk its own change naming its items
    for (let c = 0; c < 20; c++) {
      const chunk = Array.from({ length: 100 }, (_, i) => `rend_${c * 100 + i}`);
      for (const id of chunk) stored.set(id, { title: `kept ${id}` });
      await bus.publish('overlays', overlayKey('render', chunk));
      await inputs.ready;
    }
    expect(reads() - readsBefore).toBe(0); // no type read whole
    expect(idsRead()).toBe(2_000); // each item read back once
    expect(t.renderRecord('rend_1999')!.title).toBe('kept rend_1999');
    expect(t.renderRecord('rend_0')!.title).toBe('kept rend_0');
    expect(mineRebuilt).toHaveBeenCalledTimes(20);
    expect(otherRebuilt).not.toHaveBeenCalled();
    // an overlay taken away, named: v1's title again
    stored.delete('rend_7');
    await bus.publish('overlays', overlayKey('render', ['rend_7']));
    await inputs.ready;
    expect(t.renderRecord('rend_7')!.title).toBe('title 7');
    // a change that names no item (another instance's, too long to name them): every overlay read again
    await bus.publish('overlays', 'render');
    await inputs.ready;
    expect(reads() - readsBefore).toBe(3);
    expect(inputs.settled).toBe(true);
  });

  it('an overlaid render\'s title, status and dates are read from its overlay and columns, never by building its whole record (re-check of attack pass 14: a filter over 2 000 overlaid titles built a record a test)', async () => {
    const { bus, stored, inputs, t } = setup();
    await inputs.ready;
    for (let i = 0; i < 1_000; i++) stored.set(`rend_${i}`, { title: `kept ${i}` });
    await bus.publish('overlays', 'render');
    await inputs.ready;
    const built = vi.spyOn(RenderRecords.prototype, 'fullRecord');
    const views = t.renderRecords();
    const titles = views.map((v) => v.title as string);
    expect(titles.filter((x) => x.startsWith('kept '))).toHaveLength(1_000);
    expect(titles[1_500]).toBe('title 1500');
    expect(views.map((v) => v.status)).toEqual(Array.from({ length: 2_000 }, (_, i) => mappings.status.toLegacy[RENDER_STATUSES[i % 7]!]));
    expect(views[3]!.date_created).toBe(new Date((T0 + 3) * 1000).toISOString());
    expect(built).not.toHaveBeenCalled();
    // a field the view reads from the record (output) still builds it, with the overlay
    expect(t.renderRecord('rend_3')!.title).toBe('kept 3');
  });
});
