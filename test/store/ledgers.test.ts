import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openChangeBus, type ChangeBus } from '../../src/store/changes.js';
import { openDb, type Db } from '../../src/store/db.js';
import { IdempotencyStore } from '../../src/store/idempotency.js';
import { IdConflictError, IdMapStore, type IdPair } from '../../src/store/idmap.js';
import { migrate } from '../../src/store/migrations.js';
import { WebhookLedger } from '../../src/store/webhook-events.js';
import { databases } from '../helpers/databases.js';

/** Idempotency keys, id pairs and the webhook ledger, each on a fresh SQLite store, time moved by hand. */
const [{ url }] = (await databases()) as unknown as [{ url: string }];
let db: Db;
let now = 1_900_000_000_000;
const clock = () => now;
beforeAll(async () => {
  db = await openDb(url);
  await migrate(db.kysely);
});
afterAll(async () => db.close());

describe('IdempotencyStore', () => {
  const WINDOW = 86_400_000;
  const LEASE = 30_000;
  const store = () => new IdempotencyStore(db.kysely, clock);
  let n = 0;
  const key = () => `key-${++n}`;

  it('a first claim inserts a pending row with its lease; a second one while it holds is held', async () => {
    const s = store();
    const k = key();
    const t = now;
    expect(await s.claim('u1', k, 'h1', WINDOW, LEASE)).toEqual({ kind: 'claimed' });
    const row = await s.get('u1', k);
    expect(row).toEqual({ state: 'pending', request_hash: 'h1', status: null, response: null, created_at: t, lease_until: t + LEASE, started_at: null, project_v1: null, render_name: null, render_v1_id: null });
    now += LEASE; // the lease ends only after this instant
    expect(await s.claim('u1', k, 'h1', WINDOW, LEASE)).toEqual({ kind: 'held', row });
    // the key is per user
    expect(await s.claim('u2', k, 'h1', WINDOW, LEASE)).toEqual({ kind: 'claimed' });
    expect(await s.get('u3', k)).toBeUndefined();
  });

  it('a lapsed lease is taken over by the same request, with what the earlier attempt recorded', async () => {
    const s = store();
    const k = key();
    await s.claim('u1', k, 'h1', WINDOW, LEASE);
    await s.attempt('u1', k, { startedAt: 123, projectV1: 'proj_1', name: 'My render' });
    now += LEASE + 1;
    // another request body under the same key is never taken over
    expect(await s.claim('u1', k, 'other-hash', WINDOW, LEASE)).toMatchObject({ kind: 'held', row: { state: 'pending', request_hash: 'h1' } });
    expect(await s.claim('u1', k, 'h1', WINDOW, LEASE)).toEqual({ kind: 'claimed', earlier: { startedAt: 123, projectV1: 'proj_1', name: 'My render', renderV1Id: null } });
    expect(await s.get('u1', k)).toMatchObject({ state: 'pending', lease_until: now + LEASE, started_at: 123 });
    // taken over: held again while the new lease runs
    expect((await s.claim('u1', k, 'h1', WINDOW, LEASE)).kind).toBe('held');
    await s.created('u1', k, 'rend_42');
    now += LEASE + 1;
    expect(await s.claim('u1', k, 'h1', WINDOW, LEASE)).toEqual({ kind: 'claimed', earlier: { startedAt: 123, projectV1: 'proj_1', name: 'My render', renderV1Id: 'rend_42' } });
  });

  it('a takeover without a recorded attempt has no earlier part', async () => {
    const s = store();
    const k = key();
    await s.claim('u1', k, 'h1', WINDOW, LEASE);
    now += LEASE + 1;
    const c = await s.claim('u1', k, 'h1', WINDOW, LEASE);
    expect(c).toEqual({ kind: 'claimed' });
    expect('earlier' in c).toBe(false);
  });

  it('an empty name is still an earlier attempt; an empty project is not', async () => {
    const s = store();
    const k1 = key();
    await s.claim('u1', k1, 'h', WINDOW, LEASE);
    await s.attempt('u1', k1, { startedAt: 0, projectV1: 'p', name: '' });
    await s.finish('u1', k1, 'unknown', 502, { e: 1 });
    expect(await s.claim('u1', k1, 'h', WINDOW, LEASE)).toEqual({ kind: 'claimed', earlier: { startedAt: 0, projectV1: 'p', name: '', renderV1Id: null } });
    const k2 = key();
    await s.claim('u1', k2, 'h', WINDOW, LEASE);
    await s.attempt('u1', k2, { startedAt: 5, projectV1: '', name: 'n' });
    await s.finish('u1', k2, 'unknown', 502, null);
    expect(await s.claim('u1', k2, 'h', WINDOW, LEASE)).toEqual({ kind: 'claimed' });
  });

  it('an earlier attempt counts only with its start, project and name all recorded', async () => {
    const s = store();
    const cases: [number | null, string | null, string | null, boolean][] = [[null, 'p', 'n', false], [5, 'p', null, false], [5, null, 'n', false], [5, 'p', 'n', true]];
    for (const [started, project, name, earlier] of cases) {
      const k = key();
      await db.kysely.insertInto('idempotency').values({ user_id: 'u1', key: k, request_hash: 'h', state: 'unknown', status: 502, response: null, created_at: now, lease_until: null,
        started_at: started, project_v1: project, render_name: name, render_v1_id: null }).execute();
      expect(await s.claim('u1', k, 'h', WINDOW, LEASE)).toEqual(earlier ? { kind: 'claimed', earlier: { startedAt: 5, projectV1: 'p', name: 'n', renderV1Id: null } } : { kind: 'claimed' });
    }
  });

  it('a pending row without a lease is stale; an unknown outcome is taken over; a done one is replayed', async () => {
    const s = store();
    const k1 = key();
    await db.kysely.insertInto('idempotency').values({ user_id: 'u1', key: k1, request_hash: 'h', state: 'pending', status: null, response: null, created_at: now, lease_until: null, started_at: null, project_v1: null, render_name: null, render_v1_id: null }).execute();
    expect(await s.claim('u1', k1, 'h', WINDOW, LEASE)).toEqual({ kind: 'claimed' });
    expect((await s.get('u1', k1))!.lease_until).toBe(now + LEASE);
    const k2 = key();
    await s.claim('u1', k2, 'h', WINDOW, LEASE);
    await s.finish('u1', k2, 'unknown', 504, { errors: [] });
    expect(await s.get('u1', k2)).toMatchObject({ state: 'unknown', status: 504, response: '{"errors":[]}', lease_until: null });
    expect(await s.claim('u1', k2, 'h', WINDOW, LEASE)).toEqual({ kind: 'claimed' });
    expect(await s.get('u1', k2)).toMatchObject({ state: 'pending', lease_until: now + LEASE });
    const k3 = key();
    await s.claim('u1', k3, 'h', WINDOW, LEASE);
    await s.finish('u1', k3, 'done', 200, { data: { id: 'x' } });
    now += LEASE * 10;
    expect(await s.claim('u1', k3, 'h', WINDOW, LEASE)).toEqual({ kind: 'held', row: expect.objectContaining({ state: 'done', status: 200, response: '{"data":{"id":"x"}}', lease_until: null }) });
  });

  it('an answer older than the window is forgotten and the key claimed afresh; one at the window\'s edge is not', async () => {
    const s = store();
    const k = key();
    const t = now;
    await s.claim('u1', k, 'h-old', WINDOW, LEASE);
    await s.finish('u1', k, 'done', 201, { v: 1 });
    now = t + WINDOW;
    expect((await s.claim('u1', k, 'h-new', WINDOW, LEASE)).kind).toBe('held');
    now = t + WINDOW + 1;
    expect(await s.claim('u1', k, 'h-new', WINDOW, LEASE)).toEqual({ kind: 'claimed' });
    expect(await s.get('u1', k)).toMatchObject({ state: 'pending', request_hash: 'h-new', created_at: now, status: null });
  });

  it('of two simultaneous claims exactly one wins, for a new key and for a lapsed one', async () => {
    const s = store();
    const k = key();
    const first = await Promise.all([s.claim('u1', k, 'h', WINDOW, LEASE), s.claim('u1', k, 'h', WINDOW, LEASE)]);
    expect(first.map((c) => c.kind).sort()).toEqual(['claimed', 'held']);
    now += LEASE + 1;
    const second = await Promise.all([s.claim('u1', k, 'h', WINDOW, LEASE), s.claim('u1', k, 'h', WINDOW, LEASE)]);
    expect(second.map((c) => c.kind).sort()).toEqual(['claimed', 'held']);
    const held = second.find((c) => c.kind === 'held') as { row: { lease_until: number } };
    expect(held.row.lease_until).toBe(now + LEASE); // the winner's row, read again
  });

  it('release forgets the key; claimedRenders names the renders recorded under any key', async () => {
    const s = store();
    const k = key();
    await s.claim('u1', k, 'h', WINDOW, LEASE);
    await s.created('u1', k, 'rend_a');
    const k2 = key();
    await s.claim('u2', k2, 'h', WINDOW, LEASE);
    await s.created('u2', k2, 'rend_b');
    expect(await s.claimedRenders([])).toEqual(new Set());
    expect(await s.claimedRenders(['rend_a', 'rend_b', 'rend_c'])).toEqual(new Set(['rend_a', 'rend_b']));
    await s.release('u1', k);
    expect(await s.get('u1', k)).toBeUndefined();
    expect(await s.get('u2', k2)).toBeDefined();
    expect(await s.claimedRenders(['rend_a', 'rend_b'])).toEqual(new Set(['rend_b']));
  });

  it('attempt, created and finish touch only their own key', async () => {
    const s = store();
    const [k1, k2] = [key(), key()];
    await s.claim('u1', k1, 'h', WINDOW, LEASE);
    await s.claim('u1', k2, 'h', WINDOW, LEASE);
    await s.claim('u9', k1, 'h', WINDOW, LEASE);
    await s.attempt('u1', k1, { startedAt: 1, projectV1: 'p', name: 'n' });
    await s.created('u1', k1, 'rend_1');
    await s.finish('u1', k1, 'done', 200, 'ok');
    expect(await s.get('u1', k1)).toMatchObject({ state: 'done', started_at: 1, project_v1: 'p', render_name: 'n', render_v1_id: 'rend_1', response: '"ok"' });
    for (const [u, k] of [['u1', k2], ['u9', k1]] as const) {
      expect(await s.get(u, k)).toMatchObject({ state: 'pending', started_at: null, project_v1: null, render_name: null, render_v1_id: null, response: null });
    }
    // a new attempt clears the render of the one before
    await s.attempt('u1', k1, { startedAt: 2, projectV1: 'p2', name: 'n2' });
    expect(await s.get('u1', k1)).toMatchObject({ started_at: 2, project_v1: 'p2', render_name: 'n2', render_v1_id: null });
  });
});

