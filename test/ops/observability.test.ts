import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/sim.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';
import { startMetricsServer } from '../../src/ops/metrics-server.js';
import { ManualClock } from '../../src/lib/clock.js';
import { CallMeter } from '../../src/live/meter.js';
import { Metrics } from '../../src/ops/metrics.js';

let gw: TestGateway;
let token: string;
const clock = new ManualClock(Date.now());
const op = { authorization: `Bearer ${TEST_ENV.GATEWAY_ADMIN_TOKEN}` };
beforeAll(async () => {
  // the live path (its per-key cache and v1 calls are what is counted here; the replica gauges: test/replica/live-equivalence.test.ts)
  gw = await startGateway({ V1_RETRIES: '1', INDEX_ENABLED: 'false' }, {}, { clock });
  await gw.addUser(0, 'ann@example.com');
  token = await gw.login('ann@example.com');
});
afterAll(async () => gw.close());

const metricsText = async () => (await gw.app.inject({ method: 'GET', url: '/metrics', headers: op })).body;
const sample = (text: string, name: string, labels: Record<string, string>) => {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line ? Number(line.split(' ').pop()) : undefined;
};

describe('request ids', () => {
  it('keeps a plain incoming X-Request-Id, echoes it, logs it and sends it on every v1 call', async () => {
    await call(gw.s.url, '/_sim/stats/reset', { method: 'POST' });
    const res = await gw.get('/renders?limit=2&fields=id,project.title', token, { 'x-request-id': 'trace-abc.123' });
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBe('trace-abc.123');
    const seen = (await call(gw.s.url, '/_sim/requests')).body as { path: string; request_id: string | null }[];
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((r) => r.request_id === 'trace-abc.123')).toBe(true);
    expect(gw.logs.some((l) => l.includes('"reqId":"trace-abc.123"'))).toBe(true);
  });
  it('replaces a missing, unsafe or overlong id with a fresh uuid', async () => {
    const ids = new Set<string>();
    for (const h of [undefined, 'bad id with spaces', 'x'.repeat(129), '<script>', 'a\u00e9b']) {
      const res = await gw.app.inject({ method: 'GET', url: '/server/ping', headers: h === undefined ? {} : { 'x-request-id': h } });
      const id = res.headers['x-request-id'] as string;
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      ids.add(id);
    }
    expect(ids.size).toBe(5);
  });
  it('puts the id in 5xx bodies and logs the v1 failure with its path at warn', async () => {
    await call(gw.s.url, '/_sim/faults', { method: 'POST', body: { rules: [{ kind: 'error500', path: '/v1/teams' }] } });
    gw.deps.cache.clear();
    try {
      const res = await gw.get('/accounts', token, { 'x-request-id': 'failing-1' });
      expect(res.status).toBe(503);
      expect(res.body.errors[0].extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE', request_id: 'failing-1' });
      const line = gw.logs.find((l) => l.includes('"reqId":"failing-1"') && l.includes('v1 call failed'));
      expect(line).toBeDefined();
      expect(JSON.parse(line!)).toMatchObject({ level: 40, v1: { method: 'GET', path: '/v1/teams', status: 500 } });
    } finally {
      await call(gw.s.url, '/_sim/faults', { method: 'DELETE' });
    }
  });
});

