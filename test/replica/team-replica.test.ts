import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadMappings } from '../../src/config/mappings.js';
import { DataAtHand, withDataAtHand } from '../../src/translate/data-at-hand.js';
import { recordBuilder, type Overlays } from '../../src/replica/team/records.js';
import { TeamReplica } from '../../src/replica/team/team-replica.js';
import type { IdMapStore } from '../../src/store/idmap.js';
import { IdTranslator } from '../../src/translate/ids.js';
import { RENDER_STATUSES, type V1Project, type V1Render, type V1Team } from '../../src/v1/schemas.js';

const mappings = loadMappings('mappings');
const team: V1Team = { id: 'team_one', name: 'One', account_id: 'acct_one', role: 'admin', created_at: 1_700_000_000 };
const projects: V1Project[] = ['proj_a', 'proj_b'].map((id, i) => ({
  id, name: id, team: { id: team.id, name: team.name }, created_by: null, created_at: 1_700_000_000 + i, updated_at: null,
  thumbnail_url: i === 0 ? `https://cdn.example/p/${id}.jpg?expires=1790000000&signature=${'cd'.repeat(16)}` : null,
}));

function setUp(imported: { type: string; uuid: string; v1Id: string }[] = []) {
  const ids = new IdTranslator({ imported: async () => imported } as unknown as IdMapStore);
  let overlays: Overlays = {};
  const builder = recordBuilder({ ids, mappings, timeUnit: 'auto' }, () => overlays, {});
  const t = new TeamReplica({ team, members: [], state: 'ready', backfilledAt: 1, syncedAt: 1, webhookAt: null }, builder);
  for (const p of projects) t.setProject({ project: p, templates: [], backfilled: true }, 1);
  return { t, builder, ids, setOverlays: (o: Overlays) => { overlays = o; t.invalidateRecords(); } };
}

const sig = fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 32, maxLength: 32 });
const render = (n: number): fc.Arbitrary<V1Render> => fc.record({
  status: fc.constantFrom(...RENDER_STATUSES),
  type: fc.constantFrom('local', 'cloud') as fc.Arbitrary<'local' | 'cloud'>,
  name: fc.string({ maxLength: 30 }),
  project: fc.constantFrom('proj_a', 'proj_b'),
  created_by: fc.option(fc.constantFrom('user_1', 'user_2'), { nil: null }),
  created_at: fc.integer({ min: 1_700_000_000, max: 1_700_000_050 }),
  updated: fc.option(fc.integer({ min: 0, max: 100 }), { nil: null }),
  variants: fc.subarray(['master', '1080p', '720p', 'still', 'gif_preview']),
  sig,
}).map((x) => {
  const id = `rend_${n}`;
  const r: V1Render = {
    id, name: x.name, status: x.status, type: x.type, project: { id: x.project, team: team.id }, created_by: x.created_by,
    created_at: x.created_at, updated_at: x.updated === null ? null : x.created_at + x.updated,
  };
  if (x.status === 'complete') {
    r.output = Object.fromEntries(x.variants.map((v) => [v, `https://cdn.example/renders/${id}/${v}?expires=1790000000&signature=${x.sig}`]));
  }
  return r;
});

