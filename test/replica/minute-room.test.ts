import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TeamReplica } from '../../src/replica/team/team-replica.js';
import { roomSpacing, spread } from '../../src/replica/sync/minute-room.js';
import { quietChecksDue } from '../../src/replica/sync/rotation.js';
import type { SyncBudget } from '../../src/replica/sync/budget.js';
import { minuteOf, SyncCallStore } from '../../src/store/sync-calls.js';
import { partitionOf } from '../../src/v1/client.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * Issue 43, the bound that holds: a cadence fits a whole minute's budget, but a minute may already be partly spent (a
 * backfill, the whole sync that turned the team to a rotation, another instance's syncs). The syncs are then spread over
 * what the minute has left, and the bounds stated say so — before, they ran at the cadence's interval until the store
 * refused one, and a reader found the team past the bound it had been told (the bound-property test, about 1 run in 20).
 */
const TICK = 250;

describe('roomSpacing', () => {
  const whole = (left: number, minuteEnd: number, extra = 0) =>
    roomSpacing({ left, minuteEnd }, 0, { spacingMs: 4_000, fixed: 5, extra, quietMost: 0, quietDue: () => 0 });

  it('is 0 while the syncs left in the minute fit what it has left', () => {
    // 40 s left: syncs at +4 s … +36 s (9) of 5 calls: 45
    expect(whole(45, 40_000)).toBe(0);
    // a minute ending before the next sync: nothing to spread
    expect(whole(0, 3_000)).toBe(0);
  });

  it('spreads as many syncs as fit evenly up to the minute\'s end, the other calls due meanwhile kept aside', () => {
    // 44 calls: 8 syncs fit, 9 intervals of 40 s ÷ 9 = 4 445 ms
    expect(whole(44, 40_000)).toBe(445);
    // no room for one: the next sync at the minute's end
    expect(whole(4, 40_000)).toBe(36_000);
    // a full sync's 22 calls due before the end: 45 − 22 leaves 4 syncs, 40 s ÷ 5
    expect(whole(45, 40_000, 22)).toBe(4_000);
  });

  it('counts a rotation\'s quiet checks due before the minute\'s end, asked only when the most there can be would not fit', () => {
    let asked = 0;
    const rotation = (left: number, quietMost: number, due: number) => roomSpacing({ left, minuteEnd: 40_000 }, 0, {
      spacingMs: 4_000, fixed: 3, extra: 0, quietMost, quietDue: () => {
        asked++;
        return due;
      },
    });
    // 9 syncs of 3 calls and at most 10 quiet checks: 37 fit 40 without asking which are due
    expect(rotation(40, 10, 10)).toBe(0);
    expect(asked).toBe(0);
    // at most 60, 6 due: 27 + 6 fit 35
    expect(rotation(35, 60, 6)).toBe(0);
    expect(asked).toBe(1);
    // 20 due: 15 calls left for syncs of 3 — five, 40 s ÷ 6
    expect(rotation(35, 60, 20)).toBe(6_667 - 4_000);
  });

  it('the spread cadence is later by as much in its interval and both bounds, its cycle the same', () => {
    const c = { intervalMs: 4_000, cycleMs: 60_000, activeBoundMs: 5_000, boundMs: 64_250 };
    expect(spread(c, 500)).toEqual({ intervalMs: 4_500, cycleMs: 60_000, activeBoundMs: 5_500, boundMs: 64_750 });
    expect(spread(c, 0)).toBe(c);
  });
});

describe('quietChecksDue', () => {
  it('counts each quiet project\'s due times in the window, twice when its cycle passes twice', () => {
    const ids = Array.from({ length: 50 }, (_, i) => `proj_${i}`);
    const active = new Set(ids.slice(0, 10));
    // a window of one cycle: each quiet project once (its phase falls in it once)
    expect(quietChecksDue(ids, active, 8_000, 1_000, 9_000)).toBe(40);
    // of two and a half cycles: each two or three times — more than once each (headsDue lists each once)
    const n = quietChecksDue(ids, active, 8_000, 0, 20_000);
    expect(n).toBeGreaterThanOrEqual(80);
    expect(n).toBeLessThanOrEqual(120);
    expect(n).toBe(ids.slice(10).reduce((k, id) => k + quietChecksDue([id], new Set(), 8_000, 0, 20_000), 0));
    // no rotation: none
    expect(quietChecksDue(ids, active, 0, 0, 20_000)).toBe(0);
  });
});

/** A gateway on the simulator's manual clock, 600 calls a team a minute, the key's teams backfilled (`user` added). */
async function roomGateway(user: string): Promise<{ sim: RunningSim; gw: TestGateway; t: TeamReplica }> {
  const sim = await startSim();
  const team = sim.keys[0]!.teams[0]!.id;
  const gw = await startGateway(
    { INDEX_SYNC_CALLS_PER_MIN: '600', INDEX_RECONCILE_MS: '3600000', INDEX_MAX_STALENESS_MS: '5000' }, {}, { sim, simClock: true },
  );
  await gw.addUser(0, user);
  await gw.deps.replica!.syncNow(sim.keys[0]!.teams.map((x) => x.id)); // (every team of the key: reads are the replica's)
  return { sim, gw, t: (await gw.deps.replica!.load(team))! };
}

describe('a minute another instance has mostly spent', () => {
  let sim: RunningSim;
  let gw: TestGateway;
  let t: TeamReplica;
  const now = () => sim.sim.world.clock.now();

  beforeAll(async () => {
    ({ sim, gw, t } = await roomGateway('room@example.com'));
  });

  afterAll(async () => {
    await gw?.close();
    await sim?.sim.close();
  });

  it('spreads the team\'s syncs over what is left: none refused, a reader never finds it past the bound it was told', async () => {
    const replica = gw.deps.replica!;
    const budget = (replica as unknown as { budget: SyncBudget }).budget;
    // two seconds into a minute, 560 of the team's 600 calls counted by another instance
    sim.sim.world.advance(60_000 - (now() % 60_000) + 2_000);
    const minute = minuteOf(now());
    await new SyncCallStore(gw.deps.db.kysely).add([`team:${t.id}`], 560, minute);
    const usual = replica.activity(t).boundMs;
    let stated = usual;
    let syncs = 0;
    let widest = 0;
    while (minuteOf(now()) === minute) {
      sim.sim.world.advance(TICK);
      t.readAt = now();
      const before = t.syncedAt;
      await replica.tick();
      if (t.syncedAt !== before) syncs++;
      const active = replica.activity(t).boundMs;
      // the team's age within the bound stated a tick ago or now (it lengthens when the room is learnt, at a sync)
      expect(now() - t.syncedAt!, `at ${now() % 60_000} ms into the minute`).toBeLessThanOrEqual(Math.max(active, stated));
      // and no sync refused (a refusal makes the budget wait, and the wait is stated on top)
      expect(budget.waitMs(t.id, now()), `at ${now() % 60_000} ms into the minute`).toBe(0);
      widest = Math.max(widest, active);
      stated = active;
    }
    // the team was synced in the minute, and said its syncs were further apart than usual
    expect(syncs).toBeGreaterThan(1);
    expect(widest).toBeGreaterThan(usual);
    // and the next minute is its usual cadence again
    sim.sim.world.advance(TICK);
    t.readAt = now();
    await replica.tick();
    expect(replica.activity(t).boundMs).toBe(usual);
  });
});

describe('a team whose sync fails while its syncs are spread (review of issue 43)', () => {
  let sim: RunningSim;
  let gw: TestGateway;
  let t: TeamReplica;
  const now = () => sim.sim.world.clock.now();

  beforeAll(async () => {
    ({ sim, gw, t } = await roomGateway('fails@example.com'));
  });

  afterAll(async () => {
    await gw?.close();
    await sim?.sim.close();
  });

  it('counts stale past its usual bound and is answered live — its bound not stretched by the failed tries', async () => {
    const replica = gw.deps.replica!;
    const step = async () => {
      sim.sim.world.advance(TICK);
      t.readAt = now();
      await replica.tick();
    };
    sim.sim.world.advance(60_000 - (now() % 60_000) + 2_000);
    const minute = minuteOf(now());
    await new SyncCallStore(gw.deps.db.kysely).add([`team:${t.id}`], 560, minute);
    const usual = replica.activity(t).boundMs;
    // the first sync of the minute learns the room: the team's syncs spread
    const first = t.syncedAt;
    while (t.syncedAt === first) await step();
    expect(replica.activity(t).boundMs).toBeGreaterThan(usual);
    // v1 then fails the team's syncs
    sim.sim.faults.set({ rules: [{ kind: 'error500', path: '/v1/projects' }] });
    const synced = t.syncedAt!;
    const scheduler = (replica as unknown as { scheduler: { failure(id: string): unknown } }).scheduler;
    while (scheduler.failure(t.id) === undefined && minuteOf(now()) === minute) await step();
    expect(scheduler.failure(t.id)).toBeDefined();
    while (now() - synced <= usual) await step();
    expect(minuteOf(now())).toBe(minute);
    // the bound it states is its usual one again (before: stretched by every failed try's reservation)
    expect(replica.activity(t).boundMs).toBeLessThanOrEqual(Math.max(usual, (replica as unknown as { budget: SyncBudget }).budget.waitMs(t.id, now()) + usual));
    // the fast path does not take it (before: fresh within the stretched bound, answered from the old copy)
    expect(replica.epochHeld(partitionOf(sim.keys[0]!.api_key))).toBeUndefined();
    // a read (v1 still failing the team's project list: the sync before it fails again) goes to v1 — which fails it
    // too: a 503, not the old copy's 200
    const token = await gw.login('fails@example.com');
    const read = await gw.get('/renders?limit=1', token);
    expect(read.status).toBe(503);
    expect(read.body.errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
    // v1 back: once the key's teams are synced again (every team of the key failed with it), reads are the replica's
    sim.sim.faults.set({ rules: [] });
    sim.sim.world.advance(60_000 - (now() % 60_000) + TICK);
    await replica.syncNow(sim.keys[0]!.teams.map((x) => x.id));
    expect(scheduler.failure(t.id)).toBeUndefined();
    const again = await gw.get('/renders?limit=1', token, { 'x-gateway-explain': '1', 'x-gateway-operator-token': TEST_ENV.GATEWAY_ADMIN_TOKEN });
    expect(again.status).toBe(200);
    expect(again.body.explain.source).toBe('index');
  });
});
