import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { derivedUuid } from '../../src/translate/ids.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * The render index as operators and attackers meet it: the sync budget, coalesced syncs, signed outputs near expiry,
 * the reach recheck (KEY_RECHECK_MS), isolation between keys, a backfill that resumes after a crash, eviction from
 * memory, overlays, the background sync, and what /_gateway/index and /metrics show.
 */
const op = { 'x-gateway-operator-token': TEST_ENV.GATEWAY_ADMIN_TOKEN };
const explainHeaders = { 'x-gateway-explain': '1', ...op };
const calls = (sim: RunningSim, key: string) => sim.sim.stats.get(key) ?? 0;

async function gateway(sim: RunningSim, env: Record<string, string> = {}): Promise<{ gw: TestGateway; token: string }> {
  const gw = await startGateway({ INDEX_MAX_STALENESS_MS: '5000', ...env }, {}, { sim, simClock: true });
  await gw.addUser(0, 'ann@example.com');
  await gw.deps.replica!.syncNow(sim.keys[0]!.teams.map((t) => t.id));
  return { gw, token: await gw.login('ann@example.com') };
}

describe('sync budget and coalescing', () => {
  let sim: RunningSim;
  beforeAll(async () => { sim = await startSim(); });
  afterAll(async () => sim.sim.close());

  it('N concurrent readers of a stale team cause one sync', async () => {
    const { gw, token } = await gateway(sim);
    try {
      sim.sim.clock.advance(5_001);
      const before = calls(sim, 'GET /v1/projects');
      const answers = await Promise.all(Array.from({ length: 8 }, () => gw.get('/renders?limit=1', token)));
      for (const a of answers) expect(a.headers['x-gateway-source']).toBe('index');
      // one project list per team in reach (each team synced once), not one per reader
      expect(calls(sim, 'GET /v1/projects') - before).toBe(sim.keys[0]!.teams.length);
    } finally { await gw.close(); }
  });

  it('past INDEX_SYNC_CALLS_PER_MIN a stale team is answered as it is, and explain shows its real age', async () => {
    const { gw, token } = await gateway(sim, { INDEX_SYNC_CALLS_PER_MIN: '1' });
    try {
      await gw.get('/renders?limit=1', token); // the key's reach is known (KEY_RECHECK_MS)
      sim.sim.clock.advance(20_000);
      const before = calls(sim, 'GET /v1/projects');
      const r = await gw.get('/renders?limit=1', token, explainHeaders);
      expect(r.headers['x-gateway-source']).toBe('index');
      expect(calls(sim, 'GET /v1/projects')).toBe(before); // no sync: the budget is spent
      expect(r.body.explain.index_age_ms).toBeGreaterThanOrEqual(20_000);
      expect(r.headers['x-gateway-v1-calls']).toBe('0');
    } finally { await gw.close(); }
  });

  it('the background sync keeps a team that is being read fresh, without a read waiting for it', async () => {
    const { gw, token } = await gateway(sim);
    try {
      await gw.get('/renders?limit=1', token); // the team is being read
      const project = [...sim.sim.world.projects.values()].find((p) => p.teamId === sim.keys[0]!.teams[0]!.id)!;
      const made = sim.sim.world.createRender(sim.sim.world.authenticate(`Bearer ${sim.keys[0]!.api_key}`), { project_id: project.id, name: 'found by the tick' });
      sim.sim.clock.advance(2_600); // past half the bound
      await gw.deps.replica!.tick();
      expect(gw.deps.replica!.team(sim.keys[0]!.teams[0]!.id)!.has(made.id)).toBe(true);
      const r = await gw.get('/renders?filter[title][_eq]=found by the tick&fields=id', token);
      expect(r.body.data).toEqual([{ id: derivedUuid('render', made.id) }]);
      expect(r.headers['x-gateway-v1-calls']).toBe('0');
    } finally { await gw.close(); }
  });
});

