import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { derivedUuid } from '../../src/translate/ids.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * The render index over a real simulator on its manual clock: backfill, reads with no v1 call, freshness without
 * webhooks (a render made directly in v1, a status change, a new project), the gateway's own writes, a restart.
 */
let sim: RunningSim;
let gw: TestGateway;
let token: string;
const STALE = 5_000;

const v1Calls = (r: { headers: Record<string, unknown> }) => Number(r.headers['x-gateway-v1-calls']);
const source = (r: { headers: Record<string, unknown> }) => r.headers['x-gateway-source'];
const person = () => sim.sim.world.authenticate(`Bearer ${sim.keys[0]!.api_key}`);
const teamA = () => sim.keys[0]!.teams[0]!.id;

/** Reads until the team's backfill is done (the first read starts it). */
async function backfilled(t: TestGateway, tok: string): Promise<void> {
  await t.get('/renders?limit=1', tok);
  for (let i = 0; i < 200; i++) {
    const s = (await t.deps.replica!.status()).filter((x) => sim.keys[0]!.teams.some((k) => k.id === x.team));
    if (s.length === sim.keys[0]!.teams.length && s.every((x) => x.state === 'ready')) return;
    await new Promise((r) => setTimeout(r, 10));
    await t.get('/renders?limit=1', tok);
  }
  throw new Error('backfill did not finish');
}

beforeAll(async () => {
  sim = await startSim();
  gw = await startGateway({ INDEX_MAX_STALENESS_MS: String(STALE) }, {}, { sim, simClock: true });
  await gw.addUser(0, 'ann@example.com');
  token = await gw.login('ann@example.com');
});
afterAll(async () => { await gw.close(); await sim.sim.close(); });

