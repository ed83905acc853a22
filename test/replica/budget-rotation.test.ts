import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TeamReplica } from '../../src/replica/team/team-replica.js';
import type { SyncBudget } from '../../src/replica/sync/budget.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * A polled team whose budget binds, its templates read in a rotation (TEMPLATES_RECONCILE_MS past INDEX_RECONCILE_MS),
 * driven tick by tick on the simulator's clock for minutes: no sync's reservation is refused, and the team is never
 * older than the bound it stated. It guards the full sync's timing — a change that ran the full sync on time as one
 * more sync (d21b6e8, reverted) refused the minute's last sync and went 3.8 s past the bound here.
 */
describe('a polled team with a rotation of templates, its budget binding', () => {
  let sim: RunningSim;
  let gw: TestGateway;
  const MINUTES = 8;

  beforeAll(async () => {
    sim = await startSim();
    gw = await startGateway({
      INDEX_RECONCILE_MS: '45000', TEMPLATES_RECONCILE_MS: '300000', INDEX_MAX_STALENESS_MS: '5000', INDEX_SYNC_CALLS_PER_MIN: '40',
    }, {}, { sim, simClock: true });
    await gw.addUser(0, 'budget-rotation@example.com');
    await gw.deps.replica!.syncNow(sim.keys[0]!.teams.map((t) => t.id));
  });
  afterAll(async () => { await gw?.close(); await sim?.sim.close(); });

  it('refuses no sync and stays within its stated bound, minute after minute', async () => {
    const team = sim.keys[0]!.teams[0]!.id;
    const t = (await gw.deps.replica!.load(team))!;
    const held = gw.deps.replica as unknown as {
      scheduler: { pending(): Promise<void>[]; deps: { budget: SyncBudget; sync: { sync: (t: TeamReplica, ...rest: unknown[]) => Promise<void> } } };
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
    const reserveOf = budget.reserve.bind(budget);
    budget.reserve = async (...args: Parameters<SyncBudget['reserve']>) => {
      const ok = await reserveOf(...args);
      if (args[0].id === team && !ok) refused++;
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
    // the budget binds: about one sync every few seconds, the full ones among them (every 45 s)
    expect(syncs).toBeGreaterThan(MINUTES * 5);
    expect(fulls).toBeGreaterThanOrEqual(MINUTES - 1);
    expect(refused).toBe(0);
    expect(over).toBeLessThanOrEqual(0);
  }, 120_000);
});