describe('IdMapStore', () => {
  let bus: ChangeBus;
  const heard: string[] = [];
  beforeAll(async () => {
    bus = await openChangeBus(db, url, 0);
    bus.on('ids', (k) => heard.push(k));
  });
  afterAll(async () => bus.close());
  const uuid = (i: number, prefix = 'a') => `${prefix.repeat(8)}-0000-5000-8000-${String(i).padStart(12, '0')}`;

  it('remembers long lists, stamps them, and leaves a known pair alone', async () => {
    const ids = new IdMapStore(db.kysely, clock, bus);
    const pairs: IdPair[] = Array.from({ length: 1203 }, (_, i) => ({ type: 'render', uuid: uuid(i), v1Id: `rend_${i}`, source: 'derived' }));
    await ids.remember(pairs);
    const count = await db.kysely.selectFrom('id_map').select((e) => e.fn.countAll<number>().as('n')).where('type', '=', 'render').executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1203);
    expect(await db.kysely.selectFrom('id_map').selectAll().where('uuid', '=', uuid(1202)).executeTakeFirstOrThrow()).toEqual({ type: 'render', uuid: uuid(1202), v1_id: 'rend_1202', source: 'derived', created_at: now });
    await ids.remember([{ type: 'render', uuid: uuid(5), v1Id: 'rend_other', source: 'derived' }]);
    await ids.remember([]);
    await ids.remember(Array.from({ length: 400 }, (_, i) => ({ type: 'exact', uuid: uuid(i), v1Id: `x_${i}`, source: 'derived' as const })));
    expect(await ids.v1IdFor('exact', uuid(399))).toBe('x_399');
    expect(await ids.v1IdFor('render', uuid(5))).toBe('rend_5');
    expect(await ids.v1IdFor('project', uuid(5))).toBeUndefined();
    const many = await ids.v1IdsFor([...pairs.map((p) => p.uuid.toUpperCase()), uuid(99_999)]);
    expect(many.size).toBe(1203);
    expect(many.get(uuid(1000))).toBe('rend_1000');
    expect(await ids.v1IdsFor([])).toEqual(new Map());
    expect(heard).toEqual([]);
  });

  it('imports pairs (lower-cased), upgrading derived ones, counting the unchanged, and tells the bus', async () => {
    const ids = new IdMapStore(db.kysely, clock, bus);
    await ids.remember([{ type: 'project', uuid: uuid(1, 'b'), v1Id: 'proj_1', source: 'derived' }]);
    heard.length = 0;
    now += 1;
    const r = await ids.importPairs([
      { type: 'project', uuid: uuid(1, 'B'), v1Id: 'proj_1' }, // derived → imported
      { type: 'project', uuid: uuid(2, 'B'), v1Id: 'proj_2' }, // new
    ]);
    expect(r).toEqual({ imported: 2, unchanged: 0 });
    expect(heard).toEqual(['*']);
    expect(await db.kysely.selectFrom('id_map').selectAll().where('uuid', '=', uuid(2, 'b')).executeTakeFirstOrThrow()).toEqual({ type: 'project', uuid: uuid(2, 'b'), v1_id: 'proj_2', source: 'imported', created_at: now });
    expect((await ids.imported()).filter((p) => p.type === 'project')).toEqual([
      { type: 'project', uuid: uuid(1, 'b'), v1Id: 'proj_1', source: 'imported' },
      { type: 'project', uuid: uuid(2, 'b'), v1Id: 'proj_2', source: 'imported' },
    ]);
    heard.length = 0;
    expect(await ids.importPairs([{ type: 'project', uuid: uuid(2, 'b'), v1Id: 'proj_2' }])).toEqual({ imported: 0, unchanged: 1 });
    expect(heard).toEqual([]);
    // the same uuid for another type is another pair
    expect(await ids.importPairs([{ type: 'template', uuid: uuid(2, 'b'), v1Id: 'tpl_2' }])).toEqual({ imported: 1, unchanged: 0 });
  });

  it('refuses a conflicting import as a whole', async () => {
    const ids = new IdMapStore(db.kysely, clock, bus);
    await ids.importPairs([{ type: 'account', uuid: uuid(1, 'c'), v1Id: 'team_1' }]);
    heard.length = 0;
    const err = await ids.importPairs([
      { type: 'account', uuid: uuid(2, 'c'), v1Id: 'team_2' },
      { type: 'account', uuid: uuid(1, 'C'), v1Id: 'team_9' },
    ]).catch((e: unknown) => e) as Error;
    expect(err).toBeInstanceOf(IdConflictError);
    expect(err.message).toBe(`account ${uuid(1, 'c')} already names team_1, not team_9`);
    expect(await ids.v1IdFor('account', uuid(2, 'c'))).toBeUndefined(); // rolled back
    expect(heard).toEqual([]);
  });

  it('all() is ordered by type, then v1 id, with each pair\'s source', async () => {
    const fresh = await openDb(url.replace(/store\.db$/, 'ids.db'));
    try {
      await migrate(fresh.kysely);
      const ids = new IdMapStore(fresh.kysely, clock);
      await ids.remember([
        { type: 'render', uuid: uuid(1, 'd'), v1Id: 'rend_b', source: 'derived' },
        { type: 'project', uuid: uuid(2, 'd'), v1Id: 'proj_z', source: 'derived' },
        { type: 'render', uuid: uuid(3, 'd'), v1Id: 'rend_a', source: 'derived' },
      ]);
      await ids.importPairs([{ type: 'account', uuid: uuid(4, 'd'), v1Id: 'team_1' }]);
      expect(await ids.all()).toEqual([
        { type: 'account', uuid: uuid(4, 'd'), v1Id: 'team_1', source: 'imported' },
        { type: 'project', uuid: uuid(2, 'd'), v1Id: 'proj_z', source: 'derived' },
        { type: 'render', uuid: uuid(3, 'd'), v1Id: 'rend_a', source: 'derived' },
        { type: 'render', uuid: uuid(1, 'd'), v1Id: 'rend_b', source: 'derived' },
      ]);
      expect(await ids.imported()).toEqual([{ type: 'account', uuid: uuid(4, 'd'), v1Id: 'team_1', source: 'imported' }]);
    } finally {
      await fresh.close();
    }
  });
});

