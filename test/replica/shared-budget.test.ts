import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEDULER_TICK_MS, syncCallsOf } from '../../src/replica/sync/freshness.js';
import { databases } from '../helpers/databases.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * One sync budget however many instances share the store: two and three gateways on one PostgreSQL and one simulator
 * (its manual clock) syncing the same team spend INDEX_SYNC_CALLS_PER_MIN between them; a key reaching several teams
 * spends INDEX_SYNC_CALLS_PER_KEY_PER_MIN; a dead lease holder's team is taken over once its lease ran out; and each
 * team's staleness bound, computed from its projects and budget, on /_gateway/index, in explain and in /metrics.
 */
const op = { authorization: `Bearer ${TEST_ENV.GATEWAY_ADMIN_TOKEN}` };
/** The v1 calls the syncs made: every v1 route but the reach checks (GET /v1/teams, /v1/me), which reads make too. */
const syncCalls = (sim: RunningSim) => [...sim.sim.stats].filter(([k]) => k !== 'GET /v1/teams' && k !== 'GET /v1/me').reduce((n, [, v]) => n + v, 0);
/**
 * The bound a team of `calls` a sync and `projects` projects should show with `perMin` calls a minute: a minute over the
 * whole syncs a minute's budget holds once a full sync's calls (team, members, every project's templates) are kept
 * aside (or so many minutes for a sync larger than that), never below INDEX_MAX_STALENESS_MS (5 s).
 */
const expectedBound = (calls: number, perMin: number, projects: number) => {
  const budget = Math.max(1, perMin - (projects + 2));
  const syncs = Math.floor(budget / calls);
  // the interval the budget lets whole syncs run at, and the scheduler's tick (a sync runs at the first tick past its due time)
  return Math.max(5_000, (syncs >= 1 ? Math.ceil(60_000 / syncs) : Math.ceil(calls / budget) * 60_000) + SCHEDULER_TICK_MS);
};
/** The simulator's clock moved to the start of the next minute (the budget's window). */
const nextMinute = (sim: RunningSim) => sim.sim.clock.advance(60_000 - (sim.sim.world.clock.now() % 60_000) + 1);

