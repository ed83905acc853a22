import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * Issue 43: a team whose webhooks are registered is not head-polled; it is reconciled every WEBHOOK_RECONCILE_MS (renders
 * created and never moved found then); a window in which no receiver answered for longer than v1's retries span makes
 * it walked again for exactly that window, a shorter one does not. A real simulator on its manual clock delivers signed
 * events to the gateway over HTTP; two gateway processes' worth of instances share one SQLite file.
 */
const SECRET = 'whsec_trust_0123456789abcdef';
const RECONCILE = 600_000;
const STALE = 5_000;

let sim: RunningSim;
let dir: string;
const open: TestGateway[] = [];

afterEach(async () => {
  sim?.sim.webhooks.stop();
  for (const g of open.splice(0)) await g.close().catch(() => undefined);
  await sim?.sim.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const teams = () => sim.keys[0]!.teams.map((t) => t.id);
const env = () => ({
  INDEX_MAX_STALENESS_MS: String(STALE), WEBHOOK_RECONCILE_MS: String(RECONCILE), DATABASE_URL: join(dir, 'gateway.db'),
  WEBHOOK_SECRETS: JSON.stringify(Object.fromEntries(teams().map((t) => [t, SECRET]))),
});
/** v1 head checks and walks of a project's renders (the list; a render read by id is not one). */
const listCalls = () => sim.sim.stats.get('GET /v1/renders') ?? 0;
const person = () => sim.sim.world.authenticate(`Bearer ${sim.keys[0]!.api_key}`);
const projectOf = (team: string) => [...sim.sim.world.projects.values()].find((p) => p.teamId === team)!;

/** A gateway instance over the shared store, its webhook endpoints registered in v1 (replacing the previous instance's). */
async function instance(first: boolean, hooks = true): Promise<{ g: TestGateway; token: string }> {
  const g = await startGateway(env(), {}, { sim, simClock: true });
  open.push(g);
  if (first) await g.addUser(0, 'ann@example.com');
  const token = await g.login('ann@example.com');
  const base = await g.app.listen({ port: 0, host: '127.0.0.1' });
  for (const team of hooks ? teams() : []) {
    sim.sim.world.teams.get(team)!.webhooks.length = 0;
    sim.sim.webhooks.register(team, `${base}/_gateway/webhooks/v1/${team}`, ['render.status_changed'], SECRET);
  }
  return { g, token };
}

/** Time moves on: v1's renders move (their events delivered), then the gateway's background tick. */
async function step(g: TestGateway, ms: number): Promise<void> {
  sim.sim.clock.advance(ms);
  sim.sim.world.tick();
  await sim.sim.webhooks.idle();
  await g.deps.replica!.tick();
}

/** An instance stops: its endpoints no longer registered (deliveries from then on fail), its deliveries under way ended. */
async function stop(g: TestGateway): Promise<void> {
  for (const team of teams()) sim.sim.world.teams.get(team)!.webhooks.length = 0;
  await sim.sim.webhooks.idle();
  await g.close();
}

const statusOf = async (g: TestGateway, team: string) => (await g.deps.replica!.status()).find((x) => x.team === team)!;
const titled = (g: TestGateway, token: string, title: string) => g.get(`/renders?filter[title][_eq]=${encodeURIComponent(title)}&fields=status`, token);
const legacyStatus = (g: TestGateway, v1Id: string) => g.deps.mappings.status.toLegacy[sim.sim.world.renders.get(v1Id)!.status];

describe('webhook trust (issue 43)', () => {
  it('a team with webhooks registered makes no head check between reconciles; the reconcile finds a render created and never moved', async () => {
    sim = await startSim();
    dir = mkdtempSync(join(tmpdir(), 'trust-'));
    const { g, token } = await instance(true);
    await g.deps.replica!.syncNow(teams());
    const team = teams()[0]!;
    expect(await g.get('/renders?limit=1', token)).toMatchObject({ status: 200 });
    const row = await statusOf(g, team);
    expect(row.webhooks).toBe('trusted');
    expect(row.bound_ms).toBe(RECONCILE + STALE);
    const before = listCalls();
    const moving = sim.sim.world.createRender(person(), { project_id: projectOf(team).id, name: 'moved by v1' });
    const stuck = sim.sim.world.createRender(person(), { project_id: projectOf(team).id, name: '[sim:stuck] never moved' });
    // nine minutes, a read every 30 s: every status change arrives as a delivery, no head is checked
    for (let i = 0; i < 18; i++) {
      await step(g, 30_000);
      const r = await titled(g, token, 'moved by v1');
      expect(r.body.data).toEqual([{ status: legacyStatus(g, moving.id) }]);
    }
    expect(sim.sim.world.renders.get(moving.id)!.status).toBe('complete');
    expect(listCalls()).toBe(before);
    expect((await titled(g, token, '[sim:stuck] never moved')).body.data).toEqual([]); // no event tells of it
    // past WEBHOOK_RECONCILE_MS: the reconcile checks every project's head and finds it
    for (let i = 0; i < 3; i++) await step(g, 30_000);
    expect(listCalls()).toBeGreaterThanOrEqual(before + [...sim.sim.world.projects.values()].filter((p) => p.teamId === team).length);
    const found = await titled(g, token, '[sim:stuck] never moved');
    expect(found.body.data).toEqual([{ status: legacyStatus(g, stuck.id) }]);
    expect(sim.sim.world.renders.get(stuck.id)!.status).toBe('initializing');
    expect((await statusOf(g, team)).webhooks).toBe('trusted');
  });

  it('a window no receiver answered in, longer than v1\'s retries span, is walked again (exactly that window); a shorter one is not', async () => {
    sim = await startSim({ webhooks: { sleep: async () => undefined } }); // v1's attempts at once: a receiver down loses what it misses
    dir = mkdtempSync(join(tmpdir(), 'trust-'));
    const a = await instance(true);
    await a.g.deps.replica!.syncNow(teams());
    const team = teams()[0]!;
    await a.g.get('/renders?limit=1', a.token);
    const r = sim.sim.world.createRender(person(), { project_id: projectOf(team).id, name: 'moved while nobody listened' });
    await step(a.g, 1_000);
    expect((await titled(a.g, a.token, 'moved while nobody listened')).body.data).toHaveLength(1);
    await stop(a.g);
    open.splice(open.indexOf(a.g), 1);
    const downAt = sim.sim.clock.now();

    // a short outage (10 s): nothing can have been lost — no catch-up, no head check, the team still trusted
    sim.sim.clock.advance(10_000);
    const b = await instance(false);
    expect((await statusOf(b.g, team)).webhooks).toBe('trusted');
    const calls = listCalls();
    expect((await titled(b.g, b.token, 'moved while nobody listened')).body.data).toHaveLength(1);
    await b.g.deps.replica!.tick();
    expect(listCalls()).toBe(calls);
    expect(b.g.logs.join('')).not.toMatch(/caught up/);
    await stop(b.g);
    open.splice(open.indexOf(b.g), 1);
    const downAgain = sim.sim.clock.now();

    // a long one (40 s), a render made and moved meanwhile (its events lost): the next instance walks the window again
    sim.sim.clock.advance(1_000);
    const lost = sim.sim.world.createRender(person(), { project_id: projectOf(team).id, name: 'made while nobody listened' });
    for (let i = 0; i < 39; i++) { sim.sim.clock.advance(1_000); sim.sim.world.tick(); }
    expect(sim.sim.world.renders.get(lost.id)!.status).toBe('complete');
    const c = await instance(false);
    const upAt = sim.sim.clock.now();
    expect((await statusOf(c.g, team)).webhooks).toBe('catch-up');
    // read until answered from the replica (its teams are read back from the store first): the stale team synced before
    let after = await titled(c.g, c.token, 'moved while nobody listened');
    for (let i = 0; i < 100 && after.headers['x-gateway-source'] !== 'index'; i++) {
      await new Promise((res) => setTimeout(res, 20));
      after = await titled(c.g, c.token, 'moved while nobody listened');
    }
    expect(after.headers['x-gateway-source']).toBe('index');
    expect(after.body.data).toEqual([{ status: legacyStatus(c.g, r.id) }]);
    const caught = c.g.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'webhooks: team caught up' && l.team === team);
    expect(caught).toEqual([expect.objectContaining({ from: new Date(downAgain).toISOString(), to: new Date(upAt).toISOString() })]);
    expect(downAgain).toBeGreaterThan(downAt);
    expect((await statusOf(c.g, team)).webhooks).toBe('trusted');
  });
});

describe('webhook trust: a delivery v1 signed but the gateway refused (issue 43)', () => {
  it('is a lost delivery: the team is polled and caught up, whatever the refusal (signature, time)', async () => {
    sim = await startSim();
    dir = mkdtempSync(join(tmpdir(), 'trust-'));
    const { g } = await instance(true, false); // no delivery from v1 here: the one refused is the test's
    await g.deps.replica!.syncNow(teams());
    const team = teams()[0]!;
    expect((await statusOf(g, team)).webhooks).toBe('trusted');
    const render = sim.sim.world.renderView([...sim.sim.world.renders.values()].find((r) => r.teamId === team)!);
    // signed with the team's secret (so v1's), its timestamp outside WEBHOOK_TOLERANCE_MS: refused, and v1 does not retry it
    const raw = JSON.stringify({ id: 'hook_stale_1', event: 'render.status_changed', data: render, timestamp: sim.sim.clock.now() - 3_600_000 });
    const res = await g.app.inject({ method: 'POST', url: `/_gateway/webhooks/v1/${team}`, payload: raw,
      headers: { 'content-type': 'application/json', 'x-webhook-signature': `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}` } });
    expect(res.statusCode).toBe(400);
    await new Promise((r) => setImmediate(r));
    expect((await statusOf(g, team)).webhooks).toBe('catch-up');
    // once no refusal came for the retry span, the next sync walks the team again and trusts it
    sim.sim.clock.advance(15_000);
    await g.get('/renders?limit=1', await g.login('ann@example.com'));
    await g.deps.replica!.tick();
    expect((await statusOf(g, team)).webhooks).toBe('trusted');
    expect(g.logs.some((l) => l.includes('webhooks: team caught up') && l.includes(team))).toBe(true);
  });
});