describe('WebhookLedger', () => {
  const ledger = () => new WebhookLedger(db.kysely, clock);

  it('a delivery is first once, stamped with its team and time, until forgotten', async () => {
    const l = ledger();
    expect(await l.firstDelivery('evt_1', 'team_1')).toBe(true);
    expect(await l.firstDelivery('evt_1', 'team_2')).toBe(false);
    expect(await db.kysely.selectFrom('webhook_events').selectAll().where('id', '=', 'evt_1').executeTakeFirstOrThrow()).toEqual({ id: 'evt_1', team: 'team_1', received_at: now });
    expect(await l.firstDelivery('evt_2', 'team_1')).toBe(true);
    await l.forget('evt_1');
    expect(await l.firstDelivery('evt_1', 'team_1')).toBe(true);
    expect(await l.firstDelivery('evt_2', 'team_1')).toBe(false);
  });

  it('prune drops deliveries older than the age, keeping the one exactly at it', async () => {
    const l = ledger();
    const t = now;
    await l.firstDelivery('p_old', 't');
    now += 1;
    await l.firstDelivery('p_edge', 't');
    now += 1_000;
    await l.prune(1_000);
    expect(await l.firstDelivery('p_old', 't')).toBe(true); // pruned: new again
    expect(await l.firstDelivery('p_edge', 't')).toBe(false); // received exactly 1 000 ms ago: kept
    expect(now - t).toBe(1_001);
  });

  it('newer keeps the newest state by updated_at, then rank; an equal state counts as newest', async () => {
    const l = ledger();
    const state = async () => db.kysely.selectFrom('render_versions').select(['updated_at', 'rank']).where('v1_id', '=', 'rend_v').executeTakeFirstOrThrow();
    expect(await l.newer('rend_v', 100, 2)).toBe(true);
    expect(await l.newer('rend_v', 100, 2)).toBe(true);
    expect(await l.newer('rend_v', 99, 5)).toBe(false); // older
    expect(await l.newer('rend_v', 100, 1)).toBe(false); // same time, earlier in the lifecycle
    expect(await state()).toEqual({ updated_at: 100, rank: 2 });
    expect(await l.newer('rend_v', 100, 3)).toBe(true);
    expect(await state()).toEqual({ updated_at: 100, rank: 3 });
    expect(await l.newer('rend_v', 200, 2)).toBe(false); // later but going back in the lifecycle
    expect(await l.newer('rend_v', 200, 4)).toBe(true);
    expect(await state()).toEqual({ updated_at: 200, rank: 4 });
    expect(await l.newer('rend_w', 1, 0)).toBe(true);
  });
});
