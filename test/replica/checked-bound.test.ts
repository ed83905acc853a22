import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HeadDeadlines } from '../../src/replica/sync/deadlines.js';
import type { TeamReplica } from '../../src/replica/team/team-replica.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * Issue 43's review, L2: the heads a sync checked owe their next check by the bound the team stated when the sync began —
 * not the one its own walk led to. A sync that finds many new projects lengthens the team's rotation (its quiet projects'
 * cycle grows with their number, the budget the same); the heads it checked were promised the shorter bound to readers
 * at its start, and must be checked again within it.
 */
describe('the deadlines a sync sets for the heads it checked', () => {
  let sim: RunningSim;
  let gw: TestGateway;
  let t: TeamReplica;

  beforeAll(async () => {
    sim = await startSim();
    const team = sim.keys[0]!.teams[0]!.id;
    gw = await startGateway(
      { INDEX_SYNC_CALLS_PER_MIN: '60', INDEX_ACTIVE_MS: '120000', INDEX_RECONCILE_MS: '3600000', INDEX_MAX_STALENESS_MS: '5000' },
      {}, { sim, simClock: true },
    );
    await gw.addUser(0, 'ann@example.com');
    await gw.deps.replica!.syncNow([team]);
    t = (await gw.deps.replica!.load(team))!;
    sim.sim.world.advance(130_000); // every project quiet
  });

  afterAll(async () => {
    await gw?.close();
    await sim?.sim.close();
  });

  it('are the bound stated at its start when its walk lengthened the bound', async () => {
    const replica = gw.deps.replica!;
    const deadlines = (replica as unknown as { scheduler: { deadlines: HeadDeadlines } }).scheduler.deadlines;
    // the team read and ticked: its bound stated, its heads' deadlines kept
    t.readAt = sim.sim.world.clock.now();
    await replica.tick();
    const before = replica.boundOf(t);
    expect(deadlines.earliest(t)).toBeLessThan(Infinity);
    const checked = [...t.projects.keys()].sort();
    // 40 new projects: the next sync finds them, and the quiet projects' cycle (the team's bound) grows
    for (let i = 0; i < 40; i++) sim.sim.world.addProject(t.id, `New ${i}`);
    const started = sim.sim.world.clock.now();
    await replica.syncTeam(t, false);
    const after = replica.boundOf(t);
    expect(t.projects.size).toBeGreaterThan(40);
    expect(after).toBeGreaterThan(before);
    // every head the sync checked (the projects it planned: those known at its start) owes its next check within the bound
    // stated when the sync began (before: the longer one); the new projects are owed from the next tick's statement
    expect(deadlines.earliest(t) - started).toBe(before);
    expect(deadlines.owedBy(t, started + before)).toEqual(checked);
  });
});
