import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases } from '../helpers/databases.js';
import { startSim, type RunningSim } from '../helpers/sim.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Two gateway instances over one PostgreSQL store and one v1: what each keeps in memory (users, tokens, overlays,
 * keys) follows the other's writes through LISTEN/NOTIFY.
 */
let sim: RunningSim;
let a: TestGateway;
let b: TestGateway;
beforeAll(async () => {
  const pg = (await databases()).find((d) => d.name === 'postgres')!;
  sim = await startSim();
  a = await startGateway({ DATABASE_URL: pg.url }, {}, { sim });
  b = await startGateway({ DATABASE_URL: pg.url }, {}, { sim });
  await a.addUser(0, 'ann@example.com');
  await b.deps.ids.load();
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await sim?.sim.close();
});

/** Resolves when `gw` hears `topic` from the other instance (the notification itself, not a guess of its delay). */
const heard = (gw: TestGateway, topic: string) => new Promise<string>((resolve) => gw.deps.bus.on(topic, resolve));

const login = async (gw: TestGateway) => {
  const res = await gw.app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'ann@example.com', password: 'correct horse battery', mode: 'json' } });
  expect(res.statusCode).toBe(200);
  return res.json().data as { access_token: string; refresh_token: string };
};
const refresh = (gw: TestGateway, token: string) => gw.app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: token, mode: 'json' } });

describe('two instances on one PostgreSQL store', () => {
  it('login on A, refresh on B; a rotated token reused on B revokes the session everywhere', async () => {
    const t = await login(a);
    const r1 = await refresh(b, t.refresh_token);
    expect(r1.statusCode).toBe(200);
    const rotated = r1.json().data.refresh_token as string;
    expect((await refresh(b, t.refresh_token)).statusCode).toBe(401); // reuse of the old one
    expect((await refresh(a, rotated)).statusCode).toBe(401); // … revoked the whole session
  });

  it('logout on A is refused on B', async () => {
    const t = await login(a);
    expect((await a.app.inject({ method: 'POST', url: '/auth/logout', payload: { refresh_token: t.refresh_token } })).statusCode).toBe(204);
    expect((await refresh(b, t.refresh_token)).statusCode).toBe(401);
  });

  it('a PATCH overlay on A is visible on B once B hears of it', async () => {
    const t = await login(a);
    const project = (await b.get('/projects?limit=1&fields=id,title', t.access_token)).body.data[0];
    expect((await b.get(`/projects/${project.id}?fields=title`, t.access_token)).body.data.title).toBe(project.title);
    const news = heard(b, 'overlays');
    const patched = await a.app.inject({ method: 'PATCH', url: `/projects/${project.id}`, headers: { authorization: `Bearer ${t.access_token}` }, payload: { title: 'Renamed on A' } });
    expect(patched.statusCode).toBe(200);
    expect(await news).toMatch(/^project:proj_[a-z0-9]+$/); // (the change names the item: B reads that one back)
    expect((await b.get(`/projects/${project.id}?fields=title`, t.access_token)).body.data.title).toBe('Renamed on A');
  });

  it('a user rebound on A is used by B on its next request; a suspended key stops on B', async () => {
    const t = await login(a);
    const id = (await a.deps.users.byEmail('ann@example.com'))!.id;
    expect((await b.get('/users/me?fields=email', t.access_token)).status).toBe(200);
    // B has the user and key in memory; A rebinds to another person's key
    const news = heard(b, 'users');
    expect(await a.deps.users.rebind(id, sim.keys[1]!.api_key, sim.keys[1]!.user_id)).toBe(true);
    expect(await news).toBe(id);
    await sim.sim.world.revokeKey(sim.keys[0]!.api_key);
    // B's next request uses the new key: the revoked old one would be a 401
    const res = await b.get('/accounts?fields=id', t.access_token);
    expect(res.status).toBe(200);
    const teams = new Set(sim.keys[1]!.teams.map((x) => x.id));
    expect(res.body.data.length).toBe(teams.size);
  });
});

describe('a dropped LISTEN connection', () => {
  it('makes the instance drop what it keeps, listen again, and drop it once more', async () => {
    const name = b.deps.bus.listenerName!;
    expect(name).toMatch(/^gateway-listener-/);
    let resyncs = 0;
    const twice = new Promise<void>((resolve) => b.deps.bus.onResync(() => { if (++resyncs === 2) resolve(); }));
    const { sql } = await import('kysely');
    const killed = await sql<{ t: boolean }>`select pg_terminate_backend(pid) as t from pg_stat_activity where application_name = ${name}`.execute(a.deps.db.kysely);
    expect(killed.rows.map((r) => r.t)).toEqual([true]);
    await twice; // at the drop, and once listening again
    const news = heard(b, 'tokens');
    await a.deps.bus.publish('tokens');
    expect(await news).toBe('*');
  });
});

