import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TeamReplica } from '../../src/replica/team/team-replica.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * Active projects first, quiet ones in rotation (src/replica/sync/rotation.ts, scheduler.ts, sync.ts): one team of 20
 * projects on a tight budget (120 calls a minute; a sync of every project takes 23), renders made in v1 every few seconds
 * in two projects and once in a quiet one, no webhooks. Simulated time walks a second at a time (the
 * simulator's manual clock, the background tick each second); a recording proxy in front of the simulator tells which
 * projects each sync read the head of. Held: the active projects at every sync and first, the quiet ones rotated
 * and each within the team's stated bound, new renders and status changes of the active projects found by the next
 * sync, a quiet project's new render within the bound (the project then active), no calendar minute past the budget.
 */
const op = { authorization: `Bearer ${TEST_ENV.GATEWAY_ADMIN_TOKEN}` };
const PER_MIN = 120;
/** The walk's step: the background tick runs each simulated second, so a due sync starts up to a second late. */
const TICK = 1_000;

interface Call { readonly at: number; readonly method: string; readonly url: URL }

/** A proxy to the simulator that keeps every request it passes on (its method, full URL and the simulated time). */
async function recordingProxy(sim: RunningSim, calls: Call[]): Promise<{ url: string; server: Server }> {
  const target = new URL(sim.url);
  const server = createServer((req, res) => {
    calls.push({ at: sim.sim.world.clock.now(), method: req.method ?? 'GET', url: new URL(req.url ?? '/', sim.url) });
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

/** The projects whose heads these calls read: a render list's first page (no cursor) not filtered by status. */
const headsOf = (calls: readonly Call[]) => calls
  .filter((c) => c.method === 'GET' && c.url.pathname === '/v1/renders' && !c.url.searchParams.has('status') && !c.url.searchParams.has('cursor'))
  .map((c) => c.url.searchParams.get('project_id') as string);

interface Tracked { readonly id: string; readonly project: string; readonly createdAt: number; foundAt?: number; completeAt?: number; doneAt?: number }

describe('active projects first, quiet ones in rotation (no webhooks)', () => {
  let sim: RunningSim;
  let proxy: { url: string; server: Server };
  let gw: TestGateway;
  const calls: Call[] = [];
  let team: string;
  let t: TeamReplica;
  let projects: string[];
  const syncs: { at: number; heads: string[] }[] = [];
  const tracked: Tracked[] = [];
  const status: { at: number; bound_ms: number; active_bound_ms: number; active_projects: number }[] = [];
  /** What the gateway stated before each step's tick: the team's bound and its active projects' bound. */
  const stated: { at: number; bound: number; activeBound: number; active: number }[] = [];
  let loopStart = 0;
  let wholeHeads: string[] = [];
  let active: [string, string];
  let quietOne: string;

  const now = () => sim.sim.world.clock.now();
  const statusRow = async () => {
    const rows = (await gw.app.inject({ method: 'GET', url: '/_gateway/index', headers: op })).json().data as
      { team: string; bound_ms: number; active_bound_ms: number; active_projects: number }[];
    return rows.find((r) => r.team === team)!;
  };

  beforeAll(async () => {
    sim = await startSim();
    team = sim.keys[0]!.teams[0]!.id;
    for (let i = 0; i < 18; i++) sim.sim.world.addProject(team, `Quiet ${i}`);
    proxy = await recordingProxy(sim, calls);
    gw = await startGateway(
      { INDEX_SYNC_CALLS_PER_MIN: String(PER_MIN), INDEX_ACTIVE_MS: '120000', INDEX_RECONCILE_MS: '3600000', INDEX_MAX_STALENESS_MS: '5000' },
      {}, { sim: { ...sim, url: proxy.url }, simClock: true },
    );
    await gw.addUser(0, 'ann@example.com');
    await gw.deps.replica!.syncNow([team]);
    t = (await gw.deps.replica!.load(team))!;
    projects = [...t.projects.keys()].sort();
    expect(projects).toHaveLength(20);
    // every seeded render older than the activity window and final: no project is active
    sim.sim.world.advance(130_000);
    await gw.deps.replica!.syncNow([team]);
    expect((await statusRow()).active_projects).toBe(0);

    const person = sim.sim.world.authenticate(`Bearer ${sim.keys[0]!.api_key}`);
    const make = (project: string) => {
      const r = sim.sim.world.createRender(person, { project_id: project, name: `render ${tracked.length}` });
      tracked.push({ id: r.id, project, createdAt: now() });
    };
    const candidates = projects.filter((p) => t.projectRenderIds(p).length === 0);
    active = [candidates[0]!, candidates[1]!];
    quietOne = candidates[2]!;
    make(active[0]);
    make(active[1]);
    await gw.deps.replica!.syncNow([team]); // a whole sync (no project active yet) finds them: both projects active
    expect((await statusRow()).active_projects).toBe(2);

    // the walk starts with a minute of its own (the budget is counted per calendar minute; the setup's syncs spent this one)
    sim.sim.world.advance(60_000 - (now() % 60_000));
    const before = calls.length;
    await gw.deps.replica!.syncNow([team]); // the command line's sync: every project, though two are active
    wholeHeads = headsOf(calls.slice(before));
    loopStart = now();
    for (let step = 1; step <= 240; step++) {
      sim.sim.world.advance(TICK);
      if (step % 3 === 0) make(active[(step / 3) % 2]!);
      if (step === 60) make(quietOne);
      const activity = gw.deps.replica!.activity(t);
      stated.push({ at: now(), bound: gw.deps.replica!.boundOf(t), activeBound: activity.boundMs, active: activity.projects });
      t.readAt = now(); // the team is being read: the background tick keeps it synced
      const from = calls.length;
      const before = t.syncedAt;
      await gw.deps.replica!.tick();
      if (t.syncedAt !== before) {
        expect(t.syncedAt).toBe(now());
        syncs.push({ at: now(), heads: headsOf(calls.slice(from)) });
      }
      for (const r of tracked) {
        const v1 = sim.sim.world.renders.get(r.id)!;
        if (v1.status === 'complete' && r.completeAt === undefined) r.completeAt = v1.updatedAt!;
        if (r.foundAt === undefined && t.has(r.id)) r.foundAt = now();
        if (r.doneAt === undefined && t.renderState(r.id)?.status === 'complete') r.doneAt = now();
      }
      if (step % 10 === 0) status.push({ at: now(), ...(await statusRow()) });
    }
  }, 120_000);

  afterAll(async () => {
    await gw?.close();
    await new Promise((resolve) => proxy?.server.close(resolve));
    await sim?.sim.close();
  });

  const firstSyncFrom = (at: number) => syncs.find((s) => s.at >= at)?.at;
  /** The largest bound stated between two moments (`pick`: the team's or its active projects'). */
  const statedDuring = (from: number, to: number, pick: (x: (typeof stated)[number]) => number) =>
    Math.max(...stated.filter((x) => x.at >= from && x.at <= to).map(pick), pick(stated.findLast((x) => x.at <= from) ?? stated[0]!));
  /** The projects active for a sync at `at`: a render created in them within the window, known before that sync. */
  const activeAt = (at: number) =>
    new Set(tracked.filter((r) => r.foundAt !== undefined && r.foundAt < at && r.createdAt > at - 120_000).map((r) => r.project));

  it('shows both bounds on /_gateway/index: the active projects\' and the team\'s (a true bound for its quiet projects) above it', async () => {
    const row = await statusRow();
    expect(row.bound_ms).toBe(gw.deps.replica!.boundOf(t));
    expect(row.active_bound_ms).toBe(gw.deps.replica!.activity(t).boundMs);
    expect(row.active_projects).toBe(activeAt(now() + 1).size);
    expect(status.length).toBe(24);
    for (const s of status) expect(s.bound_ms).toBeGreaterThan(s.active_bound_ms);
    // the quiet project's render made it active for a while
    expect(Math.max(...status.map((s) => s.active_projects))).toBe(3);
    // a sync of every project (23 calls) fits five times a minute: whole syncs would hold every project to 12 s
    expect(Math.max(...stated.map((s) => s.activeBound))).toBeLessThan(12_000);
  });

  it('checks every project\'s head on `index sync` (syncNow), the active ones first', () => {
    expect(new Set(wholeHeads)).toEqual(new Set(projects));
    expect(new Set(wholeHeads.slice(0, 2))).toEqual(new Set(active));
  });

  it('syncs at the active projects\' cadence and checks their heads first, at every sync', () => {
    expect(syncs.length).toBeGreaterThan(20);
    // a sync starts at most a tick after its interval (as stated after the sync before it)
    for (let i = 1; i < syncs.length; i++) {
      expect(syncs[i]!.at - syncs[i - 1]!.at).toBeLessThanOrEqual(statedDuring(syncs[i - 1]!.at, syncs[i]!.at, (x) => x.activeBound) + TICK);
    }
    for (const s of syncs) {
      const first = activeAt(s.at);
      expect(first.size).toBeGreaterThanOrEqual(2);
      expect(new Set(s.heads.slice(0, first.size))).toEqual(first);
    }
  });

  it('checks the quiet projects in rotation, every one within the stated bound', () => {
    const end = syncs.at(-1)!.at;
    expect(end - loopStart).toBeGreaterThan(2 * Math.max(...stated.map((x) => x.bound))); // the walk saw whole cycles
    // most syncs check only some of the quiet projects
    expect(syncs.filter((s) => s.heads.length < projects.length).length).toBeGreaterThanOrEqual(syncs.length - 1);
    let longestQuiet = 0;
    for (const p of projects) {
      const at = [loopStart, ...syncs.filter((s) => s.heads.includes(p)).map((s) => s.at), end];
      for (let i = 1; i < at.length; i++) {
        expect(at[i]! - at[i - 1]!).toBeLessThanOrEqual(statedDuring(at[i - 1]!, at[i]!, (x) => x.bound) + TICK);
        if (!active.includes(p) && p !== quietOne) longestQuiet = Math.max(longestQuiet, at[i]! - at[i - 1]!);
      }
    }
    expect(longestQuiet).toBeGreaterThan(Math.max(...stated.map((x) => x.activeBound)));
  });

  it('finds a render made in an active project at the next sync', () => {
    const inActive = tracked.filter((r) => active.includes(r.project) && r.createdAt > loopStart && r.createdAt <= syncs.at(-1)!.at);
    expect(inActive.length).toBeGreaterThan(70);
    for (const r of inActive) {
      expect(r.foundAt).toBe(firstSyncFrom(r.createdAt));
      expect(r.foundAt! - r.createdAt).toBeLessThanOrEqual(statedDuring(r.createdAt, r.foundAt!, (x) => x.activeBound) + TICK);
    }
  });

  it('finds a render made in a quiet project within the team\'s bound; that project is then active', () => {
    const r = tracked.find((x) => x.project === quietOne)!;
    expect(r.foundAt).toBeDefined();
    expect(r.foundAt! - r.createdAt).toBeLessThanOrEqual(statedDuring(r.createdAt, r.foundAt!, (x) => x.bound) + TICK);
    expect(stated.find((x) => x.at === firstSyncFrom(r.foundAt! + 1))!.active).toBe(3);
    const after = syncs.filter((s) => s.at > r.foundAt! && s.at < r.createdAt + 120_000);
    expect(after.length).toBeGreaterThan(2);
    for (const s of after) expect(s.heads.slice(0, 3)).toContain(quietOne);
  });

  it('finds status changes (processing → complete) at the next sync, within the active projects\' bound', () => {
    // renders the replica held before they completed (one it first sees complete was new to it: the test above)
    const done = tracked.filter((r) => r.completeAt !== undefined && r.completeAt <= syncs.at(-1)!.at && r.foundAt !== undefined && r.foundAt < r.completeAt);
    expect(done.length).toBeGreaterThan(30);
    for (const r of done) {
      expect(r.doneAt).toBe(firstSyncFrom(r.completeAt!));
      expect(r.doneAt! - r.completeAt!).toBeLessThanOrEqual(statedDuring(r.completeAt!, r.doneAt!, (x) => x.activeBound) + TICK);
    }
  });

  it('spends no calendar minute past the budget', () => {
    const perMinute = new Map<number, number>();
    for (const c of calls.filter((x) => x.at > loopStart && x.at <= syncs.at(-1)!.at)) {
      const minute = Math.floor(c.at / 60_000);
      perMinute.set(minute, (perMinute.get(minute) ?? 0) + 1);
    }
    expect(perMinute.size).toBeGreaterThan(2);
    for (const n of perMinute.values()) expect(n).toBeLessThanOrEqual(PER_MIN);
  });

  it('explains a read with both bounds: the largest of its teams\' and of their active projects\'', async () => {
    // every team of the key held (a read covers them all); this team's bounds are the largest
    await gw.deps.replica!.syncNow(sim.keys[0]!.teams.map((x) => x.id));
    const token = await gw.login('ann@example.com');
    const read = await gw.get('/renders?limit=1', token, { 'x-gateway-explain': '1', 'x-gateway-operator-token': TEST_ENV.GATEWAY_ADMIN_TOKEN });
    expect(read.headers['x-gateway-source']).toBe('index');
    expect(read.body.explain.bound_ms).toBe(gw.deps.replica!.boundOf(t));
    expect(read.body.explain.active_bound_ms).toBe(gw.deps.replica!.activity(t).boundMs);
    expect(read.body.explain.active_bound_ms).toBeLessThan(read.body.explain.bound_ms);
  });

  it('counts a render the gateway learns of outside a sync (its own create, a webhook): its project is active at once', async () => {
    const before = gw.deps.replica!.activity(t).projects;
    const project = projects.find((p) => !active.includes(p) && p !== quietOne && !activeAt(now() + 1).has(p))!;
    const person = sim.sim.world.authenticate(`Bearer ${sim.keys[0]!.api_key}`);
    const r = sim.sim.world.createRender(person, { project_id: project, name: 'applied' });
    await gw.deps.replica!.applyRender(r);
    expect((await statusRow()).active_projects).toBe(before + 1);
    sim.sim.world.advance(30_000); // past any interval: the next background sync checks that project among the first
    const from = calls.length;
    t.readAt = now();
    await gw.deps.replica!.tick();
    expect(t.syncedAt).toBe(now());
    const ours = headsOf(calls.slice(from)).filter((p) => projects.includes(p));
    const first = ours.slice(0, gw.deps.replica!.activity(t).projects);
    expect(first).toContain(project);
  });
});