describe('instances on one PostgreSQL spend one budget', () => {
  let sim: RunningSim;
  let url: string;
  const gws: TestGateway[] = [];
  const limit = 20;
  beforeAll(async () => {
    url = (await databases()).find((d) => d.name === 'postgres')!.url;
    sim = await startSim();
    const env = { DATABASE_URL: url, INDEX_SYNC_CALLS_PER_MIN: String(limit), INDEX_RECONCILE_MS: '600000', INDEX_MAX_STALENESS_MS: '1000' };
    for (let i = 0; i < 3; i++) gws.push(await startGateway(env, {}, { sim, simClock: true }));
    await gws[0]!.addUser(0, 'ann@example.com');
    for (const g of gws.slice(1)) await g.deps.ids.load();
    await gws[0]!.deps.replica!.syncNow([sim.keys[0]!.teams[0]!.id]);
  });
  afterAll(async () => {
    for (const g of gws) await g.close();
    await sim?.sim.close();
  });

  it.each([2, 3])('%i instances syncing one team as often as they can spend INDEX_SYNC_CALLS_PER_MIN between them', async (n) => {
    const team = sim.keys[0]!.teams[0]!.id;
    nextMinute(sim);
    const before = syncCalls(sim);
    let one = 0;
    for (let round = 0; round < 10; round++) {
      for (const g of gws.slice(0, n)) {
        const t = (await g.deps.replica!.load(team))!;
        const was = syncCalls(sim);
        await g.deps.replica!.syncTeam(t, false).catch(() => undefined);
        one = Math.max(one, syncCalls(sim) - was);
      }
      sim.sim.clock.advance(1_000);
    }
    const spent = syncCalls(sim) - before;
    expect(one).toBeGreaterThan(0);
    expect(10 * n * one).toBeGreaterThan(2 * limit); // what the attempts would have cost with a budget per instance
    expect(spent).toBeGreaterThan(0);
    expect(spent).toBeLessThanOrEqual(limit);
    // every instance sees the one count (the store's)
    for (const g of gws.slice(0, n)) {
      const row = (await g.deps.replica!.status()).find((x) => x.team === team)!;
      expect(row.sync_calls_last_minute).toBeLessThanOrEqual(limit);
      expect(row.sync_calls_last_minute).toBeGreaterThanOrEqual(spent);
    }
  });

  type Replica = NonNullable<TestGateway['deps']['replica']>;
  type Team = NonNullable<Awaited<ReturnType<Replica['load']>>>;
  /**
   * Team 0, stale on instance b, while another instance ('another-instance', as a store row shows it) holds its lease
   * and syncs it: `start` starts a read-time sync on b; 200 ms later that instance's sync ends, marked and announced. The
   * read waited for it, took its sync time, and no instance synced the team beside the holder.
   */
  const whileAnotherSyncs = async (start: (b: Replica, t: Team) => Promise<{ read: Promise<void> }>) => {
    const team = sim.keys[0]!.teams[0]!.id;
    const a = gws[0]!.deps.replica!;
    const b = gws[1]!.deps.replica!;
    const other = 'another-instance';
    nextMinute(sim); // the team is stale everywhere, and the minute's budget fresh
    // (b's background left out but where a case starts it: a tick's own sync of the team would race the case's)
    const t = (await b.load(team))!;
    t.readAt = Number.NEGATIVE_INFINITY;
    await Promise.all((b as unknown as { scheduler: { pending(): Promise<void>[] } }).scheduler.pending());
    while (!(await a.store.lease(team, other, a.leaseMs, true))) await new Promise((r) => setTimeout(r, 20));
    // this instance waits a minute, not a second, for an announcement: a read that the announcement does not wake
    // outlasts the case (here INDEX_MAX_STALENESS_MS, 1 s, would end its wait soon after the publish either way)
    const peers = (b as unknown as { scheduler: { deps: { peers: { announced(id: string, ms: number): Promise<void> } } } }).scheduler.deps.peers;
    const announced = peers.announced;
    peers.announced = (id, ms) => announced.call(peers, id, ms * 60);
    try {
      const before = syncCalls(sim);
      let ended = false;
      const done = (await start(b, t)).read.then(() => { ended = true; });
      await new Promise((r) => setTimeout(r, 200));
      expect(ended).toBe(false); // it waits for the holder
      const at = sim.sim.world.clock.now();
      await a.store.markSynced(team, at);
      await gws[0]!.deps.bus.publish('index_team', `${other} ${team}`);
      await done;
      expect(t.syncedAt).toBe(at);
      expect(syncCalls(sim)).toBe(before); // no instance synced it beside the holder
    } finally {
      peers.announced = announced;
      await a.store.release(team, other);
    }
  };

  it('a read-time sync of a team another instance is syncing goes through that sync: no second sync, its sync time taken', async () => {
    await whileAnotherSyncs(async (b, t) => ({ read: b.syncTeam(t, false) })); // as a read of the stale team does
  });

  it('a read that joins this instance\'s background sync of a team another instance is syncing waits for that instance too', async () => {
    // a tick's sync of the team (it finds the lease taken, and ends), and a read of the stale team joining it — before,
    // the read ended with it, the team's old sync time taken
    await whileAnotherSyncs(async (b, t) => {
      const background = b.syncTeam(t, true);
      const read = b.syncTeam(t, false);
      await background;
      return { read };
    });
  });

  it('a dead lease holder\'s team is taken over by another instance after its lease ran out (2 × heartbeat), not before', async () => {
    const team = sim.keys[0]!.teams[0]!.id;
    const dead = await startGateway({ DATABASE_URL: url, INDEX_LEASE_HEARTBEAT_MS: '3000' }, {}, { sim, simClock: true });
    const b = gws[1]!.deps.replica!;
    nextMinute(sim); // a fresh budget
    const ix = dead.deps.replica!;
    expect(ix.leaseMs).toBe(6_000);
    // the holder takes the team's lease as its sync does (once the others' background syncs let go of it), then dies
    // without giving it back
    while (!(await ix.store.lease(team, ix.holder, ix.leaseMs, true))) await new Promise((r) => setTimeout(r, 20));
    const deadStart = sim.sim.world.clock.now();
    await dead.close();
    const t = (await b.load(team))!;
    // this team's sync calls (their request id names it): the other instances' background syncs of the key's other
    // teams run meanwhile — counting every call, one came in about 1 run in 20
    const tries = async () => {
      await fetch(`${sim.url}/_sim/stats/reset`, { method: 'POST' });
      await b.syncTeam(t, false);
      const recent = (await (await fetch(`${sim.url}/_sim/requests`)).json()) as { request_id: string | null }[];
      return recent.filter((r) => r.request_id === `gateway-index-${team}`).length;
    };
    const lastStart = async () => (await b.store.team(team))!.syncStartedAt;
    expect(await tries()).toBe(0);
    sim.sim.clock.advance(ix.leaseMs - 1);
    expect(await tries()).toBe(0); // not before the lease ran out
    expect(await lastStart()).toBe(deadStart); // nor did any other instance's background sync
    sim.sim.clock.advance(2);
    const expired = sim.sim.world.clock.now();
    await tries(); // taken over: by this read's sync, or by an instance's background sync first
    while ((await lastStart()) !== expired) await new Promise((r) => setTimeout(r, 20));
    const row = (await b.status()).find((x) => x.team === team)!;
    expect(row.last_sync_started).toBe(new Date(expired).toISOString());
  });
});