describe('render index', () => {
  it('answers live until the backfill is done, then from the index with no v1 call', async () => {
    const first = await gw.get('/renders?limit=5&meta=total_count', token, { 'x-gateway-explain': '1', 'x-gateway-operator-token': 'operator-token-0123456789' });
    expect(source(first)).toBe('live');
    expect(first.body.explain.reason).toMatch(/not backfilled/);
    await backfilled(gw, token);
    for (const url of [
      '/renders?limit=5&meta=total_count',
      '/renders?aggregate[count]=*&groupBy[]=status',
      '/renders?sort=title&limit=20&offset=10',
      '/renders?fields=id,title,project.title,project.account.name&limit=3',
      '/projects?fields=id,renders&limit=-1',
      '/templates?limit=-1',
      '/accounts?fields=id,name,owner',
    ]) {
      const r = await gw.get(url, token);
      expect(r.status, url).toBe(200);
      expect(source(r), url).toBe('index');
      expect(v1Calls(r), url).toBe(0);
    }
    // explain tells where the answer came from, and what was done there
    const explained = await gw.get('/renders?limit=2&filter[status][_eq]=complete', token, { 'x-gateway-explain': '1', 'x-gateway-operator-token': 'operator-token-0123456789' });
    expect(explained.body.explain).toMatchObject({
      source: 'index', plan: { source: 'replica', strategy: 'merge', execution: { strategy: 'newest-first walk', matched: 2 }, v1_calls_planned: [{ call: 'GET /v1/renders/{id}' }] }, v1_calls: 0,
    });
    // the walk stopped once two matches were found: it tested fewer records than the team holds
    expect(explained.body.explain.plan.execution.tested).toBeGreaterThanOrEqual(2);
    expect(explained.body.explain.plan.execution.tested).toBeLessThan(sim.sim.world.renders.size);
    expect(explained.body.explain.index_age_ms).toBeGreaterThanOrEqual(0);
    const counted = await gw.get('/renders?aggregate[count]=*&groupBy=status&filter[project][account][name][_nnull]=true', token,
      { 'x-gateway-explain': '1', 'x-gateway-operator-token': 'operator-token-0123456789' });
    expect(counted.body.explain.plan).toMatchObject({
      strategy: 'scan', execution: { strategy: 'aggregate over the scope' },
      relations: ['project', 'project.account'], relations_resolved: 'from the replica, synchronously (no v1 call)',
    });
    expect(counted.body.explain.plan.execution.tested).toBe(counted.body.explain.plan.execution.matched);
    // the answered renders' uuid ↔ v1 pairs reach the id store (any instance resolves them), each written once
    const page = await gw.get('/renders?sort=title&limit=3&offset=40&fields=id', token);
    expect(source(page)).toBe('index');
    for (const r of page.body.data) expect(await gw.deps.idMap.v1IdFor('render', r.id)).toMatch(/^rend_/);
    const remember = vi.spyOn(gw.deps.idMap, 'remember');
    await gw.get('/renders?sort=title&limit=3&offset=40&fields=id', token);
    expect(remember).not.toHaveBeenCalled(); // already given: nothing written again
    await gw.get('/renders?sort=title&limit=3&offset=43&fields=id', token);
    expect(remember.mock.calls.flat(2)).toHaveLength(3);
    remember.mockRestore();
    const total = (await gw.get('/renders?limit=1&meta=total_count', token)).body.meta.total_count;
    const reachable = [...sim.sim.world.renders.values()].filter((r) => sim.keys[0]!.teams.some((t) => t.id === r.teamId)).length;
    expect(total).toBe(reachable);
  });

  it('a render made directly in v1 shows within INDEX_MAX_STALENESS_MS, without webhooks', async () => {
    const project = [...sim.sim.world.projects.values()].find((p) => p.teamId === teamA())!;
    const made = sim.sim.world.createRender(person(), { project_id: project.id, name: 'made in v1' });
    const uuid = derivedUuid('render', made.id);
    const before = await gw.get('/renders?filter[title][_eq]=made in v1', token);
    expect(before.body.data).toHaveLength(0); // still within the bound: the index has not looked
    expect(v1Calls(before)).toBe(0);
    sim.sim.clock.advance(STALE + 1);
    const after = await gw.get('/renders?filter[title][_eq]=made in v1&fields=id,status', token);
    const v1Status = sim.sim.world.renderView(sim.sim.world.renders.get(made.id)!).status;
    expect(after.body.data).toEqual([{ id: uuid, status: gw.deps.mappings.status.toLegacy[v1Status] }]);
    // and the next read within the bound costs nothing again
    expect(v1Calls(await gw.get('/renders?filter[title][_eq]=made in v1', token))).toBe(0);
  });

  it('a status change of an older render, and a new project with its template, show within the bound', async () => {
    // a render the index holds while it is still moving (the gateway's own create puts it there at once)
    const project = [...sim.sim.world.projects.values()].find((p) => p.teamId === teamA())!;
    const created = await gw.app.inject({
      method: 'POST', url: '/renders', headers: { authorization: `Bearer ${token}` },
      payload: { project: derivedUuid('project', project.id), account: derivedUuid('account', teamA()), data: {}, title: 'moves later' },
    });
    const uuid = created.json().data.id as string;
    const old = [...sim.sim.world.renders.values()].find((r) => r.name === 'moves later')!;
    const before = (await gw.get(`/renders/${uuid}?fields=status`, token)).body.data.status;
    expect(before).toBe('draft');
    sim.sim.clock.advance(3_600_000);
    sim.sim.world.tick();
    token = await gw.login('ann@example.com'); // (the hour took the access token's life)
    const p = sim.sim.world.addProject(teamA(), 'Dashboard project');
    const after = await gw.get(`/renders/${uuid}?fields=status`, token);
    expect(source(after)).toBe('index');
    expect(after.body.data.status).not.toBe(before);
    expect(after.body.data.status).toBe(gw.deps.mappings.status.toLegacy[old.status]);
    expect(['complete', 'failed']).toContain(old.status);
    const projects = await gw.get(`/projects?filter[title][_eq]=Dashboard project&fields=id`, token);
    expect(projects.body.data).toEqual([{ id: derivedUuid('project', p.id) }]);
    const templates = await gw.get(`/templates?filter[title][_eq]=Dashboard project template&fields=title`, token);
    expect(templates.body.data).toEqual([{ title: 'Dashboard project template' }]);
  });

  it("the gateway's own create is in the index before its answer", async () => {
    const project = [...sim.sim.world.projects.values()].find((p) => p.teamId === teamA())!;
    const created = await gw.app.inject({
      method: 'POST', url: '/renders', headers: { authorization: `Bearer ${token}` },
      payload: { project: derivedUuid('project', project.id), account: derivedUuid('account', teamA()), data: { a: 1 }, title: 'own write' },
    });
    expect(created.statusCode).toBe(200);
    const list = await gw.get('/renders?filter[title][_eq]=own write&fields=id,data', token);
    expect(source(list)).toBe('index');
    expect(v1Calls(list)).toBe(0);
    expect(list.body.data).toEqual([{ id: created.json().data.id, data: { a: 1 } }]);
  });

  it('a restart reads the index from the store: no backfill, answers from the index at once', async () => {
    const again = await startGateway({ DATABASE_URL: gw.config.DATABASE_URL, INDEX_MAX_STALENESS_MS: String(STALE) }, {}, { sim, simClock: true });
    try {
      const t = await again.login('ann@example.com');
      const stats0 = (await (await fetch(`${sim.url}/_sim/stats`)).json() as any).requests['GET /v1/renders'] ?? 0;
      const r = await again.get('/renders?limit=1&meta=total_count', t);
      expect(source(r)).toBe('index');
      const stats1 = (await (await fetch(`${sim.url}/_sim/stats`)).json() as any).requests['GET /v1/renders'] ?? 0;
      expect(stats1).toBe(stats0);
      expect(r.body.meta.total_count).toBe((await gw.get('/renders?limit=1&meta=total_count', token)).body.meta.total_count);
    } finally {
      await again.app.close();
      await again.deps.close();
    }
  });
});