describe('the render index held in columns', () => {
  it('reads every legacy field of every render as the translator builds it (overlays, data, outputs, creators)', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 25 }).chain((ns) =>
      fc.tuple(fc.tuple(...[...new Set(ns)].map(render)), fc.subarray([...new Set(ns)]), fc.subarray([...new Set(ns)]))),
    ([renders, overlaid, withData]) => {
      const { t, builder, setOverlays } = setUp();
      for (const r of renders) t.apply(r, 5);
      // the data the gateway sent is read from the store by each evaluation: here, a hand holding it
      const data = new Map(withData.map((n) => [`rend_${n}`, { n, text: 'x' }]));
      const hand = new DataAtHand();
      hand.fill(renders.map((r) => r.id), data, 0);
      setOverlays({ render: new Map(overlaid.map((n) => [`rend_${n}`, { title: `overlay ${n}` }])) });
      expect(t.size).toBe(renders.length);
      for (const r of renders) {
        const expected = builder.render(r, data.get(r.id) ?? {}, projects.find((p) => p.id === r.project.id));
        const view = t.renderRecord(r.id) as Record<string, unknown>;
        const read = withDataAtHand(hand, () => Object.fromEntries(builder.renderFields.map((f) => [f, view[f]])));
        expect(read).toEqual(Object.fromEntries(builder.renderFields.map((f) => [f, expected[f]])));
        expect(t.render(r.id)?.render).toEqual(r); // the v1 object comes back whole
        expect(t.renderV1(expected.id as string)).toBe(r.id);
      }
      expect(builder.renderFields).toEqual(expect.arrayContaining(['id', 'status', 'title', 'output', 'data', 'process_id', 'download_ready']));
    }), { numRuns: 60 });
  });

  it('moves its version on every change an answer can show, not for an older state or a sync that changed nothing, never to a used value', () => {
    fc.assert(fc.property(fc.tuple(render(1), render(2)), ([a, b]) => {
      const { t, setOverlays } = setUp();
      const seen = new Set<number>([t.version]);
      const moved = (what: string, change: () => unknown) => {
        const before = t.version;
        change();
        expect(t.version, what).toBeGreaterThan(before);
        expect(seen.has(t.version), what).toBe(false);
        seen.add(t.version);
      };
      moved('a new render', () => t.apply(a, 5));
      moved('a newer state', () => t.apply({ ...a, status: 'failed', updated_at: (a.updated_at ?? a.created_at) + 10 }, 7));
      const v = t.version;
      expect(t.apply(a, 8)).toBe(false); // an older state: not applied, nothing to show
      expect(t.version).toBe(v);
      moved('render data', () => t.dataChanged([a.id]));
      moved('a pair the id store lost (to be given again by the next answer)', () => t.forgetPaired('render', a.id));
      moved("a project's pair the id store lost", () => t.forgetPaired('project', a.project.id));
      moved('overlays', () => setOverlays({ render: new Map([[a.id, { title: 'overlaid' }]]) }));
      moved('a project', () => t.setProject({ project: { ...projects[0]!, name: 'renamed' }, templates: [], backfilled: true }, 9));
      moved('the team', () => t.setRow({ team: { ...team, name: 'Two' }, members: [], state: 'ready', backfilledAt: 1, syncedAt: 2, webhookAt: null }));
      const syncedOnly = t.version;
      t.setRow({ team: { ...team, name: 'Two' }, members: [], state: 'ready', backfilledAt: 1, syncedAt: 3, webhookAt: null });
      expect(t.version).toBe(syncedOnly); // a sync that changed nothing
      moved('a dropped project', () => t.dropProject(projects[0]!.id));
      // a copy read back from the store (a new object, as after an eviction) never repeats a version of the first
      const again = setUp().t;
      again.apply(a, 5);
      again.apply(b, 5);
      expect(seen.has(again.version)).toBe(false);
    }), { numRuns: 20 });
  });

  it('keeps the newest state, the newest-first order, the moving set and projects as renders change and projects go', () => {
    fc.assert(fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 30 }), render(0)), { minLength: 1, maxLength: 80 }), (changes) => {
      const { t } = setUp();
      const model = new Map<string, V1Render>();
      for (const [n, base] of changes) {
        const r = { ...base, id: `rend_${n}` };
        if (r.output) r.output = Object.fromEntries(Object.entries(r.output).map(([k, v]) => [k, v.replace('rend_0', r.id)]));
        const prev = model.get(r.id);
        const newer = !prev || ((prev.updated_at ?? prev.created_at) <= (r.updated_at ?? r.created_at)
          && ({ initializing: 0, ready: 1, queued: 2, processing: 3, finalizing: 4, complete: 5, failed: 5 } as const)[prev.status]
          <= ({ initializing: 0, ready: 1, queued: 2, processing: 3, finalizing: 4, complete: 5, failed: 5 } as const)[r.status]);
        expect(t.apply(r, 1)).toBe(newer);
        if (newer) model.set(r.id, r);
      }
      const check = () => {
        expect(t.size).toBe(model.size);
        for (const r of model.values()) expect(t.render(r.id)?.render).toEqual(r);
        const uuid = (id: string) => t.renderRecord(id)?.id as string;
        const expectedOrder = [...model.values()].sort((a, b) => b.created_at - a.created_at || (uuid(a.id) < uuid(b.id) ? -1 : 1)).map((r) => r.id);
        expect(t.newestFirst().map((row) => t.idOfRow(row))).toEqual(expectedOrder);
        expect(new Set(t.movingIds())).toEqual(new Set([...model.values()].filter((r) => r.status !== 'complete' && r.status !== 'failed').map((r) => r.id)));
        for (const p of ['proj_a', 'proj_b']) {
          expect(t.projectRenderIds(p)).toEqual(expectedOrder.filter((id) => model.get(id)?.project.id === p)
            .sort((a, b) => (model.get(b) as V1Render).created_at - (model.get(a) as V1Render).created_at || (a < b ? -1 : 1)));
        }
      };
      check();
      t.dropProject('proj_a');
      for (const [id, r] of [...model]) if (r.project.id === 'proj_a') model.delete(id);
      check();
      // after the rebuild every record still reads its own render
      expect(t.renderRecords().map((v) => `${v.title as string}|${v.status as string}`).sort())
        .toEqual([...model.values()].map((r) => `${r.name}|${mappings.status.toLegacy[r.status] as string}`).sort());
    }), { numRuns: 80 });
  });

  it('a record a reader holds keeps reading its own render when projects go; counts, orders and look-ups forget them', () => {
    const { t } = setUp();
    const renders = fc.sample(fc.tuple(render(1), render(2), render(3), render(4)), 1)[0]!.map((r, k) => ({
      ...r, project: { id: k < 2 ? 'proj_a' : 'proj_b', team: team.id }, output: undefined, status: 'queued' as const,
    }));
    for (const r of renders) t.apply(r, 1);
    const held = renders.map((r) => t.renderRecord(r.id)!);
    const before = held.map((v) => ({ id: v.id, title: v.title, project: v.project, process_id: v.process_id }));
    t.dropProject('proj_a');
    expect(held.map((v) => ({ id: v.id, title: v.title, project: v.project, process_id: v.process_id }))).toEqual(before);
    expect(t.size).toBe(2);
    expect(t.renderRecords().map((v) => v.id)).toEqual([before[2]!.id, before[3]!.id]);
    expect(t.renderV1(before[0]!.id as string)).toBeUndefined();
    expect(t.has('rend_1')).toBe(false);
    expect(t.newestFirst().map((row) => t.idOfRow(row)).sort()).toEqual(['rend_3', 'rend_4']);
    expect(t.movingIds().sort()).toEqual(['rend_3', 'rend_4']);
    expect(t.rendersByKey(null, 10).map((v) => v.id).sort()).toEqual([before[2]!.id, before[3]!.id].sort());
    // the project comes back with one of its renders
    t.apply({ ...renders[0]!, updated_at: (renders[0]!.updated_at ?? renders[0]!.created_at) + 1 }, 2);
    expect(t.size).toBe(3);
    expect(t.renderRecord('rend_1')?.id).toBe(before[0]!.id);
  });

  it('primary-key orders follow renders that join or move between projects, not only the count', () => {
    const { t } = setUp();
    const [a, b] = fc.sample(fc.tuple(render(10), render(11)), 1)[0]!.map((r) => ({ ...r, project: { id: 'proj_a', team: team.id } }));
    t.apply(a!, 1);
    expect(t.rendersByKey('proj_a', 10).map((v) => v.id)).toEqual([t.renderRecord('rend_10')!.id]);
    // rend_10 moves to proj_b and rend_11 joins proj_a: proj_a still holds one render, another one
    t.apply({ ...a!, project: { id: 'proj_b', team: team.id }, updated_at: (a!.updated_at ?? a!.created_at) + 1 }, 2);
    t.apply(b!, 2);
    expect(t.rendersByKey('proj_a', 10).map((v) => v.id)).toEqual([t.renderRecord('rend_11')!.id]);
    expect(t.rendersByKey('proj_b', 10).map((v) => v.id)).toEqual([t.renderRecord('rend_10')!.id]);
  });

  it('gives each answered pair once, and again after a failed write lost it', () => {
    const { t } = setUp();
    const r = fc.sample(render(20), 1)[0]!;
    t.apply(r, 1);
    const uuid = t.renderRecord(r.id)!.id as string;
    expect(t.unpaired(uuid)).toBe(r.id);
    expect(t.unpaired(uuid)).toBeUndefined();
    t.apply({ ...r, updated_at: (r.updated_at ?? r.created_at) + 5 }, 2); // a new state keeps the pair given
    expect(t.unpaired(uuid)).toBeUndefined();
    t.forgetPaired('render', r.id);
    expect(t.unpaired(uuid)).toBe(r.id);
  });

  it('a failed write of the id store hands the lost pairs to its listeners (the index gives them again)', async () => {
    let fail = true;
    const written: unknown[] = [];
    const ids = new IdTranslator({ imported: async () => [], remember: async (p: unknown[]) => { if (fail) throw new Error('store down'); written.push(...p); } } as unknown as IdMapStore);
    const builder = recordBuilder({ ids, mappings, timeUnit: 'auto' }, () => ({}), {});
    const t = new TeamReplica({ team, members: [], state: 'ready', backfilledAt: 1, syncedAt: 1, webhookAt: null }, builder);
    ids.onLost((pairs) => { for (const p of pairs) t.forgetPaired(p.type, p.v1Id); });
    const r = fc.sample(render(50), 1)[0]!;
    t.apply(r, 1);
    const uuid = t.renderRecord(r.id)!.id as string;
    ids.queue('render', t.unpaired(uuid)!, uuid);
    await expect(ids.flush()).rejects.toThrow('store down');
    fail = false;
    const again = t.unpaired(uuid);
    expect(again).toBe(r.id);
    ids.queue('render', again!, uuid);
    await ids.flush();
    expect(written).toEqual([{ type: 'render', uuid, v1Id: r.id, source: 'derived' }]);
  });

  it('a render read before its project was known shows the project thumbnail once the project arrives', () => {
    const { t, builder } = setUp();
    const r: V1Render = { ...fc.sample(render(30), 1)[0]!, project: { id: 'proj_new', team: team.id }, status: 'complete', output: { master: 'https://cdn.example/m.mov' } };
    t.apply(r, 1);
    expect((t.renderRecord(r.id)!.output as { poster: unknown }).poster).toBeNull();
    const project = { ...projects[0]!, id: 'proj_new' };
    t.setProject({ project, templates: [], backfilled: true }, 2);
    expect(t.renderRecord(r.id)!.output).toEqual(builder.render(r, {}, project).output);
    expect((t.renderRecord(r.id)!.output as { poster: unknown }).poster).toBe(project.thumbnail_url);
  });

  it('an overlay made before a render\'s new state is read by that state (the flag is checked on every apply)', () => {
    let overlays: Overlays = {};
    const ids = new IdTranslator({ imported: async () => [] } as unknown as IdMapStore);
    const builder = recordBuilder({ ids, mappings, timeUnit: 'auto' }, () => overlays, {});
    const t = new TeamReplica({ team, members: [], state: 'ready', backfilledAt: 1, syncedAt: 1, webhookAt: null }, builder);
    const r = fc.sample(render(40), 1)[0]!;
    t.apply(r, 1);
    overlays = { render: new Map([[r.id, { title: 'kept title' }]]) }; // (no invalidateRecords: e.g. a team loading meanwhile)
    t.apply({ ...r, updated_at: (r.updated_at ?? r.created_at) + 1 }, 2);
    expect(t.renderRecord(r.id)!.title).toBe('kept title');
  });

  it('answers imported uuids once the pairs are read (records rebuilt)', async () => {
    const imported = [{ type: 'render', uuid: '11111111-2222-4333-8444-555555555555', v1Id: 'rend_7' }];
    const { t, ids } = setUp(imported);
    const r = fc.sample(render(7), 1)[0] as V1Render;
    t.apply(r, 1);
    const before = t.renderRecord('rend_7')?.id;
    await ids.load();
    t.invalidateRecords();
    expect(before).not.toBe(imported[0]?.uuid);
    expect(t.renderRecord('rend_7')?.id).toBe(imported[0]?.uuid);
    expect(t.renderV1(imported[0]?.uuid as string)).toBe('rend_7');
    expect(t.renderV1(before as string)).toBeUndefined();
  });
});