describe('the login limiter across two instances', () => {
  it('lets at most LOGIN_MAX_FAILURES wrong passwords be checked, however they are spread', async () => {
    const attempts = Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).app.inject({
      method: 'POST', url: '/auth/login', payload: { email: 'ann@example.com', password: `wrong-${i}` }, remoteAddress: `10.1.${i}.1`,
    }));
    const statuses = (await Promise.all(attempts)).map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 401)).toHaveLength(25);
    expect(statuses.filter((s) => s === 429)).toHaveLength(35);
  });
});

describe('a wrong ENCRYPTION_KEY', () => {
  it('stops a third instance at start-up, naming the key', async () => {
    const err = await startGateway({ DATABASE_URL: a.config.DATABASE_URL, ENCRYPTION_KEY: '99'.repeat(32) }, {}, { sim }).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/^ENCRYPTION_KEY does not open the data in this store/);
  });
});

describe('a webhook delivered to one instance', () => {
  it('is reflected on the other: B drops its cached copy when A applies the event', async () => {
    const { createHmac } = await import('node:crypto');
    const team = sim.keys[1]!.teams[0]!.id; // person 1: person 0's key was revoked by the rebind test above
    const secret = 'whsec_instances_test';
    // the live path's per-key caches (the index across instances: below)
    const env = { WEBHOOK_SECRETS: JSON.stringify({ [team]: secret }), CACHE_TTL_RENDER_ACTIVE_MS: '600000', DATABASE_URL: a.config.DATABASE_URL, INDEX_ENABLED: 'false' };
    const a2 = await startGateway(env, {}, { sim, simClock: true });
    const b2 = await startGateway(env, {}, { sim, simClock: true });
    try {
      await a2.addUser(1, 'hooks@example.com'); // (ann is locked out by the limiter test above: the store is shared)
      const t = { access_token: await a2.login('hooks@example.com') };
      const render = [...sim.sim.world.renders.values()].find((r) => r.teamId === team && r.status !== 'complete' && r.status !== 'failed')!;
      const uuid = (await import('../../src/translate/ids.js')).derivedUuid('render', render.id);
      await a2.get('/renders?limit=-1&fields=id', t.access_token); // the uuids are answered (and stored) once
      expect((await b2.get(`/renders/${uuid}?fields=status`, t.access_token)).status).toBe(200); // cached on B for 10 minutes
      expect((await a2.get(`/renders/${uuid}?fields=status`, t.access_token)).status).toBe(200); // and on A
      const view = sim.sim.world.renderView(render);
      const raw = JSON.stringify({ id: `hook_inst_${Date.now()}`, event: 'render.status_changed', data: { ...view, status: 'complete', updated_at: (view.updated_at ?? view.created_at) + 60 }, timestamp: sim.sim.world.clock.now() });
      const dropped = heard(b2, 'render_cache');
      const res = await a2.app.inject({ method: 'POST', url: `/_gateway/webhooks/v1/${team}`, headers: { 'content-type': 'application/json', 'x-webhook-signature': `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}` }, payload: raw });
      expect(res.statusCode).toBe(204);
      expect((await dropped).split(' ')[1]).toBe(render.id);
      // B no longer holds the stale copy: its next read asks v1 (the simulator still says the old status)
      const before = sim.sim.stats.get('GET /v1/renders/:id') ?? 0;
      await b2.get(`/renders/${uuid}?fields=status`, t.access_token);
      expect(sim.sim.stats.get('GET /v1/renders/:id') ?? 0).toBe(before + 1);
      // A keeps the event's copy: its read says complete without asking v1
      expect((await a2.get(`/renders/${uuid}?fields=status`, t.access_token)).body.data.status).toBe('complete');
    } finally {
      await a2.close();
      await b2.close();
    }
  });
});

