import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { execute } from '../../src/exec/execute.js';
import { bodyJson, itemBytes, keepJson, keepPageJson } from '../../src/lib/item-bytes.js';
import { RawJson } from '../../src/exec/raw-json.js';
import { ReplicaSource } from '../../src/exec/replica-source.js';
import type { RecordSource } from '../../src/exec/source.js';
import { planQuery } from '../../src/plan/plan.js';
import { unlimited } from '../../src/query/budget.js';
import { parseQuery } from '../../src/query/parse-query.js';
import type { ResourceSchema } from '../../src/query/schema.js';
import { recordBuilder, type Overlays } from '../../src/replica/team/records.js';
import { ReplicaSnapshot } from '../../src/replica/reads/snapshot.js';
import { TeamReplica } from '../../src/replica/team/team-replica.js';
import { SimClock } from '../../src/sim/clock.js';
import { SCALES } from '../../src/sim/generator.js';
import { World } from '../../src/sim/world.js';
import type { IdMapStore } from '../../src/store/idmap.js';
import { IdTranslator } from '../../src/translate/ids.js';
import type { V1Render } from '../../src/v1/schemas.js';
import { ctx, mappings, schemas } from '../query/fixtures.js';

/** The simulator's world (unicode and 250-character titles, signed outputs) held by one replica team per v1 team. */
function simReplica() {
  const world = new World(new SimClock('manual', 1_750_000_000_000), 3, SCALES.small!);
  const ids = new IdTranslator({ imported: async () => [] } as unknown as IdMapStore);
  let overlays: Overlays = {};
  const builder = recordBuilder({ ids, mappings, timeUnit: 'auto' }, () => overlays, {});
  const teams = new Map<string, TeamReplica>();
  for (const sim of world.teams.values()) {
    const team = { id: sim.id, name: sim.name, account_id: sim.accountId, role: 'admin' as const, created_at: Math.floor(sim.createdAt / 1000) };
    teams.set(sim.id, new TeamReplica({ team, members: [], state: 'ready', backfilledAt: 1, syncedAt: 1, webhookAt: null }, builder));
  }
  for (const p of world.projects.values()) teams.get(p.teamId)!.setProject({ project: world.projectView(p), templates: [], backfilled: true }, 1);
  const renders: V1Render[] = [...world.renders.values()].map((r) => world.renderView(r));
  for (const r of renders) teams.get(r.project.team)!.apply(r, 1);
  // the data the gateway sent, as the store holds it (read by each evaluation)
  const data = new Map<string, unknown>();
  const hooks = { refresh: async () => {}, answered: () => {}, flush: async () => {}, data: async () => data, dataSizes: async () => new Map([...data].map(([k, v]) => [k, JSON.stringify(v).length])), now: 10 };
  const source = new ReplicaSource(new ReplicaSnapshot([...teams.values()], 25), hooks);
  // the same source without kept items: every record projected afresh, as before
  const plain: RecordSource = new Proxy(source, { get: (o, k) => (k === 'shaped' ? undefined : Reflect.get(o, k, o)) });
  const setOverlays = (o: Overlays) => {
    overlays = o;
    for (const t of teams.values()) t.invalidateRecords();
  };
  return { teams, renders, source, plain, setOverlays, data };
}

const FIELDS = [
  ['*'], ['id', 'title'], ['title', 'status', 'output', 'data', 'date_created', 'date_updated'], ['*', 'project.title'], ['id', 'year(date_created)'],
];
const questionArb = fc.record({
  fields: fc.constantFrom(...FIELDS),
  sort: fc.constantFrom(undefined, '-date_created', 'title', 'status,-id', 'date_created'),
  limit: fc.integer({ min: 1, max: 40 }),
  offset: fc.nat(30),
  status: fc.option(fc.constantFrom('complete', 'failed', 'draft'), { nil: undefined }),
  meta: fc.boolean(),
  alias: fc.boolean(),
});
type Question = typeof questionArb extends fc.Arbitrary<infer Q> ? Q : never;

