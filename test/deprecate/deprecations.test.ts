import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * Deprecation rules end to end on one gateway (SQLite file, real simulator, manual clock): set and read back over
 * the operator route, the RFC 9745 / RFC 8594 headers, a brownout's 410 for the matching route only and for its
 * window only, the sunset, observe mode, a refused write that never reaches v1, the counts, a restart.
 */
const CORS = { CORS_ENABLED: 'true', CORS_ORIGIN: 'https://app.example.com' };
const OP = { authorization: 'Bearer operator-token-0123456789' };
const T0 = Date.UTC(2026, 0, 10, 12, 0, 0);
const clock = new ManualClock(T0);
let sim: RunningSim;
let gw: TestGateway;
let userId: string;

const rule = (over: Record<string, unknown> = {}) => ({
  id: 'renders-list', match: { route: 'GET /renders', client: '*' }, deprecation: '2026-01-01T00:00:00Z', sunset: '2026-06-30T00:00:00Z',
  link: 'https://docs.example.com/moving-off-legacy', brownouts: [{ start: '2026-01-10T14:00:00Z', minutes: 15 }], ...over,
});
const put = (body: unknown, g = gw) => g.app.inject({ method: 'PUT', url: '/_gateway/deprecations', headers: OP, payload: body as object });
const token = () => gw.login('dep@example.com');
const get = async (url: string, ua = 'python-requests/2.31') => gw.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${await token()}`, 'user-agent': ua } });

beforeAll(async () => {
  sim = await startSim();
  gw = await startGateway(CORS, {}, { sim, clock });
  userId = await gw.addUser(0, 'dep@example.com');
});
afterAll(async () => {
  await gw?.close();
  await sim?.sim.close();
});

describe('PUT and GET /_gateway/deprecations', () => {
  it('sets the rules and reads them back as set; the operator token only', async () => {
    clock.set(T0);
    const body = { rules: [rule(), { id: 'writes', match: { route: 'POST /renders' }, deprecation: '2026-01-05T00:00:00Z', mode: 'observe' }] };
    const res = await put(body);
    expect(res.statusCode).toBe(200);
    const back = await gw.app.inject({ method: 'GET', url: '/_gateway/deprecations', headers: OP });
    expect(back.statusCode).toBe(200);
    expect(back.json().data.rules).toEqual(body.rules);
    expect(back.json().data.set_at['renders-list']).toBe(new Date(T0).toISOString());
    // the answer is also the body as set: it can be sent back as it is
    expect(back.json().rules).toEqual(body.rules);
    expect((await put(back.json())).statusCode).toBe(200);
    expect((await gw.app.inject({ method: 'GET', url: '/_gateway/deprecations' })).statusCode).toBe(403);
    expect((await gw.app.inject({ method: 'PUT', url: '/_gateway/deprecations', payload: { rules: [] } })).statusCode).toBe(403);
  });

  it.each([
    [{ rules: [{ ...rule(), sunset: 'next summer' }] }, 'rules.0.sunset'],
    [{ rules: [{ ...rule(), match: { route: 'GET renders' } }] }, 'rules.0.match.route'],
    [{ rules: [{ ...rule(), match: { route: 'GET /renders', client: 'bob' } }] }, 'rules.0.match.client'],
    [{ rules: [{ ...rule(), link: 'javascript:alert(1)' }] }, 'rules.0.link'],
    [{ rules: [{ ...rule(), brownouts: [{ start: '2026-02-01T00:00:00Z', minutes: 0 }] }] }, 'rules.0.brownouts.0.minutes'],
    [{ rules: [{ ...rule(), sunset: '2025-06-30T00:00:00Z' }] }, 'rules.0.sunset'],
    [{ rules: [rule(), { ...rule(), id: 'again' }] }, 'rules.1.match'],
    [{ rules: [rule(), rule({ match: { route: 'GET /projects' } })] }, 'rules.1.id'],
    [{ rules: [rule({ match: { route: 'GET /renderz' } })] }, 'rules.0.match.route'],
    [{ rules: [rule({ colour: 'red' })] }, 'rules.0'],
    [{ rule: [] }, 'rules:'],
  ])('refuses %j with 400 naming %s, and keeps the rules', async (body, path) => {
    const before = (await gw.app.inject({ method: 'GET', url: '/_gateway/deprecations', headers: OP })).json().data.rules;
    const res = await put(body);
    expect(res.statusCode).toBe(400);
    const e = res.json().errors[0];
    expect(e.extensions.code).toBe('INVALID_PAYLOAD');
    expect(e.message).toContain(path);
    expect((await gw.app.inject({ method: 'GET', url: '/_gateway/deprecations', headers: OP })).json().data.rules).toEqual(before);
  });

  it('refuses a body over 256 KiB (under the gateway\'s own limit) as too large', async () => {
    const res = await put({ rules: [], pad: 'x'.repeat(300 * 1024) });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0]).toMatchObject({ message: 'Invalid payload. Request body is too large.', extensions: { code: 'INVALID_PAYLOAD' } });
  });
});

describe('in band', () => {
  it('a matching answer carries Deprecation, Sunset and Link in the RFC formats, its body unchanged; other routes carry none', async () => {
    clock.set(T0);
    await put({ rules: [] });
    const plain = await get('/renders?limit=3&fields=id,title&sort=id');
    expect(plain.statusCode).toBe(200);
    expect(plain.headers.deprecation).toBeUndefined();
    await put({ rules: [rule()] });
    const res = await get('/renders?limit=3&fields=id,title&sort=id');
    expect(res.statusCode).toBe(200);
    expect(res.headers.deprecation).toBe(`@${Date.UTC(2026, 0, 1) / 1000}`);
    expect(res.headers.sunset).toBe('Tue, 30 Jun 2026 00:00:00 GMT');
    expect(res.headers.link).toBe('<https://docs.example.com/moving-off-legacy>; rel="deprecation"; type="text/html", ' +
      '<https://docs.example.com/moving-off-legacy>; rel="sunset"; type="text/html"');
    expect(res.body).toBe(plain.body);
    const other = await get('/projects?limit=1');
    expect(other.statusCode).toBe(200);
    expect(other.headers.deprecation).toBeUndefined();
    expect(other.headers.sunset).toBeUndefined();
  });

  it('exposes the headers through CORS (real HTTP)', async () => {
    const address = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const res = await fetch(`${address}/renders?limit=1`, { headers: { authorization: `Bearer ${await token()}`, origin: 'https://app.example.com' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('deprecation')).toBe(`@${Date.UTC(2026, 0, 1) / 1000}`);
    const exposed = String(res.headers.get('access-control-expose-headers')).toLowerCase().split(/,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(['deprecation', 'sunset', 'link', 'content-range']));
    await res.arrayBuffer();
  });

  it('a HEAD request falls under the rules of its GET', async () => {
    const res = await gw.app.inject({ method: 'HEAD', url: '/renders?limit=1', headers: { authorization: `Bearer ${await token()}` } });
    expect(res.statusCode).toBe(200);
    expect(res.headers.sunset).toBe('Tue, 30 Jun 2026 00:00:00 GMT');
  });
});

describe('brownouts and the sunset', () => {
  it('answers 410 DEPRECATED in a brownout for the matching route only, and again after the window', async () => {
    await put({ rules: [rule()] });
    clock.set(Date.UTC(2026, 0, 10, 14, 5));
    const res = await get('/renders?limit=1');
    expect(res.statusCode).toBe(410);
    const e = res.json().errors[0];
    expect(e.extensions).toMatchObject({ code: 'DEPRECATED', rule: 'renders-list', sunset: '2026-06-30T00:00:00Z', brownout_until: '2026-01-10T14:15:00Z' });
    expect(e.message).toContain('2026-06-30T00:00:00Z');
    expect(e.message).toContain('https://docs.example.com/moving-off-legacy');
    expect(res.headers.deprecation).toBe(`@${Date.UTC(2026, 0, 1) / 1000}`);
    expect(res.headers.sunset).toBe('Tue, 30 Jun 2026 00:00:00 GMT');
    expect(res.headers['retry-after']).toBe('600');
    // another route, and the same route of another template, answer
    expect((await get('/projects?limit=1')).statusCode).toBe(200);
    clock.set(Date.UTC(2026, 0, 10, 14, 15));
    const after = await get('/renders?limit=1');
    expect(after.statusCode).toBe(200);
    expect(after.headers.deprecation).toBeDefined();
  });

  it('answers 410 from the sunset on; no header once the rules are cleared', async () => {
    await put({ rules: [rule()] });
    clock.set(Date.UTC(2026, 5, 30));
    const res = await get('/renders?limit=1');
    expect(res.statusCode).toBe(410);
    expect(res.json().errors[0].message).toMatch(/^GET \/renders was retired on 2026-06-30T00:00:00Z/);
    await put({ rules: [] });
    const cleared = await get('/renders?limit=1');
    expect(cleared.statusCode).toBe(200);
    expect(cleared.headers.deprecation).toBeUndefined();
    expect(cleared.headers.sunset).toBeUndefined();
    expect(cleared.headers.link).toBeUndefined();
  });

  it('the most specific rule wins: a client given a later sunset answers while everyone else is refused', async () => {
    clock.set(Date.UTC(2026, 6, 1));
    await put({ rules: [rule(), rule({ id: 'ann-extension', match: { route: 'GET /renders', client: `user:${userId}~python-requests` }, sunset: '2026-09-30T00:00:00Z' })] });
    const ann = await get('/renders?limit=1');
    expect(ann.statusCode).toBe(200);
    expect(ann.headers.sunset).toBe('Wed, 30 Sep 2026 00:00:00 GMT');
    const curl = await get('/renders?limit=1', 'curl/8.4.0'); // the same user from another client: the general rule
    expect(curl.statusCode).toBe(410);
    expect(curl.json().errors[0].extensions.rule).toBe('renders-list');
  });

  it('a rule for a static token applies to that token only', async () => {
    clock.set(Date.UTC(2026, 6, 1, 12));
    const st = await gw.deps.users.createStaticToken(userId, 'service');
    await put({ rules: [{ id: 'svc', match: { route: 'GET /renders', client: `static:${st.id}` }, deprecation: '2026-06-01T00:00:00Z', sunset: '2026-07-01T00:00:00Z' }] });
    const svc = await gw.app.inject({ method: 'GET', url: '/renders?limit=1', headers: { authorization: `Bearer ${st.token}` } });
    expect(svc.statusCode).toBe(410);
    expect(svc.json().errors[0].extensions.rule).toBe('svc');
    const user = await get('/renders?limit=1');
    expect(user.statusCode).toBe(200);
    expect(user.headers.deprecation).toBeUndefined();
  });

  it('observe mode counts who would have been refused without refusing', async () => {
    clock.set(Date.UTC(2026, 6, 2, 9));
    await put({ rules: [rule({ mode: 'observe' })] });
    const res = await get('/renders?limit=1', 'curl/8.4.0');
    expect(res.statusCode).toBe(200);
    expect(res.headers.sunset).toBe('Tue, 30 Jun 2026 00:00:00 GMT');
    const p = await gw.app.inject({ method: 'GET', url: '/_gateway/deprecations/progress', headers: OP });
    const client = p.json().data[0].clients.find((c: { client: string }) => c.client === `user:${userId}~curl`);
    expect(client.days.at(-1)).toEqual({ day: '2026-07-02', calls: 1, refused: 0, observed: 1 });
  });

  it('refuses a write without reaching v1', async () => {
    clock.set(Date.UTC(2026, 6, 3));
    await put({ rules: [{ id: 'writes', match: { route: 'POST /renders' }, deprecation: '2026-01-05T00:00:00Z', sunset: '2026-07-01T00:00:00Z' }] });
    const t = await token();
    const before = sim.sim.stats.get('POST /v1/renders') ?? 0;
    const project = [...sim.sim.world.projects.values()][0]!;
    const res = await gw.app.inject({ method: 'POST', url: '/renders', headers: { authorization: `Bearer ${t}` }, payload: { project: project.id, data: {} } });
    expect(res.statusCode).toBe(410);
    expect(res.json().errors[0].extensions.code).toBe('DEPRECATED');
    expect(sim.sim.stats.get('POST /v1/renders') ?? 0).toBe(before);
    // and a read of another route still answers
    expect((await get('/renders?limit=1')).statusCode).toBe(200);
  });
});

describe('progress counts', () => {
  it('counts per rule, client and day: served, refused and observed', async () => {
    clock.set(Date.UTC(2026, 2, 1, 10));
    await put({ rules: [rule({ id: 'counted', brownouts: [{ start: '2026-03-02T10:00:00Z', minutes: 30 }] })] });
    for (let i = 0; i < 3; i++) expect((await get('/renders?limit=1')).statusCode).toBe(200);
    clock.set(Date.UTC(2026, 2, 2, 10, 10));
    expect((await get('/renders?limit=1')).statusCode).toBe(410);
    expect((await get('/renders?limit=1', 'curl/8.4.0')).statusCode).toBe(410);
    const res = await gw.app.inject({ method: 'GET', url: `/_gateway/deprecations/progress?client=user:${userId}`, headers: OP });
    expect(res.statusCode).toBe(200);
    const [p] = res.json().data;
    expect(p).toMatchObject({ rule: 'counted', route: 'GET /renders', mode: 'enforce', sunset: '2026-06-30T00:00:00Z', days_left: 120 });
    expect(p.clients).toEqual([
      { client: `user:${userId}~python-requests`, calls: 4, refused: 1, observed: 0, last_seen: '2026-03-02T10:10:00Z',
        days: [{ day: '2026-03-01', calls: 3, refused: 0, observed: 0 }, { day: '2026-03-02', calls: 1, refused: 1, observed: 0 }] },
      { client: `user:${userId}~curl`, calls: 1, refused: 1, observed: 0, last_seen: '2026-03-02T10:10:00Z',
        days: [{ day: '2026-03-02', calls: 1, refused: 1, observed: 0 }] },
    ]);
    const metrics = await gw.deps.metrics.registry.getSingleMetricAsString('gateway_deprecated_calls_total');
    expect(metrics).toContain('gateway_deprecated_calls_total{rule="counted",outcome="refused"} 2');
    expect(metrics).not.toContain(userId);
    // a rule removed leaves the metric too: its label values stay as many as the rules set
    await put({ rules: [rule({ id: 'next' })] });
    expect(await gw.deps.metrics.registry.getSingleMetricAsString('gateway_deprecated_calls_total')).not.toContain('rule="counted"');
  });
});

describe('a restart', () => {
  it('keeps the rules and their counts', async () => {
    clock.set(Date.UTC(2026, 2, 3));
    await put({ rules: [rule({ id: 'kept' })] });
    expect((await get('/renders?limit=1')).statusCode).toBe(200);
    const url = gw.config.DATABASE_URL;
    await gw.app.close();
    await gw.deps.close();
    gw = await startGateway({ ...CORS, DATABASE_URL: url }, {}, { sim, clock });
    const back = await gw.app.inject({ method: 'GET', url: '/_gateway/deprecations', headers: OP });
    expect(back.json().data.rules.map((r: { id: string }) => r.id)).toEqual(['kept']);
    const res = await get('/renders?limit=1');
    expect(res.headers.deprecation).toBe(`@${Date.UTC(2026, 0, 1) / 1000}`);
    const p = await gw.app.inject({ method: 'GET', url: '/_gateway/deprecations/progress', headers: OP });
    expect(p.json().data[0].clients[0].calls).toBe(2);
  });
});
