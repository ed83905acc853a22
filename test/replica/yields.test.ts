import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileSort } from '../../src/query/compile.js';
import type { RecordInputs } from '../../src/replica/holding/record-inputs.js';
import { recordBuilder } from '../../src/replica/team/records.js';
import { TeamRegistry } from '../../src/replica/holding/registry.js';
import { TeamSync } from '../../src/replica/sync/sync.js';
import { TeamReplica } from '../../src/replica/team/team-replica.js';
import { openDb, type Db } from '../../src/store/db.js';
import type { IdMapStore } from '../../src/store/idmap.js';
import { migrate } from '../../src/store/migrations.js';
import { ReplicaStore } from '../../src/store/replica-store.js';
import { IdTranslator } from '../../src/translate/ids.js';
import { RENDER_STATUSES, type V1Render, type V1Team } from '../../src/v1/schemas.js';
import { FieldRef, Sort } from '../../src/query/ast.js';
import { ctx, schemas, mappings } from '../query/fixtures.js';
import { ReplicaSource } from '../../src/exec/replica-source.js';
import { planQuery } from '../../src/plan/plan.js';
import { parseQuery } from '../../src/query/parse-query.js';
import { ReplicaSnapshot } from '../../src/replica/reads/snapshot.js';
import type { ResourceSchema } from '../../src/query/schema.js';

/**
 * Heavy work on a large team gives the event loop turns: a team read whole from the store is applied a slice at a time,
 * so is a sync page, and a new sorted order of a large team is sorted off the question, a slice at a time. Turns are counted (a chain of
 * setImmediate callbacks running beside the work), never timed.
 */
const T0 = 1_700_000_000;
const team: V1Team = { id: 'team_big', name: 'big', account_id: 'acct_big', role: 'admin', created_at: T0 };
const WORDS = ['alpha', 'Beta', 'gamma', 'Épsilon', 'zeta 🎬'];
const render = (i: number, name = `${WORDS[i % 5]} ${(i * 7919) % 1000}`): V1Render => ({
  id: `rend_${String(i).padStart(6, '0')}`, name, status: RENDER_STATUSES[i % RENDER_STATUSES.length]!, type: 'cloud',
  project: { id: `proj_${i % 10}`, team: team.id }, created_by: null, created_at: T0 + i, updated_at: null,
});
const ids = new IdTranslator({ imported: async () => [] } as unknown as IdMapStore);
const builder = recordBuilder({ ids, mappings, timeUnit: 'auto' }, () => ({}), {});

