import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TeamReplica } from '../../src/replica/team/team-replica.js';
import { roomSpacing, spread } from '../../src/replica/sync/minute-room.js';
import { minuteOf, SyncCallStore } from '../../src/store/sync-calls.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * Issue 43, the bound that holds: a cadence fits a whole minute's budget, but a minute may already be partly spent (a
 * backfill, the whole sync that turned the team to a rotation, another instance's syncs). The syncs are then spread over
 * what the minute has left, and the bounds stated say so — before, they ran at the cadence's interval until the store
 * refused one, and a reader found the team past the bound it had been told (the bound-property test, about 1 run in 20).
 */
const TICK = 250;

describe('roomSpacing', () => {
  const whole = { intervalMs: 4_000, cycleMs: 0, activeBoundMs: 5_000, boundMs: 5_000 };
  const rotation = { intervalMs: 4_000, cycleMs: 60_000, activeBoundMs: 5_000, boundMs: 64_250 };

  it('is 0 while the syncs left in the minute fit what it has left', () => {
    // 40 s left: syncs at +4 s … +36 s (9) of 5 calls: 45
    expect(roomSpacing(whole, { left: 45, minuteEnd: 40_000 }, 0, 5, 0, () => 0)).toBe(0);
    // a minute ending before the next sync: nothing to spread
    expect(roomSpacing(whole, { left: 0, minuteEnd: 3_000 }, 0, 5, 0, () => 0)).toBe(0);
  });

  it('spreads as many syncs as fit evenly up to the minute\'s end', () => {
    // 44 calls: 8 syncs fit, 9 intervals of 40 s ÷ 9 = 4 445 ms
    expect(roomSpacing(whole, { left: 44, minuteEnd: 40_000 }, 0, 5, 0, () => 0)).toBe(445);
    // no room for one: the next sync at the minute's end
    expect(roomSpacing(whole, { left: 4, minuteEnd: 40_000 }, 0, 5, 0, () => 0)).toBe(36_000);
  });

  it('counts a rotation\'s quiet checks due before the minute\'s end, asked only when all of them would not fit', () => {
    let asked = 0;
    const due = (n: number) => () => {
      asked++;
      return n;
    };
    // 9 syncs of 3 calls and at most 10 quiet projects: 37 fit 40 without asking which are due
    expect(roomSpacing(rotation, { left: 40, minuteEnd: 40_000 }, 0, 3, 10, due(10))).toBe(0);
    expect(asked).toBe(0);
    // 30 quiet projects, 6 due in the rest of the minute: 27 + 6 fit 35
    expect(roomSpacing(rotation, { left: 35, minuteEnd: 40_000 }, 0, 3, 30, due(6))).toBe(0);
    expect(asked).toBe(1);
    // 20 of them due: 15 calls left for syncs of 3 — five, 40 s ÷ 6
    expect(roomSpacing(rotation, { left: 35, minuteEnd: 40_000 }, 0, 3, 30, due(20))).toBe(6_667 - 4_000);
  });

  it('the spread cadence is later by as much in its interval and both bounds, its cycle the same', () => {
    expect(spread(rotation, 500)).toEqual({ intervalMs: 4_500, cycleMs: 60_000, activeBoundMs: 5_500, boundMs: 64_750 });
    expect(spread(rotation, 0)).toBe(rotation);
  });
});

describe('a minute another instance has mostly spent', () => {
  let sim: RunningSim;
  let gw: TestGateway;
  let t: TeamReplica;
  const now = () => sim.sim.world.clock.now();

  beforeAll(async () => {
    sim = await startSim();
    const team = sim.keys[0]!.teams[0]!.id;
    gw = await startGateway(
      { INDEX_SYNC_CALLS_PER_MIN: '600', INDEX_RECONCILE_MS: '3600000', INDEX_MAX_STALENESS_MS: '5000' }, {}, { sim, simClock: true },
    );
    await gw.addUser(0, 'room@example.com');
    await gw.deps.replica!.syncNow([team]);
    t = (await gw.deps.replica!.load(team))!;
  });

  afterAll(async () => {
    await gw?.close();
    await sim?.sim.close();
  });

  it('spreads the team\'s syncs over what is left: none refused, a reader never finds it past the bound it was told', async () => {
    const replica = gw.deps.replica!;
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
      widest = Math.max(widest, active);
      stated = active;
    }
    const used = (await new SyncCallStore(gw.deps.db.kysely).used(minute)).get(`team:${t.id}`)!;
    // the team was synced in the minute, within its budget, and said its syncs were further apart than usual
    expect(syncs).toBeGreaterThan(1);
    expect(used).toBeLessThanOrEqual(600);
    expect(widest).toBeGreaterThan(usual);
    // and the next minute is its usual cadence again
    sim.sim.world.advance(TICK);
    t.readAt = now();
    await replica.tick();
    expect(replica.activity(t).boundMs).toBe(usual);
  });
});