describe('the render index on two instances', () => {
  it('one backfill serves both; a webhook and a create on A show on B through NOTIFY; one instance holds a team\'s sync lease', async () => {
    const { createHmac } = await import('node:crypto');
    const { derivedUuid } = await import('../../src/translate/ids.js');
    const person = sim.keys[2]!;
    const team = person.teams[0]!.id;
    const secret = 'whsec_index_instances';
    const env = { WEBHOOK_SECRETS: JSON.stringify({ [team]: secret }), DATABASE_URL: a.config.DATABASE_URL, INDEX_MAX_STALENESS_MS: '600000' };
    const a3 = await startGateway(env, {}, { sim, simClock: true });
    const b3 = await startGateway(env, {}, { sim, simClock: true });
    try {
      await a3.addUser(2, 'index@example.com');
      await b3.deps.ids.load();
      const tok = await a3.login('index@example.com');
      await a3.deps.replica!.syncNow(person.teams.map((t) => t.id));
      const rid = `instances-read-${Date.now()}`;
      const onB = await b3.get('/renders?limit=2000&fields=id,status', tok, { 'x-request-id': rid });
      expect(onB.headers['x-gateway-source']).toBe('index'); // read from the store A filled: no backfill of its own
      // the read's own v1 calls, as the simulator saw them (by the read's request id): the key's reach (its teams) once,
      // no render page (a count of all the simulator's calls would take in the instances' background syncs and reach
      // checks, which run on timers: under load one fell between two counts)
      expect(onB.headers['x-gateway-v1-calls']).toBe('1');
      const calls = (await (await fetch(`${sim.url}/_sim/requests`)).json()) as { method: string; path: string; request_id: string | null }[];
      expect(calls.filter((r) => r.request_id === rid).map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/teams']);
      expect(onB.body.data.length).toBeGreaterThan(0);
      // a webhook applied on A
      const render = [...sim.sim.world.renders.values()].find((r) => r.teamId === team && r.status !== 'complete' && r.status !== 'failed')
        ?? sim.sim.world.renders.get(sim.sim.world.createRender(sim.sim.world.authenticate(`Bearer ${person.api_key}`), { project_id: [...sim.sim.world.projects.values()].find((p) => p.teamId === team)!.id, name: 'moving' }).id)!;
      const view = sim.sim.world.renderView(render);
      const raw = JSON.stringify({ id: `hook_idx_${Date.now()}`, event: 'render.status_changed', data: { ...view, status: 'failed', updated_at: (view.updated_at ?? view.created_at) + 60 }, timestamp: sim.sim.world.clock.now() });
      const heardOnB = heard(b3, 'index_renders');
      const res = await a3.app.inject({ method: 'POST', url: `/_gateway/webhooks/v1/${team}`, headers: { 'content-type': 'application/json', 'x-webhook-signature': `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}` }, payload: raw });
      expect(res.statusCode).toBe(204);
      await heardOnB;
      await b3.deps.replica!.idle();
      const seen = await b3.get(`/renders?filter[id][_eq]=${derivedUuid('render', render.id)}&fields=status`, tok);
      expect(seen.body.data).toEqual([{ status: 'failed' }]);
      expect(seen.headers['x-gateway-v1-calls']).toBe('0');
      // the gateway's own create on A
      const project = [...sim.sim.world.projects.values()].find((p) => p.teamId === team)!;
      const heardCreate = heard(b3, 'index_renders');
      const created = await a3.app.inject({ method: 'POST', url: '/renders', headers: { authorization: `Bearer ${tok}` },
        payload: { project: derivedUuid('project', project.id), account: derivedUuid('account', team), data: { n: 1 }, title: 'made on A' } });
      expect(created.statusCode).toBe(200);
      await heardCreate;
      await b3.deps.replica!.idle();
      expect((await b3.get('/renders?filter[title][_eq]=made on A&fields=id', tok)).body.data).toEqual([{ id: created.json().data.id }]);
      // the lease: while A holds a team's, B cannot take it (and takes it once A lets go). (Each instance's background
      // syncs take the team's lease too, for the length of a sync: under load one held it when A asked — it is asked
      // again until that sync let go.)
      const take = async (gw: typeof a3) => {
        for (let i = 0; i < 100; i++) {
          if (await gw.deps.replica!.store.lease(team, gw.deps.replica!.holder, 60_000)) return true;
          await new Promise((r) => setTimeout(r, 50));
        }
        return false;
      };
      expect(await take(a3)).toBe(true);
      expect(await b3.deps.replica!.store.lease(team, b3.deps.replica!.holder, 60_000)).toBe(false);
      await a3.deps.replica!.store.release(team, a3.deps.replica!.holder);
      expect(await take(b3)).toBe(true);
      await b3.deps.replica!.store.release(team, b3.deps.replica!.holder);
    } finally {
      await a3.close();
      await b3.close();
    }
  });
});
