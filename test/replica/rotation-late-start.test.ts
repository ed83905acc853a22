import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SyncCallStore } from '../../src/store/sync-calls.js';
import type { TeamReplica } from '../../src/replica/team/team-replica.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * The quiet projects' rotation when time passes between a sync's plan and its walk (the budget reserved in the store:
 * milliseconds on a real store, here GAP ms of the simulator's manual clock, moved while the reservation is written). The heads a sync checks are those due up to its plan; the team's last sync must be that moment too, or the
 * projects due between the plan and the walk are left to the next cycle (checked past the stated bound).
 */
const PER_MIN = 120;
const TICK = 1_000;
const GAP = 700;

interface Call { readonly at: number; readonly url: URL }

async function recordingProxy(sim: RunningSim, calls: Call[]): Promise<{ url: string; server: Server }> {
  const target = new URL(sim.url);
  const server = createServer((req, res) => {
    calls.push({ at: sim.sim.world.clock.now(), url: new URL(req.url ?? '/', sim.url) });
    const up = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** A head check: a render list's first page (no cursor) not filtered by status. */
const isHead = (c: Call) =>
  c.url.pathname === '/v1/renders' && !c.url.searchParams.has('status') && !c.url.searchParams.has('cursor');

describe('quiet projects rotation, a sync starting late', () => {
  let sim: RunningSim;
  let proxy: { url: string; server: Server };
  let gw: TestGateway;
  const calls: Call[] = [];
  let t: TeamReplica;
  let projects: string[];
  let loopStart = 0;
  let end = 0;
  const stated: { at: number; bound: number }[] = [];
  let syncs = 0;
  let rotated = 0;

  beforeAll(async () => {
    sim = await startSim();
    const team = sim.keys[0]!.teams[0]!.id;
    for (let i = 0; i < 18; i++) sim.sim.world.addProject(team, `Quiet ${i}`);
    proxy = await recordingProxy(sim, calls);
    gw = await startGateway(
      { INDEX_SYNC_CALLS_PER_MIN: String(PER_MIN), INDEX_ACTIVE_MS: '120000', INDEX_RECONCILE_MS: '3600000', INDEX_MAX_STALENESS_MS: '5000' },
      {}, { sim: { ...sim, url: proxy.url }, simClock: true },
    );
    await gw.addUser(0, 'ann@example.com');
    const index = gw.deps.replica!;
    await index.syncNow([team]);
    t = (await index.load(team))!;
    projects = [...t.projects.keys()].sort();
    sim.sim.world.advance(130_000);
    const person = sim.sim.world.authenticate(`Bearer ${sim.keys[0]!.api_key}`);
    const empty = projects.filter((p) => t.projectRenderIds(p).length === 0);
    const active = [empty[0]!, empty[1]!];
    const make = (project: string) => sim.sim.world.createRender(person, { project_id: project, name: 'r' });
    make(active[0]!);
    make(active[1]!);
    await index.syncNow([team]);
    // from here every sync's walk starts GAP ms after its plan (the calls reserved in the store between them)
    const reserve = SyncCallStore.prototype.reserve;
    SyncCallStore.prototype.reserve = async function (this: SyncCallStore, ...args: Parameters<SyncCallStore['reserve']>) {
      sim.sim.world.advance(GAP);
      return reserve.apply(this, args);
    };
    sim.sim.world.advance(60_000 - (sim.sim.world.clock.now() % 60_000));
    loopStart = sim.sim.world.clock.now();
    for (let step = 1; step <= 240; step++) {
      sim.sim.world.advance(TICK);
      if (step % 3 === 0) make(active[(step / 3) % 2]!);
      stated.push({ at: sim.sim.world.clock.now(), bound: index.boundOf(t) });
      t.readAt = sim.sim.world.clock.now();
      const from = calls.length;
      const before = t.syncedAt;
      await index.tick();
      if (t.syncedAt !== before) {
        syncs++;
        if (calls.slice(from).filter(isHead).length < projects.length) rotated++;
      }
    }
    end = sim.sim.world.clock.now();
  }, 120_000);

  afterAll(async () => {
    await gw?.close();
    await new Promise((resolve) => proxy?.server.close(resolve));
    await sim?.sim.close();
  });

  it('checks every project within the stated bound (plus the sync\'s own delay)', () => {
    expect(syncs).toBeGreaterThan(20);
    expect(rotated).toBeGreaterThan(syncs / 2); // the quiet projects were in rotation
    const heads = calls.filter((c) => c.at > loopStart && isHead(c));
    for (const p of projects) {
      const at = [loopStart, ...heads.filter((c) => c.url.searchParams.get('project_id') === p).map((c) => c.at), end];
      for (let i = 1; i < at.length; i++) {
        const bound = Math.max(...stated.filter((x) => x.at <= at[i]!).map((x) => x.bound));
        expect(at[i]! - at[i - 1]!, `project ${p} unchecked from ${at[i - 1]! - loopStart} to ${at[i]! - loopStart}`)
          .toBeLessThanOrEqual(bound + TICK + GAP);
      }
    }
  });
});