describe('head sync', () => {
  it('finds every render v1 made since the last sync, even below a render the gateway itself created since (a page and more)', async () => {
    const sim = await startSim();
    const started = await gateway(sim, { INDEX_MAX_STALENESS_MS: '600000', INDEX_RECONCILE_MS: '600000' });
    const gw = started.gw;
    let token = started.token;
    try {
      await gw.get('/projects?limit=-1&fields=id', token); // (a client learns the project uuids by reading them)
      const team = sim.keys[0]!.teams[0]!.id;
      const project = [...sim.sim.world.projects.values()].find((p) => p.teamId === team)!;
      const person = sim.sim.world.authenticate(`Bearer ${sim.keys[0]!.api_key}`);
      // 25 renders straight into v1 (more than the first head page of 20), then one through the gateway, newest of all
      const made: string[] = [];
      // (a second apart: v1 stamps whole seconds here, and renders sharing one would all be walked anyway)
      for (let i = 0; i < 25; i++) {
        sim.sim.clock.advance(1_000);
        made.push(sim.sim.world.createRender(person, { project_id: project.id, name: `behind ${i}` }).id);
      }
      sim.sim.clock.advance(1_000);
      token = await gw.login('ann@example.com');
      const own = await gw.app.inject({ method: 'POST', url: '/renders', headers: { authorization: `Bearer ${token}` },
        payload: { project: derivedUuid('project', project.id), account: derivedUuid('account', team), data: {}, title: 'own, newest' } });
      expect(own.statusCode).toBe(200);
      sim.sim.clock.advance(600_001);
      token = await gw.login('ann@example.com');
      const list = await gw.get(`/renders?filter[project][_eq]=${derivedUuid('project', project.id)}&limit=-1&fields=id`, token);
      const ids = new Set((list.body.data as { id: string }[]).map((r) => r.id));
      for (const id of made) expect(ids.has(derivedUuid('render', id)), id).toBe(true);
    } finally {
      await gw.close();
      await sim.sim.close();
    }
  });

  it('a create whose index update fails is still answered (v1 made it; the next sync finds it)', async () => {
    const sim = await startSim();
    const { gw, token } = await gateway(sim);
    try {
      await gw.get('/projects?limit=-1&fields=id', token);
      const team = sim.keys[0]!.teams[0]!.id;
      const project = [...sim.sim.world.projects.values()].find((p) => p.teamId === team)!;
      const spy = vi.spyOn(gw.deps.replica!, 'applyRender').mockRejectedValueOnce(new Error('store down'));
      const res = await gw.app.inject({ method: 'POST', url: '/renders', headers: { authorization: `Bearer ${token}` },
        payload: { project: derivedUuid('project', project.id), account: derivedUuid('account', team), data: {}, title: 'kept anyway' } });
      expect(res.statusCode).toBe(200);
      expect(spy).toHaveBeenCalledTimes(1);
      spy.mockRestore();
      sim.sim.clock.advance(5_001);
      expect((await gw.get('/renders?filter[title][_eq]=kept anyway&fields=id', token)).body.data).toEqual([{ id: res.json().data.id }]);
    } finally {
      await gw.close();
      await sim.sim.close();
    }
  });
});