describe('the per-key budget', () => {
  it('one key reaching several teams spends INDEX_SYNC_CALLS_PER_KEY_PER_MIN, not a budget per team; the bound shows its share', async () => {
    const sim = await startSim();
    const perKey = 12;
    const gw = await startGateway({ INDEX_SYNC_CALLS_PER_MIN: '1000', INDEX_SYNC_CALLS_PER_KEY_PER_MIN: String(perKey), INDEX_RECONCILE_MS: '600000' }, {},
      { sim, simClock: true });
    try {
      await gw.addUser(0, 'ann@example.com');
      const teams = sim.keys[0]!.teams.map((t) => t.id);
      expect(teams.length).toBeGreaterThan(1);
      await gw.deps.replica!.syncNow(teams);
      nextMinute(sim);
      const before = syncCalls(sim);
      let attempts = 0;
      for (let round = 0; round < 5; round++) {
        for (const id of teams) {
          await gw.deps.replica!.syncTeam((await gw.deps.replica!.load(id))!, false);
          attempts++;
        }
        sim.sim.clock.advance(1_000);
      }
      const spent = syncCalls(sim) - before;
      expect(attempts * 3).toBeGreaterThan(2 * perKey);
      expect(spent).toBeGreaterThan(0);
      expect(spent).toBeLessThanOrEqual(perKey);
      // each team's bound: the calls one sync of it needs over its share of the key's budget — once the minute whose
      // budget the syncs spent is over (until then, the bound counts the wait for it: test/replica/budget-wait.test.ts)
      const wait = 60_000 - (sim.sim.world.clock.now() % 60_000);
      const during = await gw.deps.replica!.status();
      for (const id of teams) expect(during.find((r) => r.team === id)!.bound_ms).toBeGreaterThanOrEqual(wait);
      nextMinute(sim);
      const rows = await gw.deps.replica!.status();
      for (const id of teams) {
        const t = gw.deps.replica!.team(id)!;
        expect(rows.find((r) => r.team === id)!.bound_ms).toBe(expectedBound(syncCallsOf(t), perKey / teams.length, t.projects.size));
      }
    } finally {
      await gw.close();
      await sim.sim.close();
    }
  });
});