async function answer(src: RecordSource, x: Question): Promise<Record<string, unknown>> {
  const raw: Record<string, unknown> = { fields: x.alias ? [...x.fields, 'name'] : x.fields, limit: String(x.limit), offset: String(x.offset) };
  if (x.alias) raw.alias = { name: 'title' };
  if (x.sort) raw.sort = x.sort;
  if (x.status) raw.filter = JSON.stringify({ status: { _eq: x.status } });
  if (x.meta) raw.meta = 'filter_count';
  const q = parseQuery(raw, schemas.render as ResourceSchema, ctx());
  const plan = planQuery(q, 'render', { statusToV1: mappings.status.toV1, schemas });
  const res = await execute('render', q, plan, src, { schemas, budget: unlimited() });
  return res.meta ? { meta: res.meta, data: res.data } : { data: res.data };
}

/** A change to the world: a render renamed (emoji, quotes, 250 characters) or finished with outputs, data set, overlays. */
const changeArb = fc.record({
  render: fc.nat(),
  kind: fc.constantFrom('rename', 'complete', 'data', 'overlay'),
  title: fc.constantFrom('🎬 "quoted" \\ back\u2028line', 'A'.repeat(250), 'ünïcødé\ttab', '</script>'),
});

describe('the answered page written from kept items', () => {
  it('is byte for byte JSON.stringify of the records projected afresh, as renders change under it', async () => {
    const w = simReplica();
    let n = 0;
    const byId = new Map(w.renders.map((r) => [r.id, r]));
    await fc.assert(fc.asyncProperty(questionArb, fc.array(changeArb, { maxLength: 3 }), async (x, changes) => {
      // the page answered once (its items kept), then renders it answered change
      await answer(w.source, x);
      const answered = ((await answer(w.plain, { ...x, fields: ['id'], alias: false })).data as Record<string, unknown>[]).flatMap((rec) => {
        const t = [...w.teams.values()].find((tm) => tm.renderV1(rec.id as string) !== undefined);
        const v1 = t?.renderV1(rec.id as string);
        return t && v1 ? [{ t, r: byId.get(v1)! }] : [];
      });
      for (const c of answered.length > 0 ? changes : []) {
        const { t, r } = answered[c.render % answered.length]!;
        const at = (r.updated_at ?? r.created_at) + 10 + n++;
        let next: V1Render | undefined;
        if (c.kind === 'rename') next = { ...r, name: c.title, updated_at: at };
        else if (c.kind === 'complete') {
          const master = `https://cdn.example/${r.id}/master.mov?expires=1790000000&signature=${'ab'.repeat(16)}`;
          next = { ...r, status: 'complete', updated_at: at, output: { master } };
        } else if (c.kind === 'data') {
          w.data.set(r.id, { note: c.title, n });
          t.dataChanged([r.id]);
        }
        else w.setOverlays({ render: new Map([[r.id, { title: c.title }]]) });
        if (next) {
          t.apply(next, 2);
          byId.set(r.id, next);
        }
      }
      const expected = JSON.stringify(await answer(w.plain, x));
      // twice: the second answer comes from the kept items
      for (let i = 0; i < 2; i++) {
        const body = await answer(w.source, x);
        expect(bodyJson(body).toString()).toBe(expected);
        expect(JSON.stringify(body)).toBe(expected);
      }
    }), { numRuns: 120 });
  });

  it('keeps an item given again frozen, with its text, until its row changes', async () => {
    const w = simReplica();
    const x: Question = { fields: ['*'], sort: '-date_created', limit: 5, offset: 0, status: undefined, meta: false, alias: false };
    const first = (await answer(w.source, x)).data as Record<string, unknown>[];
    const again = (await answer(w.source, x)).data as Record<string, unknown>[];
    expect(again[0]).toBe(first[0]);
    expect(Object.isFrozen(again[0])).toBe(true);
    // a selection through a relation is projected afresh each time
    const related = { ...x, fields: ['*', 'project.title'] };
    const [a, b] = [(await answer(w.source, related)).data as unknown[], (await answer(w.source, related)).data as unknown[]];
    expect(a[0]).not.toBe(b[0]);
    // the newest render renamed: its item is made again, the others are still the kept ones
    const newest = w.renders.find((r) => (first[0] as Record<string, unknown>).title === r.name && r.id)!;
    const t = [...w.teams.values()].find((tm) => tm.has(newest.id))!;
    t.apply({ ...newest, name: 'renamed 🎬', updated_at: (newest.updated_at ?? newest.created_at) + 1 }, 2);
    const after = (await answer(w.source, x)).data as Record<string, unknown>[];
    const renamed = after.find((r) => r.title === 'renamed 🎬');
    expect(renamed).toBeDefined();
    expect(first).not.toContain(renamed);
    expect(after.filter((r) => first.includes(r))).toHaveLength(4);
  });
});

