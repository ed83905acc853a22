import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETRY_MOST_MS, retryAfterMs } from '../../src/replica/sync/failures.js';
import type { TeamReplica } from '../../src/replica/team/team-replica.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * A team whose syncs v1 keeps failing (an outage, a key no longer valid) is tried again after a back-off — its interval,
 * doubled with each failure in a row, at most RETRY_MOST_MS — not at every tick of the background sync (before: once its
 * bound had passed, every 250 ms, each try a lease and a reservation in the store besides its v1 calls).
 */
const TICK = 250;

describe('retryAfterMs', () => {
  it('doubles the interval with each failure in a row, up to RETRY_MOST_MS', () => {
    expect(retryAfterMs(2_500, 1)).toBe(2_500);
    expect(retryAfterMs(2_500, 2)).toBe(5_000);
    expect(retryAfterMs(2_500, 4)).toBe(20_000);
    expect(retryAfterMs(2_500, 6)).toBe(RETRY_MOST_MS);
    expect(retryAfterMs(2_500, 1_000)).toBe(RETRY_MOST_MS);
    expect(retryAfterMs(0, 1)).toBe(TICK);
  });
});

describe('a team whose syncs v1 keeps failing', () => {
  let sim: RunningSim;
  let gw: TestGateway;
  let t: TeamReplica;
  const now = () => sim.sim.world.clock.now();
  /** A tick of the background sync, the team read just before it. */
  const step = async () => {
    sim.sim.world.advance(TICK);
    t.readAt = now();
    await gw.deps.replica!.tick();
  };

  beforeAll(async () => {
    sim = await startSim();
    gw = await startGateway({ INDEX_RECONCILE_MS: '3600000', INDEX_MAX_STALENESS_MS: '5000' }, {}, { sim, simClock: true });
    await gw.addUser(0, 'retry@example.com');
    await gw.deps.replica!.syncNow(sim.keys[0]!.teams.map((x) => x.id));
    t = (await gw.deps.replica!.load(sim.keys[0]!.teams[0]!.id))!;
  });

  afterAll(async () => {
    await gw?.close();
    await sim?.sim.close();
  });

  it('is tried again after a back-off, not at every tick; once v1 answers, within RETRY_MOST_MS', async () => {
    const replica = gw.deps.replica!;
    const scheduler = (replica as unknown as { scheduler: { failure(id: string): { tries: number } | undefined } }).scheduler;
    const projectLists = () => sim.sim.stats.get('GET /v1/projects') ?? 0;
    sim.sim.faults.set({ rules: [{ kind: 'error500', path: '/v1/projects' }] });
    while (scheduler.failure(t.id) === undefined) await step();
    // two minutes of ticks (480) while v1 fails the team's project list
    const before = projectLists();
    for (let i = 0; i < 480; i++) await step();
    const tries = projectLists() - before;
    // tried again (the back-off ends), but a handful of times: after 2.5 s, 5, 10, 20, 40, then every 60 s — the key's
    // other teams alike, v1's client retrying a 500 too (before: 3 368 project-list calls, a try at every tick)
    expect(tries).toBeGreaterThan(0);
    expect(tries).toBeLessThan(200);
    expect(scheduler.failure(t.id)!.tries).toBeGreaterThanOrEqual(4);
    expect(scheduler.failure(t.id)!.tries).toBeLessThanOrEqual(8);
    // v1 answers again: the team is synced within the longest back-off, and its failure cleared
    sim.sim.faults.set({ rules: [] });
    const failedAt = now();
    while (scheduler.failure(t.id) !== undefined && now() - failedAt <= RETRY_MOST_MS + TICK) await step();
    expect(scheduler.failure(t.id)).toBeUndefined();
    expect(t.syncedAt).toBeGreaterThanOrEqual(failedAt);
  });

  it('read during the outage, is not tried by each read: the reads are answered from v1 while it backs off', async () => {
    const replica = gw.deps.replica!;
    const scheduler = (replica as unknown as { scheduler: { failure(id: string): { tries: number } | undefined } }).scheduler;
    const token = await gw.login('retry@example.com');
    sim.sim.faults.set({ rules: [{ kind: 'error500', path: '/v1/projects' }] });
    const statuses = new Set<number>();
    // two minutes of ticks, a read of the team every fourth (120 reads)
    for (let i = 0; i < 480; i++) {
      await step();
      if (i % 4 === 0) statuses.add((await gw.get('/renders?limit=1', token)).status);
    }
    // tried a handful of times, as with no reads (before: every read tried a sync first — a try per read)
    expect(scheduler.failure(t.id)!.tries).toBeGreaterThanOrEqual(4);
    expect(scheduler.failure(t.id)!.tries).toBeLessThanOrEqual(8);
    // every read answered (v1 fails the project list the live path reads too: 503), none a 500
    expect([...statuses].every((s) => s === 200 || s === 503)).toBe(true);
    sim.sim.faults.set({ rules: [] });
  });
});
