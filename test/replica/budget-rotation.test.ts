import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TeamReplica } from '../../src/replica/team/team-replica.js';
import type { SyncBudget } from '../../src/replica/sync/budget.js';
import { fullCallsPerMin } from '../../src/replica/sync/freshness.js';
import { phaseHash } from '../../src/replica/sync/rotation.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * A polled team, its templates read in a rotation (TEMPLATES_RECONCILE_MS past INDEX_RECONCILE_MS), driven tick by tick
 * on the simulator's clock for minutes: no sync's reservation is refused, the team is never older than the bound it
 * stated, and no minute's full syncs reserve more calls than `fullCallsPerMin` kept aside for them. Two shapes: a budget
 * that binds (a sync every few seconds), and a long staleness bound (regular syncs 15 s apart, where a full sync that
 * rode on the next regular one came up to an interval late and read the templates of a longer window: review M1). It
 * guards the full sync's timing — a change that ran the full sync on time as one more sync (d21b6e8, reverted) refused
 * the minute's last sync and went 3.8 s past the bound in the first shape.
 */
describe.each([
  {
    shape: 'its budget binding', scale: 'tiny' as const, teams: 'all' as const, minSyncs: 5,
    env: { INDEX_RECONCILE_MS: '45000', TEMPLATES_RECONCILE_MS: '300000', INDEX_MAX_STALENESS_MS: '5000', INDEX_SYNC_CALLS_PER_MIN: '40' },
  },
  {
    shape: 'its regular syncs far apart', scale: 'bench' as const, teams: 'one' as const, minSyncs: 2,
    env: { INDEX_RECONCILE_MS: '40000', TEMPLATES_RECONCILE_MS: '300000', INDEX_MAX_STALENESS_MS: '30000', INDEX_SYNC_CALLS_PER_MIN: '600' },
  },
])('a polled team with a rotation of templates, $shape', ({ scale, teams, minSyncs, env }) => {
  let sim: RunningSim;
  let gw: TestGateway;
  const MINUTES = 8;

  beforeAll(async () => {
    sim = await startSim({ scale });
    gw = await startGateway(env, {}, { sim, simClock: true });
    await gw.addUser(0, 'budget-rotation@example.com');
    // (a bench team is 10 000 renders: that one alone)
    const ids = sim.keys[0]!.teams.map((t) => t.id);
    await gw.deps.replica!.syncNow(teams === 'all' ? ids : ids.slice(0, 1));
  }, 60_000);
  afterAll(async () => { await gw?.close(); await sim?.sim.close(); });

  it('refuses no sync and stays within its stated bound, minute after minute', async () => {
    const team = sim.keys[0]!.teams[0]!.id;
    const t = (await gw.deps.replica!.load(team))!;
    const held = gw.deps.replica as unknown as {
      scheduler: {
        pending(): Promise<void>[];
        deps: { budget: SyncBudget; sync: { sync: (t: TeamReplica, ...rest: unknown[]) => Promise<void>; full: (t: TeamReplica, ...rest: unknown[]) => Promise<void> } };
      };
      registry: { values(): Iterable<{ readAt: number }> };
    };
    // (the other teams' background left out: this team alone spends the key's minute)
    for (const x of held.registry.values()) x.readAt = Number.NEGATIVE_INFINITY;
    await Promise.all(held.scheduler.pending());
    const { budget, sync } = held.scheduler.deps;
    const now = () => sim.sim.clock.now();
    let syncs = 0;
    let fulls = 0;
    let refused = 0;
    const syncOf = sync.sync.bind(sync);
    sync.sync = async (x: TeamReplica, ...rest: unknown[]) => {
      if (x.id === team) {
        syncs++;
        if (rest[1]) fulls++; // (the templates to read: a full sync)
      }
      return syncOf(x, ...rest);
    };
    // (a full sync run alone, at the tick it falls due between two regular syncs)
    const fullOf = sync.full.bind(sync);
    sync.full = async (x: TeamReplica, ...rest: unknown[]) => {
      if (x.id === team) fulls++;
      return fullOf(x, ...rest);
    };
    // the full syncs' calls reserved in each calendar minute
    const fullCalls = new Map<number, number>();
    const reserveOf = budget.reserve.bind(budget);
    budget.reserve = async (...args: Parameters<SyncBudget['reserve']>) => {
      const ok = await reserveOf(...args);
      if (args[0].id === team && !ok) refused++;
      if (args[0].id === team && ok) fullCalls.set(args[1].minute, (fullCalls.get(args[1].minute) ?? 0) + (args[2] ?? 0));
      return ok;
    };
    // from a minute's start, a warm-up minute, then every tick (250 ms) checked
    sim.sim.clock.advance(120_000 - (now() % 60_000));
    const start = now();
    let over = Number.NEGATIVE_INFINITY;
    while (now() < start + MINUTES * 60_000) {
      t.readAt = now();
      if (now() - start >= 60_000) over = Math.max(over, now() - (t.syncedAt ?? 0) - gw.deps.replica!.boundOf(t));
      await gw.deps.replica!.tick();
      await Promise.all(held.scheduler.pending());
      sim.sim.clock.advance(250);
    }
    // a sync every few seconds (the budget binding) or every 15 s, the full ones among them (every 40–45 s)
    expect(syncs).toBeGreaterThan(MINUTES * minSyncs);
    expect(fulls).toBeGreaterThanOrEqual(MINUTES - 1);
    expect(refused).toBe(0);
    expect(over).toBeLessThanOrEqual(0);
    const c = { INDEX_RECONCILE_MS: Number(env.INDEX_RECONCILE_MS), TEMPLATES_RECONCILE_MS: Number(env.TEMPLATES_RECONCILE_MS) };
    const kept = fullCallsPerMin(c, t.projects.size, [...t.projects.keys()].map(phaseHash));
    const minutes = [...fullCalls].filter(([m]) => m * 60_000 >= start + 60_000);
    expect(minutes.filter(([, n]) => n > 0).length).toBeGreaterThanOrEqual(MINUTES - 2);
    expect(minutes.filter(([, n]) => n > kept)).toEqual([]);
  }, 120_000);
});