/** Runs `work`, counting the turns of the event loop taken meanwhile. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let on = true;
  const spin = () => {
    if (!on) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  const value = await work();
  on = false;
  return { value, turns };
}

describe('a team read whole from the store', () => {
  let db: Db;
  let store: ReplicaStore;
  const N = 50_000;
  beforeAll(async () => {
    db = await openDb(join(mkdtempSync(join(tmpdir(), 'gw-yields-')), 'store.db'));
    await migrate(db.kysely);
    store = new ReplicaStore(db.kysely, () => 1);
    await store.putTeam(team, []);
    await store.putProjects(team.id, Array.from({ length: 10 }, (_, p) => ({
      id: `proj_${p}`, name: `p${p}`, team: { id: team.id, name: team.name }, created_by: null, created_at: T0, updated_at: null, thumbnail_url: null,
    })));
    const all = Array.from({ length: N }, (_, i) => render(i));
    for (let i = 0; i < N; i += 5000) await store.putRenders(team.id, all.slice(i, i + 5000), 1);
    await store.markBackfilled(team.id, 1);
  }, 120_000);
  afterAll(async () => db?.close());

  it('is applied a slice at a time, the event loop given turns between slices', async () => {
    const inputs = { builder, version: '0' } as unknown as RecordInputs;
    const registry = new TeamRegistry({
      store, clock: { now: () => 1 } as never, inputs, eviction: { maxBytes: 1e12, busy: () => false, logger: pino({ level: 'silent' }) },
    });
    const { value: t, turns } = await turnsDuring(() => registry.load(team.id));
    expect(t?.size).toBe(N);
    // 250 renders a slice: at least one turn a slice
    expect(turns).toBeGreaterThanOrEqual(N / 250);
    // sync pages applied to it a few renders at a time (each moves in the sorted orders the team keeps), the event loop
    // given a turn whenever the slice of long work is used up (`pace`): never a whole page of 10 000 renders in one turn
    const sync = new TeamSync({ store, clock: { now: () => 2 } as never, logger: pino({ level: 'silent' }), concurrency: 1, signedUrlTtlMs: 300_000 });
    const page = Array.from({ length: 10_000 }, (_, i) => ({ ...render((i * 97) % N), name: `renamed ${i}`, updated_at: T0 + 100_000 + i }));
    const changes = { renders: [] as string[] };
    const at: number[] = []; // renders applied at each turn
    let on = true;
    const spin = () => { if (!on) return; at.push(changes.renders.length); setImmediate(spin); };
    setImmediate(spin);
    await sync.put(t!, page, changes);
    on = false;
    expect(changes.renders.length).toBeGreaterThan(9_000); // (a render met twice on the page is applied once)
    const between = at.slice(1).map((n, i) => n - (at[i] as number));
    expect(at.length).toBeGreaterThanOrEqual(5);
    // at most a slice of renders between two turns (1 ms of applying: far fewer than 2 000)
    expect(Math.max(...between)).toBeLessThan(2_000);
  }, 120_000);
});

/** A team of one project holding `n` renders. */
function oneProjectTeam(n: number): TeamReplica {
  const t = new TeamReplica({ team, members: [], state: 'ready', backfilledAt: 1, syncedAt: 1, webhookAt: null }, builder);
  t.setProject({
    project: { id: 'proj_0', name: 'p0', team: { id: team.id, name: team.name }, created_by: null, created_at: T0, updated_at: null, thumbnail_url: null },
    templates: [], backfilled: true,
  }, 1);
  for (let i = 0; i < n; i++) t.apply({ ...render(i), project: { id: 'proj_0', team: team.id } }, 1);
  return t;
}