describe('signed outputs', () => {
  it('answered outputs near expiry are refreshed (and kept); aggregates need no fresh URLs', async () => {
    const sim = await startSim({ urlTtlS: 600 });
    const { gw, token } = await gateway(sim, { INDEX_MAX_STALENESS_MS: '3600000', INDEX_RECONCILE_MS: '3600000', KEY_RECHECK_MS: '3600000' });
    try {
      await gw.get('/renders?limit=1', token); // the key's reach is known
      const expiresOf = (url: string) => Number(new URL(url).searchParams.get('expires')) * 1000;
      const first = await gw.get('/renders?filter[status][_eq]=complete&limit=3&fields=id,output&sort=id', token);
      expect(first.headers['x-gateway-v1-calls']).toBe('0');
      const oldExpiry = expiresOf(first.body.data[0].output.master);
      sim.sim.clock.advance(540_000); // 9 of 10 minutes: inside the last fifth of the URLs' life
      const agg = await gw.get('/renders?aggregate[count]=*', token);
      expect(agg.headers['x-gateway-v1-calls']).toBe('0');
      const again = await gw.get('/renders?filter[status][_eq]=complete&limit=3&fields=id,output&sort=id', token);
      expect(Number(again.headers['x-gateway-v1-calls'])).toBeGreaterThan(0);
      for (const r of again.body.data) expect(expiresOf(r.output.master)).toBeGreaterThan(sim.sim.world.clock.now() + 500_000);
      expect(expiresOf(again.body.data[0].output.master)).toBeGreaterThan(oldExpiry);
      // written back: the next answer needs no call
      const third = await gw.get('/renders?filter[status][_eq]=complete&limit=3&fields=id,output&sort=id', token);
      expect(third.headers['x-gateway-v1-calls']).toBe('0');
      expect(third.body.data).toEqual(again.body.data);
      // template posters (their projects' signed thumbnails) too
      const templates = (await gw.get('/templates?limit=-1&fields=id,poster', token)).body.data.filter((p: { poster: string | null }) => p.poster);
      expect(templates.length).toBeGreaterThan(0);
      for (const p of templates) expect(expiresOf(p.poster)).toBeGreaterThan(sim.sim.world.clock.now() + 500_000);
      // project posters (signed thumbnails) too
      const posters = (await gw.get('/projects?limit=-1&fields=id,poster', token)).body.data.filter((p: { poster: string | null }) => p.poster);
      expect(posters.length).toBeGreaterThan(0);
      for (const p of posters) expect(expiresOf(p.poster)).toBeGreaterThan(sim.sim.world.clock.now() + 500_000);
      // a refresh through a project's list pages keeps every render those pages show fresh: the project's next renders
      // (a streamed limit=-1's next chunk) need no call of their own
      const counts = new Map<string, number>();
      for (const r of sim.sim.world.renders.values()) {
        if (r.status === 'complete' && sim.keys[0]!.teams.some((t) => t.id === r.teamId)) counts.set(r.projectId, (counts.get(r.projectId) ?? 0) + 1);
      }
      const [busiest, n] = [...counts].sort((a, b) => b[1] - a[1])[0]!;
      expect(n).toBeGreaterThanOrEqual(4);
      sim.sim.clock.advance(540_000);
      const fresh = await gw.login('ann@example.com'); // (the first token has expired meanwhile)
      const list = `/renders?filter[project][_eq]=${derivedUuid('project', busiest)}&filter[status][_eq]=complete&fields=id,output&limit=2`;
      const head = await gw.get(list, fresh);
      expect(head.status, JSON.stringify(head.body)).toBe(200);
      // one list page (not a call per render), and the project's signed thumbnail (an output without a still shows it)
      expect(Number(head.headers['x-gateway-v1-calls'])).toBeGreaterThan(0);
      expect(Number(head.headers['x-gateway-v1-calls'])).toBeLessThanOrEqual(2);
      const next = await gw.get(`${list}&offset=2`, fresh);
      expect(next.headers['x-gateway-v1-calls']).toBe('0');
      expect(next.body.data).toHaveLength(2);
      for (const r of [...head.body.data, ...next.body.data]) expect(expiresOf(r.output.master)).toBeGreaterThan(sim.sim.world.clock.now() + 500_000);
    } finally {
      await gw.close();
      await sim.sim.close();
    }
  });
});

/**
 * A simulator whose URLs last 10 minutes, with `n` more renders in a project of the first key's first team, created
 * `perSecond` a second, then an hour later: every one complete, with outputs.
 */
async function withRenders(n: number, perSecond: number) {
  const sim = await startSim({ urlTtlS: 600 });
  const person = sim.sim.world.authenticate(`Bearer ${sim.keys[0]!.api_key}`);
  const project = [...sim.sim.world.projects.values()].find((p) => p.teamId === sim.keys[0]!.teams[0]!.id)!;
  for (let i = 0; i < n; i++) {
    sim.sim.world.createRender(person, { project_id: project.id, name: `export ${i}` });
    if (i % perSecond === perSecond - 1) sim.sim.clock.advance(1_000);
  }
  sim.sim.clock.advance(3_600_000);
  sim.sim.world.tick();
  return { sim, person, project };
}