describe('the computed staleness bound', () => {
  it('is kept by the background sync: a sync each time the bound comes round, never more often than the budget allows', async () => {
    const sim = await startSim();
    const perMin = 12;
    const gw = await startGateway({ INDEX_SYNC_CALLS_PER_MIN: String(perMin), INDEX_RECONCILE_MS: '600000' }, {}, { sim, simClock: true });
    try {
      await gw.addUser(0, 'ann@example.com');
      const id = sim.keys[0]!.teams[0]!.id;
      await gw.deps.replica!.syncNow([id]);
      nextMinute(sim);
      const t = (await gw.deps.replica!.load(id))!;
      const starts: number[] = [];
      const bounds: number[] = [];
      for (let s = 0; s < 180; s++) {
        await gw.deps.replica!.tick();
        if (starts.at(-1) !== t.syncedAt) starts.push(t.syncedAt!);
        bounds.push(gw.deps.replica!.boundOf(t));
        sim.sim.clock.advance(1_000);
      }
      const bound = Math.max(...bounds);
      expect(bound).toBeGreaterThan(5_000);
      const gaps = starts.slice(2).map((x, i) => x - starts[i + 1]!);
      expect(gaps.length).toBeGreaterThan(1);
      for (const g of gaps) {
        expect(g).toBeGreaterThanOrEqual(Math.min(...bounds) - SCHEDULER_TICK_MS); // never more often than the budget allows
        expect(g).toBeLessThanOrEqual(bound + 1_000); // a sync each time the bound comes round (the tick is a second here)
      }
    } finally {
      await gw.close();
      await sim.sim.close();
    }
  });

  it('is each team\'s on /_gateway/index, the read\'s in explain, and the teams\' largest in /metrics (no team label)', async () => {
    const sim = await startSim();
    const perMin = 12;
    const gw = await startGateway({ INDEX_SYNC_CALLS_PER_MIN: String(perMin) }, {}, { sim, simClock: true });
    try {
      await gw.addUser(0, 'ann@example.com');
      const teams = sim.keys[0]!.teams.map((t) => t.id);
      await gw.deps.replica!.syncNow(teams);
      nextMinute(sim); // (the backfills spent their minute's budget: until it is over, the bounds count the wait)
      const token = await gw.login('ann@example.com');
      const read = await gw.get('/renders?limit=1', token, { 'x-gateway-explain': '1', 'x-gateway-operator-token': TEST_ENV.GATEWAY_ADMIN_TOKEN });
      expect(read.headers['x-gateway-source']).toBe('index');
      const expected = new Map(teams.map((id) => {
        const t = gw.deps.replica!.team(id)!;
        return [id, expectedBound(syncCallsOf(t), perMin, t.projects.size)];
      }));
      const largest = Math.max(...expected.values());
      expect(largest).toBeGreaterThan(5_000); // the budget, not INDEX_MAX_STALENESS_MS, sets it here
      expect(read.body.explain.bound_ms).toBe(largest);
      const status = await gw.app.inject({ method: 'GET', url: '/_gateway/index', headers: op });
      for (const row of status.json().data as { team: string; bound_ms: number }[]) {
        if (expected.has(row.team)) expect(row.bound_ms).toBe(expected.get(row.team));
      }
      // an instance that does not hold the teams in memory computes the same bounds from the store's rows
      const other = await startGateway({ DATABASE_URL: gw.config.DATABASE_URL, INDEX_SYNC_CALLS_PER_MIN: String(perMin) }, {}, { sim, simClock: true });
      try {
        for (const row of await other.deps.replica!.status()) {
          if (!expected.has(row.team)) continue;
          expect(row.in_memory).toBe(false);
          expect(row.bound_ms).toBe(expected.get(row.team));
        }
      } finally { await other.close(); }
      const m = (await gw.app.inject({ method: 'GET', url: '/metrics', headers: op })).body;
      expect(m).toContain(`gateway_index_bound_max_seconds ${largest / 1000}`);
      expect(m).toContain(`gateway_index_bound_seconds_count ${teams.length}`);
      for (const id of teams) expect(m).not.toContain(id);
    } finally {
      await gw.close();
      await sim.sim.close();
    }
  });
});