describe('a new sorted order of a large team', () => {
  const sortOf = (field: string) => [Sort.create(FieldRef.create([field]), 'asc'), Sort.create(FieldRef.create(['id']), 'asc')];
  const cmpOf = (t: TeamReplica, field: string) => {
    const cmp = compileSort(sortOf(field), schemas.render as ResourceSchema, schemas, { one: () => undefined, many: () => [] });
    return (a: number, b: number) => cmp(t.view(a), t.view(b));
  };

  it('is sorted off the question, a slice at a time, and holds the renders that arrived or changed meanwhile', async () => {
    const t = new TeamReplica({ team, members: [], state: 'ready', backfilledAt: 1, syncedAt: 1, webhookAt: null }, builder);
    for (let p = 0; p < 10; p++) {
      t.setProject({
        project: {
          id: `proj_${p}`, name: `p${p}`, team: { id: team.id, name: team.name }, created_by: null, created_at: T0, updated_at: null, thumbnail_url: null,
        },
        templates: [], backfilled: true,
      }, 1);
    }
    const N = 20_000;
    for (let i = 0; i < N; i++) t.apply(render(i), 1);
    const cmp = cmpOf(t, 'title');
    // the first question finds no order: it is answered otherwise, and the order is being sorted
    expect(t.sortedRows('title:asc,id:asc', cmp)).toBeUndefined();
    // renders arrive and change while it is sorted
    t.apply(render(N, 'aaa first of all'), 2);
    t.apply({ ...render(7), name: 'zzz last of all', updated_at: T0 + 100_000 }, 2);
    t.apply(render(N + 1, 'Beta 500'), 2);
    const { value: rows, turns } = await turnsDuring(async () => {
      let kept: readonly number[] | undefined;
      for (let i = 0; i < 1000 && !(kept = t.sortedRows('title:asc,id:asc', cmp)); i++) await new Promise((r) => setImmediate(r));
      return kept;
    });
    expect(rows).toBeDefined();
    // 2 048 rows a slice: the sort of 20 000 rows took several turns
    expect(turns).toBeGreaterThanOrEqual(5);
    const expected = Array.from({ length: N + 2 }, (_, i) => i).sort(cmp);
    expect([...rows!]).toEqual(expected);
    expect(t.view(rows![0]!).title).toBe('aaa first of all');
    expect(t.view(rows![rows!.length - 1]!).title).toBe('zzz last of all');
  });

  it('newest first is sorted a slice at a time the first time, the renders that arrived meanwhile in their place', async () => {
    const t = oneProjectTeam(0);
    const N = 20_000;
    // created_at in a scrambled order, with ties
    for (let i = 0; i < N; i++) t.apply({ ...render(i), project: { id: 'proj_0', team: team.id }, created_at: T0 + ((i * 7919) % 5000) }, 1);
    const ready = t.newestFirstReady();
    t.apply({ ...render(N), project: { id: 'proj_0', team: team.id }, created_at: T0 + 2500 }, 2);
    t.apply({ ...render(N + 1), project: { id: 'proj_0', team: team.id }, created_at: T0 + 9999 }, 2);
    const { value: rows, turns } = await turnsDuring(() => ready);
    expect(turns).toBeGreaterThanOrEqual(5);
    expect(rows[0]).toBe(N + 1);
    const got = [...rows];
    // the same renders sorted at once
    t.invalidateRecords();
    expect(got).toEqual([...t.newestFirst()]);
  });

  it('a sort that failed is not kept as under way: the order is sorted again when next asked', async () => {
    const t = oneProjectTeam(10_000);
    const cmp = cmpOf(t, 'title');
    const failing = (): number => { throw new Error('comparison failed'); };
    // the question waiting for it is answered otherwise
    expect(await t.sortedRowsReady('title:asc,id:asc', failing)).toBeUndefined();
    const rows = await t.sortedRowsReady('title:asc,id:asc', cmp);
    expect(rows && [...rows]).toEqual(Array.from({ length: 10_000 }, (_, i) => i).sort(cmp));
  });

  it('is sorted at once for a small team', () => {
    const t = oneProjectTeam(100);
    const cmp = cmpOf(t, 'title');
    expect(t.sortedRows('title:asc,id:asc', cmp)).toEqual(Array.from({ length: 100 }, (_, i) => i).sort(cmp));
  });
});

describe('a scan of a team\'s records', () => {
  it('hands its records on in batches, the event loop given a turn when a batch used up the slice (attack pass 13, H: 16 384 records and every team\'s run in one turn)', async () => {
    const t = oneProjectTeam(10_000);
    const source = new ReplicaSource(new ReplicaSnapshot([t], 25), {
      refresh: async () => {}, answered: () => {}, flush: async () => {}, data: async () => new Map(), dataSizes: async () => new Map(), now: 10,
    });
    const plan = planQuery(parseQuery({ limit: '-1' }, schemas.render as ResourceSchema, ctx()), 'render', { statusToV1: mappings.status.toV1, schemas });
    const batches: { size: number; turn: number }[] = [];
    let turn = 0;
    let on = true;
    const spin = () => { if (!on) return; turn++; setImmediate(spin); };
    setImmediate(spin);
    const seen = new Set<unknown>();
    const n = await source.scan('render', plan, false, (batch) => {
      // a costly filter: about 2 ms a batch, whatever its size
      const until = performance.now() + 2;
      while (performance.now() < until);
      for (const r of batch) seen.add(r.id);
      batches.push({ size: batch.length, turn });
    });
    on = false;
    expect({ n, seen: seen.size }).toEqual({ n: 10_000, seen: 10_000 });
    expect(Math.max(...batches.map((b) => b.size))).toBeLessThanOrEqual(512);
    // each batch used up the slice: a turn before the next
    for (let i = 1; i < batches.length; i++) expect(batches[i]!.turn).toBeGreaterThan(batches[i - 1]!.turn);
  });
});