/** The pages of one walk of a project's renders, as v1 pages them (60 a page asked; its pages are sometimes short). */
function pagesOf(sim: RunningSim, person: Parameters<RunningSim['sim']['world']['listRenders']>[0], projectId: string): number {
  let pages = 0;
  for (let cursor: string | undefined, more = true; more; pages++) {
    const page = sim.sim.world.listRenders(person, projectId, { limit: 60, ...(cursor ? { cursor } : {}) });
    cursor = page.next_cursor ?? undefined;
    more = cursor !== undefined;
  }
  return pages;
}

describe('an export whose every signed URL is due', () => {
  it('reads each project\'s render pages once, going on across its chunks from where the last one stopped — never per render', async () => {
    const { sim, person, project } = await withRenders(700, 1); // one a second
    const { gw, token } = await gateway(sim, { INDEX_MAX_STALENESS_MS: '36000000', INDEX_RECONCILE_MS: '36000000', KEY_RECHECK_MS: '36000000' });
    try {
      await gw.get('/renders?limit=1', token); // the key's reach is known
      const expiresOf = (url: string) => Number(new URL(url).searchParams.get('expires')) * 1000;
      sim.sim.clock.advance(540_000); // every URL in the last fifth of its life
      const renders = [...sim.sim.world.renders.values()].filter((r) => r.projectId === project.id).length;
      const listBefore = calls(sim, 'GET /v1/renders');
      const byIdBefore = calls(sim, 'GET /v1/renders/:id');
      const all = await gw.get(`/renders?filter[project][_eq]=${derivedUuid('project', project.id)}&limit=-1&fields=id,output`, token);
      expect(all.status).toBe(200);
      expect(all.body.data).toHaveLength(renders);
      const withOutputs = all.body.data.filter((r: { output: unknown }) => r.output);
      expect(withOutputs.length).toBeGreaterThan(600);
      for (const r of withOutputs) expect(expiresOf(r.output.master)).toBeGreaterThan(sim.sim.world.clock.now() + 500_000);
      // one walk of the project's pages (60 renders a page): the answer's chunks (512 renders, then the rest) do not each
      // start again from the head, and no render is read by id
      // one walk of the project, as v1 pages it (its pages are sometimes short)
      const walk = pagesOf(sim, person, project.id);
      const pages = calls(sim, 'GET /v1/renders') - listBefore;
      expect(pages).toBeGreaterThanOrEqual(Math.ceil(renders / 60));
      expect(pages).toBeLessThanOrEqual(walk + 1);
      expect(calls(sim, 'GET /v1/renders/:id') - byIdBefore).toBe(0);
    } finally {
      await gw.close();
      await sim.sim.close();
    }
  });
});

describe('an export of a whole reach whose every signed URL is due', () => {
  it('walks each project\'s pages at most once, reads no render by id, and the posters through the project lists', async () => {
    // renders created seven a second: v1 and the replica order those of the same second differently (at page ends too)
    const { sim, person } = await withRenders(420, 7);
    const { gw, token } = await gateway(sim, { INDEX_MAX_STALENESS_MS: '36000000', INDEX_RECONCILE_MS: '36000000', KEY_RECHECK_MS: '36000000' });
    try {
      await gw.get('/renders?limit=1', token); // the key's reach is known
      await gw.deps.replica!.syncNow(sim.keys[0]!.teams.map((t) => t.id));
      sim.sim.clock.advance(540_000); // every URL (outputs and project thumbnails) in the last fifth of its life
      const teams = new Set(sim.keys[0]!.teams.map((t) => t.id));
      const projects = [...sim.sim.world.projects.values()].filter((p) => teams.has(p.teamId));
      // one walk of every project, as v1 pages it
      const walk = projects.reduce((n, p) => n + pagesOf(sim, person, p.id), 0);
      const before = { list: calls(sim, 'GET /v1/renders'), byId: calls(sim, 'GET /v1/renders/:id'), project: calls(sim, 'GET /v1/projects/:id'),
        projects: calls(sim, 'GET /v1/projects') };
      const all = await gw.get('/renders?limit=-1&fields=id,output,project.poster', token);
      expect(all.status).toBe(200);
      const expiresOf = (url: string) => Number(new URL(url).searchParams.get('expires')) * 1000;
      const outputs = all.body.data.filter((r: { output: { master?: string } | null }) => r.output?.master);
      expect(outputs.length).toBeGreaterThan(10);
      for (const r of outputs) expect(expiresOf(r.output.master)).toBeGreaterThan(sim.sim.world.clock.now() + 500_000);
      expect(calls(sim, 'GET /v1/renders/:id') - before.byId).toBe(0);
      expect(calls(sim, 'GET /v1/renders') - before.list).toBeLessThanOrEqual(walk);
      // posters: each team's project list read once (its projects fit a page), no project read alone
      expect(calls(sim, 'GET /v1/projects/:id') - before.project).toBe(0);
      expect(calls(sim, 'GET /v1/projects') - before.projects).toBeLessThanOrEqual(teams.size);
      const posters = all.body.data.map((r: { project: { poster: string | null } }) => r.project.poster).filter(Boolean) as string[];
      expect(posters.length).toBeGreaterThan(0);
      for (const url of posters) expect(expiresOf(url)).toBeGreaterThan(sim.sim.world.clock.now() + 500_000);
    } finally {
      await gw.close();
      await sim.sim.close();
    }
  });
});