describe('render index with webhooks', () => {
  it('a render made directly in v1 reaches the index through its webhooks, before any sync; the team is trusted, its bound WEBHOOK_RECONCILE_MS', async () => {
    const s = await startSim();
    const team = s.keys[0]!.teams[0]!.id;
    const secret = 'whsec_index_hooks_0123456789';
    const g = await startGateway({ INDEX_MAX_STALENESS_MS: String(STALE), INDEX_RECONCILE_MS: '60000', WEBHOOK_SECRETS: JSON.stringify({ [team]: secret }) }, {}, { sim: s, simClock: true });
    try {
      await g.addUser(0, 'ann@example.com');
      const t = await g.login('ann@example.com');
      await g.deps.replica!.syncNow(s.keys[0]!.teams.map((x) => x.id));
      const base = await g.app.listen({ port: 0, host: '127.0.0.1' });
      await fetch(`${s.url}/_sim/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ team_id: team, url: `${base}/_gateway/webhooks/v1/${team}`, secret }) });
      await g.get('/renders?limit=1', t); // the key's reach is known
      const project = [...s.sim.world.projects.values()].find((p) => p.teamId === team)!;
      const made = s.sim.world.createRender(s.sim.world.authenticate(`Bearer ${s.keys[0]!.api_key}`), { project_id: project.id, name: 'told by a webhook' });
      const syncsBefore = s.sim.stats.get('GET /v1/projects') ?? 0;
      s.sim.clock.advance(1_000); // within the bound: no sync is due
      s.sim.world.tick();
      await s.sim.webhooks.idle();
      const r = await g.get('/renders?filter[title][_eq]=told by a webhook&fields=id,status', t);
      expect(r.body.data).toEqual([{ id: derivedUuid('render', made.id), status: g.deps.mappings.status.toLegacy[s.sim.world.renders.get(made.id)!.status] }]);
      expect(r.headers['x-gateway-v1-calls']).toBe('0');
      expect(s.sim.stats.get('GET /v1/projects') ?? 0).toBe(syncsBefore); // no sync found it: the webhook did
      const row = (await g.deps.replica!.status()).find((x) => x.team === team)!;
      expect(row.last_webhook).not.toBeNull();
      expect(row.webhooks).toBe('trusted');
      expect(row.bound_ms).toBe(1_200_000 + STALE); // a reconcile every WEBHOOK_RECONCILE_MS (20 min) and the time of one sync
    } finally {
      await g.close();
      await s.sim.close();
    }
  });
});