describe('health', () => {
  it('answers ok in Directus shape, checks for operators only; v1 down is a warning, not an error; /healthz stays 200', async () => {
    clock.advance(61_000); // earlier tests' v1 failures leave the one-minute window
    const pub = await gw.app.inject({ method: 'GET', url: '/server/health' });
    expect(pub.statusCode).toBe(200);
    expect(pub.headers['content-type']).toContain('application/health+json');
    expect(pub.json()).toEqual({ status: 'ok' });
    const full = (await gw.app.inject({ method: 'GET', url: '/server/health', headers: op })).json();
    expect(Object.keys(full.checks).sort()).toEqual(['lifecycle:draining', 'mappings:loaded', 'store:responseTime', 'v1:reachability']);
    expect(full.checks['store:responseTime'][0]).toMatchObject({ status: 'ok', componentType: 'datastore', observedUnit: 'ms' });

    await call(gw.s.url, '/_sim/faults', { method: 'POST', body: { rules: [{ kind: 'error500' }] } });
    gw.deps.cache.clear();
    try {
      for (let i = 0; i < 3; i++) expect((await gw.get('/accounts', token)).status).toBe(503);
      const down = await gw.app.inject({ method: 'GET', url: '/server/health', headers: op });
      expect(down.statusCode).toBe(200);
      expect(down.json().status).toBe('warn');
      expect(down.json().checks['v1:reachability'][0].status).toBe('error');
      expect((await gw.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
      expect((await gw.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    } finally {
      await call(gw.s.url, '/_sim/faults', { method: 'DELETE' });
    }
  });
});

describe('metrics', () => {
  it('is an operator route, whatever the spelling of its path', async () => {
    for (const url of ['/metrics', '/%6Detrics', '/metrics/']) {
      expect((await gw.app.inject({ method: 'GET', url })).statusCode).toBe(403);
      expect((await gw.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(403);
    }
  });
  it('counts legacy requests by route template, v1 calls by endpoint and cache use', async () => {
    const before = await metricsText();
    const base = sample(before, 'gateway_http_requests_total', { route: '/renders/:id', method: 'GET', status: '403' }) ?? 0;
    for (let i = 0; i < 3; i++) await gw.get(`/renders/00000000-0000-4000-8000-00000000000${i}`, token);
    await gw.get('/projects?limit=1', token);
    await gw.get('/projects?limit=1', token);
    const text = await metricsText();
    expect(sample(text, 'gateway_http_requests_total', { route: '/renders/:id', method: 'GET', status: '403' })).toBe(base + 3);
    expect(text).not.toContain('00000000-0000-4000-8000-000000000001');
    expect(sample(text, 'gateway_v1_calls_total', { endpoint: '/v1/teams', status: '200' })).toBeGreaterThan(0);
    expect(sample(text, 'gateway_cache_hits_total', {}) ?? Number(/gateway_cache_hits_total (\d+)/.exec(text)?.[1])).toBeGreaterThan(0);
    expect(text).toContain('gateway_http_request_duration_seconds_bucket');
    expect(text).toContain('process_cpu_user_seconds_total');
  });
  it('is also served without auth on METRICS_PORT, bound to METRICS_HOST', async () => {
    const server = await startMetricsServer(gw.deps.metrics, 0, '127.0.0.1');
    try {
      const addr = server.address() as { port: number; address: string };
      expect(addr.address).toBe('127.0.0.1');
      const res = await fetch(`http://127.0.0.1:${addr.port}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('gateway_v1_calls_total');
      expect((await fetch(`http://127.0.0.1:${addr.port}/other`)).status).toBe(404);
    } finally {
      server.close();
    }
  });
});

describe('readiness', () => {
  it('goes 503 once draining, and health says so', async () => {
    gw.deps.lifecycle.drain(gw.deps.clock.now());
    const r = await gw.app.inject({ method: 'GET', url: '/readyz' });
    expect(r.statusCode).toBe(503);
    expect(r.json()).toEqual({ status: 'not ready', reasons: ['draining'] });
    expect((await gw.app.inject({ method: 'GET', url: '/server/health' })).json().status).toBe('warn');
    expect((await gw.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});

describe('call-budget refusals', () => {
  it('are counted when a request meter refuses a call', async () => {
    const metrics = new Metrics();
    const meter = new CallMeter(1, () => metrics.budgetRefused());
    meter.reserve();
    meter.onCall({ method: 'GET', path: '/v1/teams', status: 200, attempt: 0, ms: 1 });
    expect(() => meter.reserve()).toThrow(/Invalid query\. This query needs more than 1 calls/);
    expect((await metrics.text()).body).toMatch(/^gateway_v1_call_budget_refusals_total 1$/m);
  });
});

describe('request series', () => {
  it('count requests and bucket their latency per route, method and status, cumulatively, in the exposition format', async () => {
    const metrics = new Metrics();
    for (const s of [0.001, 0.004, 0.02, 0.3, 42]) metrics.request('/renders', 'GET', 200, s);
    metrics.request('/renders/:id', 'GET', 403, 0.002);
    const { body } = await metrics.text();
    const line = (name: string) => new RegExp(`^${name.replace(/[{}.+]/g, (c) => `\\${c}`)} (\\S+)$`, 'm').exec(body)?.[1];
    expect(line('gateway_http_requests_total{route="/renders",method="GET",status="200"}')).toBe('5');
    expect(line('gateway_http_requests_total{route="/renders/:id",method="GET",status="403"}')).toBe('1');
    const bucket = (le: string) => Number(line(`gateway_http_request_duration_seconds_bucket{le="${le}",route="/renders",method="GET",status="200"}`));
    expect([bucket('0.005'), bucket('0.01'), bucket('0.025'), bucket('0.25'), bucket('0.5'), bucket('30'), bucket('+Inf')]).toEqual([2, 2, 3, 3, 4, 4, 5]);
    expect(Number(line('gateway_http_request_duration_seconds_sum{route="/renders",method="GET",status="200"}'))).toBeCloseTo(42.325, 6);
    expect(line('gateway_http_request_duration_seconds_count{route="/renders",method="GET",status="200"}')).toBe('5');
    expect(body).toContain('# TYPE gateway_http_request_duration_seconds histogram');
    expect(body).toContain('# TYPE gateway_http_requests_total counter');
  });
});