describe('reach and isolation', () => {
  let sim: RunningSim;
  beforeAll(async () => { sim = await startSim(); });
  afterAll(async () => sim.sim.close());

  it('a key answers only within its teams, from the index too', async () => {
    const { gw, token } = await gateway(sim);
    try {
      await gw.addUser(3, 'other@example.com');
      const other = await gw.login('other@example.com');
      await gw.deps.replica!.syncNow(sim.keys[3]!.teams.map((t) => t.id));
      const mine = new Set(sim.keys[0]!.teams.map((t) => derivedUuid('account', t.id)));
      const theirs = new Set(sim.keys[3]!.teams.map((t) => derivedUuid('account', t.id)));
      const a = await gw.get('/renders?limit=-1&fields=id,account', token);
      const b = await gw.get('/renders?limit=-1&fields=id,account', other);
      expect(a.headers['x-gateway-source']).toBe('index');
      expect(b.headers['x-gateway-source']).toBe('index');
      for (const r of a.body.data) expect(mine.has(r.account)).toBe(true);
      for (const r of b.body.data) expect(theirs.has(r.account)).toBe(true);
      // one of A's renders, outside B's reach, by id and through relations: 403 / nothing
      const onlyMine = a.body.data.find((r: { account: string }) => !theirs.has(r.account));
      expect(onlyMine).toBeDefined();
      expect((await gw.get(`/renders/${onlyMine.id}`, other)).status).toBe(403);
      expect((await gw.get(`/renders?filter[id][_eq]=${onlyMine.id}`, other)).body.data).toEqual([]);
      expect((await gw.get(`/projects?fields=id,renders&limit=-1`, other)).body.data.flatMap((p: { renders: string[] }) => p.renders)).not.toContain(onlyMine.id);
      const counted = await gw.get('/renders?aggregate[count]=*', other);
      expect(Number(counted.body.data[0].count)).toBe(b.body.data.length);
    } finally { await gw.close(); }
  });

  it('a revoked key keeps reading until KEY_RECHECK_MS passes; 0 checks every request', async () => {
    for (const recheck of ['60000', '0']) {
      const s = await startSim();
      const { gw, token } = await gateway(s, { KEY_RECHECK_MS: recheck, INDEX_MAX_STALENESS_MS: '3600000', INDEX_RECONCILE_MS: '3600000' });
      try {
        expect((await gw.get('/renders?limit=1', token)).status).toBe(200);
        s.sim.world.revokeKey(s.keys[0]!.api_key);
        const soon = await gw.get('/renders?limit=1', token);
        if (recheck === '0') expect(soon.status).toBe(401);
        else {
          expect(soon.status).toBe(200); // the deliberate window: documented
          s.sim.clock.advance(60_001);
          const t2 = await gw.login('ann@example.com');
          expect((await gw.get('/renders?limit=1', t2)).status).toBe(401);
        }
      } finally {
        await gw.close();
        await s.sim.close();
      }
    }
  });
});