describe('bodyJson', () => {
  const member = fc.oneof(fc.jsonValue(), fc.constant(undefined));
  it('writes what JSON.stringify writes, kept items or not', () => {
    fc.assert(fc.property(
      fc.array(fc.tuple(fc.dictionary(fc.string(), member), fc.boolean())), fc.option(fc.dictionary(fc.string(), fc.integer())), member, fc.boolean(),
      (items, meta, extra, one) => {
        const data = items.map(([o, keep]) => (keep ? keepJson({ ...o }) : o));
        const body: Record<string, unknown> = meta ? { meta, data: one ? data[0] : data } : { data: one ? data[0] : data };
        if (extra !== undefined) body.explain = extra;
        expect(bodyJson(body).toString()).toBe(JSON.stringify(body));
        for (const d of data) expect(itemBytes(d)?.toString()).toBe(JSON.stringify(d));
        for (const d of data) expect(new TextDecoder().decode(RawJson.of(d).json)).toBe(JSON.stringify(d));
      },
    ), { numRuns: 300 });
  });

  it('writes a page from the texts kept with its array, mixed with kept items and items without text, as JSON.stringify does', () => {
    fc.assert(fc.property(
      fc.array(fc.tuple(fc.dictionary(fc.string(), member), fc.constantFrom('page', 'kept', 'none'))), fc.option(fc.dictionary(fc.string(), fc.integer())),
      (items, meta) => {
        const data = items.map(([o, how]) => (how === 'kept' ? keepJson({ ...o }) : o));
        const texts = items.map(([, how], i) => (how === 'page' ? JSON.stringify(data[i]) : undefined));
        const body = meta ? { meta, data: keepPageJson(data, texts) } : { data: keepPageJson(data, texts) };
        expect(bodyJson(body).toString()).toBe(JSON.stringify(body));
        // the texts are the page's: another array of the same items, or texts for fewer items, are written afresh
        expect(bodyJson({ data: [...data] }).toString()).toBe(JSON.stringify({ data }));
        expect(bodyJson({ data: keepPageJson([...data, { late: 1 }], texts) }).toString()).toBe(JSON.stringify({ data: [...data, { late: 1 }] }));
      },
    ), { numRuns: 300 });
  });

  it('writes the kept page text, not the item again (the text is what was measured)', () => {
    const item = { id: 'a' };
    const body = { data: keepPageJson([item], ['{"id":"as measured"}']) };
    expect(bodyJson(body).toString()).toBe('{"data":[{"id":"as measured"}]}');
  });

  it('writes arrays with holes and members without JSON as JSON.stringify does', () => {
    const body = { data: [undefined, () => 1, keepJson({ a: '\u2028"x"' }), null, 1e21, -0], meta: { filter_count: 2 }, skipped: undefined };
    expect(bodyJson(body).toString()).toBe(JSON.stringify(body));
    expect(bodyJson([1, 2]).toString()).toBe('[1,2]');
    expect(bodyJson('x').toString()).toBe('"x"');
  });
});

describe('bodyJson of a very long list (re-check of attack pass 15: a limit=-1 aggregate of 80 000 groups answered 500)', () => {
  it('writes 200 000 items as JSON.stringify does, without overflowing the call stack', () => {
    const body = { data: Array.from({ length: 200_000 }, (_, i) => ({ id: String(i), count: { id: '1' } })), meta: { filter_count: 200_000 } };
    expect(bodyJson(body).toString('utf8')).toBe(JSON.stringify(body));
  });
});
