import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * Issue 43, part 3: store writes in proportion to change. The periodic full sync (every INDEX_RECONCILE_MS: the team,
 * its members, every project's templates) rewrote every project row whatever it found; it writes the projects that
 * changed (a field, or a thumbnail whose signed URL nears its end), as a head sync does.
 */
let sim: RunningSim;
let gw: TestGateway;
const RECONCILE = 60_000;

beforeAll(async () => {
  sim = await startSim();
  gw = await startGateway({ INDEX_RECONCILE_MS: String(RECONCILE) }, {}, { sim, simClock: true });
  await gw.addUser(0, 'writes@example.com'); // a bound key reaching the teams
  await gw.deps.replica!.syncNow(sim.keys[0]!.teams.map((t) => t.id));
});
afterAll(async () => { await gw.close(); await sim.sim.close(); });

describe('a full sync (issue 43: writes in proportion to change)', () => {
  it('writes no project row when no project changed, and only the one that did', async () => {
    const team = sim.keys[0]!.teams[0]!.id;
    const ids = [...sim.sim.world.projects.values()].filter((p) => p.teamId === team).map((p) => p.id);
    expect(ids.length).toBeGreaterThan(1);
    const put = vi.spyOn(gw.deps.replica!.store, 'putProjects');
    const templates = sim.sim.stats.get('GET /v1/templates') ?? 0;
    // past INDEX_RECONCILE_MS, not past a thumbnail's signed URL's last fifth (the simulator's last 300 s)
    sim.sim.clock.advance(RECONCILE + 1);
    await gw.deps.replica!.syncNow([team]);
    expect(sim.sim.stats.get('GET /v1/templates') ?? 0).toBeGreaterThanOrEqual(templates + ids.length); // it was the full one
    expect(put.mock.calls.flatMap((c) => c[1].map((p) => p.id))).toEqual([]);
    // one project renamed in v1's dashboard: that row alone
    sim.sim.world.projects.get(ids[1]!)!.name = 'renamed in the dashboard';
    sim.sim.clock.advance(RECONCILE + 1);
    await gw.deps.replica!.syncNow([team]);
    expect(put.mock.calls.flatMap((c) => c[1].map((p) => p.id))).toEqual([ids[1]]);
    const token = await gw.login('writes@example.com');
    const read = await gw.get(`/projects?filter[title][_eq]=renamed in the dashboard&fields=title`, token);
    expect(read.body.data).toEqual([{ title: 'renamed in the dashboard' }]);
    put.mockRestore();
  });
});

describe('a head check (issue 43: writes in proportion to change)', () => {
  it('a render whose signed URLs only were signed afresh is not written to the store; the replica hands out the new URLs', async () => {
    const team = sim.keys[0]!.teams[0]!.id;
    const token = await gw.login('writes@example.com');
    const complete = [...sim.sim.world.renders.values()].filter((r) => r.teamId === team && r.status === 'complete');
    expect(complete.length).toBeGreaterThan(0);
    // past the last fifth of the URLs' lifetime (the simulator's 300 s): every head render's URLs near their end
    sim.sim.clock.advance(250_000);
    const putRenders = vi.spyOn(gw.deps.replica!.store, 'putRenders');
    await gw.deps.replica!.syncNow([team]);
    expect(putRenders.mock.calls.flatMap((c) => c[1].map((r) => r.id))).toEqual([]);
    putRenders.mockRestore();
    // the read hands out URLs the sync just saw (valid for the lifetime from now), refreshing none itself (no render read
    // by id: its one v1 call, if any, is the key's reach asked again after KEY_RECHECK_MS)
    const byId = sim.sim.stats.get('GET /v1/renders/:id') ?? 0;
    const read = await gw.get('/renders?filter[status][_eq]=complete&fields=id,output&limit=5&sort=-date_created', token);
    expect(read.body.data.length).toBeGreaterThan(0);
    expect(sim.sim.stats.get('GET /v1/renders/:id') ?? 0).toBe(byId);
    const now = sim.sim.clock.now();
    const urls = read.body.data.flatMap((r: { output: unknown }) => JSON.stringify(r.output).match(/https?:[^"]+/g) ?? []);
    expect(urls.length).toBeGreaterThan(0);
    // every URL handed out lasts (nearly) its whole lifetime from now: signed at this sync, not 250 s ago
    for (const u of urls) expect(Number(new URL(u).searchParams.get('expires')) * 1000).toBeGreaterThan(now + 200_000);
  });
});