describe('backfill', () => {
  it('head marks survive a restart: a render that arrived by webhook does not move where the next head sync may stop', async () => {
    const sim = await startSim({ scale: 'small' });
    const gw = await startGateway({}, {}, { sim, simClock: true });
    const team = sim.keys[0]!.teams[0]!.id;
    let mark: number | null = null;
    let projectId = '';
    try {
      await gw.addUser(0, 'ann@example.com');
      await gw.deps.replica!.syncNow([team]);
      const t = gw.deps.replica!.team(team)!;
      projectId = [...t.projects.keys()].find((p) => t.head(p) !== null)!;
      mark = t.headMark(projectId);
      expect(mark).not.toBeNull();
      const row = await gw.deps.db.kysely.selectFrom('index_projects').select('head_mark').where('project_id', '=', projectId).executeTakeFirst();
      expect(Number(row?.head_mark)).toBe(mark);
      // a sync of the quiet team walks the heads again but writes no mark that did not move
      const writes = vi.spyOn(gw.deps.replica!.store, 'setHeadMark');
      const walks = calls(sim, 'GET /v1/renders');
      await gw.deps.replica!.syncNow([team]);
      expect(calls(sim, 'GET /v1/renders')).toBeGreaterThan(walks);
      expect(writes).not.toHaveBeenCalled();
      writes.mockRestore();
      // a render newer than the mark arrives by webhook (as the gateway's own create would): the head moves, the mark not
      const known = t.render(t.projectRenderIds(projectId)[0]!)!.render;
      await gw.deps.replica!.applyRender({ ...known, id: 'rend_arrived_by_webhook', created_at: (mark as number) + 100, updated_at: null, status: 'queued' });
      expect(t.head(projectId)).toBe((mark as number) + 100);
      expect(t.headMark(projectId)).toBe(mark);
    } finally {
      await gw.app.close();
      await gw.deps.close();
    }
    const again = await startGateway({ DATABASE_URL: gw.config.DATABASE_URL }, {}, { sim, simClock: true });
    try {
      const t = (await again.deps.replica!.load(team))!;
      expect(t.head(projectId)).toBe((mark as number) + 100);
      expect(t.headMark(projectId)).toBe(mark); // (without the stored mark it would be the head)
    } finally {
      await again.app.close();
      await again.deps.close();
      await sim.sim.close();
    }
  });

  it('a crash mid-backfill resumes at the projects not yet checkpointed; a restart needs no new backfill', async () => {
    const sim = await startSim({ scale: 'small' });
    const gw = await startGateway({}, {}, { sim, simClock: true });
    const team = sim.keys[0]!.teams[0]!.id;
    const projects = [...sim.sim.world.projects.values()].filter((p) => p.teamId === team);
    try {
      await gw.addUser(0, 'ann@example.com');
      // v1 fails every render page after the first few: the backfill stops part way
      await fetch(`${sim.url}/_sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rules: [{ kind: 'error500', path: '/v1/renders', method: 'GET' }] }) });
      await gw.deps.replica!.syncNow([team]).catch(() => undefined);
      const state = (await gw.deps.replica!.status()).find((s) => s.team === team);
      expect(state?.state).toBe('backfilling');
      expect(state?.last_error).toBeTruthy();
    } finally {
      await gw.app.close();
      await gw.deps.close();
    }
    await fetch(`${sim.url}/_sim/faults`, { method: 'DELETE' });
    // part way: checkpoint the first projects by hand as a crash after them would have left them
    const again = await startGateway({ DATABASE_URL: gw.config.DATABASE_URL }, {}, { sim, simClock: true });
    try {
      const store = again.deps.replica!.store;
      const firstHalf = projects.slice(0, Math.floor(projects.length / 2));
      const s = await again.deps.readers.sessionFor(team, { onCall: () => undefined });
      for (const p of firstHalf) {
        const page = await s!.session.rendersPage(p.id, { limit: 60 });
        await store.putRenders(team, page.data);
        await store.markProjectBackfilled(p.id);
      }
      const before = calls(sim, 'GET /v1/renders');
      await again.deps.replica!.syncNow([team]);
      const walked = calls(sim, 'GET /v1/renders') - before;
      // only the other projects' pages were read (each project here fits one page)
      expect(walked).toBe(projects.length - firstHalf.length);
      expect((await again.deps.replica!.status()).find((x) => x.team === team)?.state).toBe('ready');
      expect(again.deps.replica!.team(team)!.size).toBe([...sim.sim.world.renders.values()].filter((r) => r.teamId === team).length);
    } finally {
      await again.app.close();
      await again.deps.close();
      await sim.sim.close();
    }
  });
});

describe('what operators see, memory, overlays', () => {
  let sim: RunningSim;
  beforeAll(async () => { sim = await startSim(); });
  afterAll(async () => sim.sim.close());

  it('/_gateway/index lists each team; /metrics has the index gauges; both are operator routes', async () => {
    const { gw, token } = await gateway(sim);
    try {
      await gw.get('/renders?limit=1', token);
      expect((await gw.get('/_gateway/index', token)).status).toBe(403);
      const r = await gw.app.inject({ method: 'GET', url: '/_gateway/index', headers: { authorization: `Bearer ${TEST_ENV.GATEWAY_ADMIN_TOKEN}` } });
      expect(r.statusCode).toBe(200);
      const rows = r.json().data as { team: string; state: string; renders: number; last_sync: string; sync_calls_last_minute: number }[];
      for (const t of sim.keys[0]!.teams) {
        const row = rows.find((x) => x.team === t.id)!;
        expect(row.state).toBe('ready');
        expect(row.renders).toBe([...sim.sim.world.renders.values()].filter((x) => x.teamId === t.id).length);
        expect(row.sync_calls_last_minute).toBeGreaterThan(0);
        expect(Date.parse(row.last_sync)).toBeGreaterThan(0);
      }
      const m = await gw.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TEST_ENV.GATEWAY_ADMIN_TOKEN}` } });
      expect(m.body).toMatch(/gateway_index_renders \d+/);
      expect(m.body).toMatch(/gateway_index_age_max_seconds /);
      expect(m.body).toContain('gateway_index_age_seconds_bucket');
      expect(m.body).not.toContain(sim.keys[0]!.teams[0]!.id); // no label per team
    } finally { await gw.close(); }
  });

  it('teams past INDEX_MEMORY_MB leave memory and are read back from the store', async () => {
    const big = await startSim({ scale: 'small' });
    // about one team's worth (each of these teams holds ~120 renders, ~22 kB by the index's estimate)
    const { gw, token } = await gateway(big, { INDEX_MEMORY_MB: '0.03' });
    try {
      const teams = big.keys[0]!.teams.map((t) => t.id);
      const all = [...big.sim.world.renders.values()].filter((x) => teams.includes(x.teamId)).length;
      for (let i = 0; i < 3; i++) {
        const r = await gw.get('/renders?limit=1&meta=total_count', token);
        expect(r.headers['x-gateway-source']).toBe('index');
        expect(r.body.meta.total_count).toBe(all);
        expect(gw.deps.replica!.rendersInMemory).toBeLessThan(all); // not every team stayed in memory
        // the team loaded last (to be read) is the one kept, not the first to go
        expect(teams.some((t) => gw.deps.replica!.team(t) !== undefined)).toBe(true);
      }
    } finally {
      await gw.close();
      await big.sim.close();
    }
  });

  it('a PATCH (an overlay) shows in the next read from the index', async () => {
    const { gw, token } = await gateway(sim);
    try {
      const one = (await gw.get('/renders?limit=1&fields=id,title', token)).body.data[0];
      const p = await gw.app.inject({ method: 'PATCH', url: `/renders/${one.id}`, headers: { authorization: `Bearer ${token}` }, payload: { title: 'renamed in legacy' } });
      expect(p.statusCode).toBe(200);
      const r = await gw.get(`/renders?filter[title][_eq]=renamed in legacy&fields=id,title`, token);
      expect(r.headers['x-gateway-source']).toBe('index');
      expect(r.body.data).toEqual([{ id: one.id, title: 'renamed in legacy' }]);
    } finally { await gw.close(); }
  });
});
