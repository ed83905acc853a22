import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { replay, ReplayModeError } from '../../src/compare/replay.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';
import { startLegacyBackend, type LegacyBackend } from '../helpers/legacy-backend.js';

/**
 * Gateway under test in shadow mode for /renders and compare mode for /projects, against a legacy-like
 * backend that serves the same data under the legacy system's own uuids.
 */
let ref: TestGateway;
let gw: TestGateway;
let legacy: LegacyBackend;
let staticToken: string;
let base: string;
const LEGACY_TOKEN = 'legacy-token-of-ann';

const report = async () => (await gw.get('/_gateway/compare', TEST_ENV.GATEWAY_ADMIN_TOKEN)).body.data;
/** A route's comparison results once every background comparison has ended (the idle hook, not a poll). */
const route = async (name: string, total: number) => {
  await gw.app.comparisonsIdle();
  const r = (await report()).routes.find((x: any) => x.route === name);
  expect(r?.total).toBeGreaterThanOrEqual(total);
  return r;
};

const tokens: Record<string, string> = { [LEGACY_TOKEN]: 'ann@example.com' };
beforeAll(async () => {
  ref = await startGateway();
  await ref.addUser(0, 'ann@example.com');
  const refToken = await ref.login('ann@example.com');
  legacy = await startLegacyBackend(ref, refToken, () => gw, tokens);
  // one simulated v1 behind both sides: identical data (two simulators started seconds apart date their newest renders apart)
  gw = await startGateway({ ROUTE_MODES: JSON.stringify({ '/renders': 'shadow', '/projects': 'compare' }), LEGACY_BASE_URL: legacy.url }, {}, { sim: ref.s });
  await gw.addUser(0, 'ann@example.com');
  // a static token both systems accept (imported from the legacy system)
  staticToken = (await gw.deps.users.createStaticToken((await gw.deps.users.byEmail('ann@example.com'))!.id, 'shared with legacy')).token;
  tokens[staticToken] = 'ann@example.com';
  base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => { await gw.close(); await legacy.close(); await ref.close(); });
beforeEach(async () => { await gw.app.comparisonsIdle(); legacy.plants.length = 0; await gw.app.inject({ method: 'DELETE', url: '/_gateway/compare', headers: { authorization: `Bearer ${TEST_ENV.GATEWAY_ADMIN_TOKEN}` } }); });

describe('shadow mode', () => {
  it('answers with the legacy body byte for byte, and identical data gives zero differences (noise detected)', async () => {
    const res = await fetch(`${base}/renders?limit=5&fields=id,title,status,project,account,user_created,date_created`, { headers: { authorization: `Bearer ${LEGACY_TOKEN}` } });
    const text = await res.text();
    expect(res.headers.get('x-legacy')).toBe('yes');
    expect(res.headers.get('x-gateway-answered-by')).toBe('legacy');
    expect(text).toBe(legacy.sent.filter((s) => s.url.startsWith('/renders'))[0]!.raw);
    const r = await route('GET /renders', 1);
    expect(r.differing).toBe(0);
    expect(r.fields).toEqual([expect.objectContaining({ path: 'served_at', kind: 'missing', noise: true })]);
  });

  it('finds each planted difference on the right path with the right type', async () => {
    legacy.plants.push((url, body) => {
      if (!url.startsWith('/renders') || !Array.isArray(body?.data)) return;
      body.data[0].title = 'planted title';
      delete body.data[1].status;
      body.data[2].download_ready = String(body.data[2].download_ready);
      body.data[0].legacy_only = 1;
    });
    await fetch(`${base}/renders?limit=5&fields=id,title,status,download_ready`, { headers: { authorization: `Bearer ${LEGACY_TOKEN}` } });
    const r = await route('GET /renders', 1);
    expect(r.differing).toBe(1);
    const found = r.fields.filter((f: any) => !f.noise).map((f: any) => `${f.kind} ${f.path}`).sort();
    const metrics = (await gw.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TEST_ENV.GATEWAY_ADMIN_TOKEN}` } })).body;
    expect(metrics).toMatch(/^gateway_comparison_diffs_total\{route="GET \/renders"\} [1-9]\d*$/m);
    // missing: the legacy answer has it and the translated one does not; extra: the other way round
    expect(found).toEqual(['extra data[].status', 'missing data[].legacy_only', 'type data[].download_ready', 'value data[].title']);
    const title = r.fields.find((f: any) => f.path === 'data[].title');
    expect(JSON.parse(title.samples[0].legacy)).toBe('planted title');
  });

  it('records a field read under an alias under the field it copies (bracket and JSON forms alike)', async () => {
    legacy.plants.push((url, body) => {
      if (!url.startsWith('/renders') || !Array.isArray(body?.data)) return;
      for (const item of body.data) for (const k of Object.keys(item)) if (k !== 'id') item[k] = `planted ${k}`;
    });
    // (one title, sorted: the sides' orders of equal dates differ, and a sort compares items by position)
    const one = 'filter[title][_eq]=Intro%20render%207&sort=title&limit=1';
    await fetch(`${base}/renders?${one}&fields=t1&alias[t1]=title`, { headers: { authorization: `Bearer ${LEGACY_TOKEN}` } });
    await fetch(`${base}/renders?${one}&fields=t2&alias={"t2":"title"}`, { headers: { authorization: `Bearer ${LEGACY_TOKEN}` } });
    const r = await route('GET /renders', 2);
    const paths = r.fields.filter((f: any) => !f.noise).map((f: any) => `${f.kind} ${f.path}`).sort();
    expect(paths).toEqual(['value data[].title (alias)']);
  });

  it('never mirrors writes', async () => {
    const v1Posts = () => gw.s.sim.stats.get('POST /v1/renders') ?? 0;
    const before = v1Posts();
    const projects = await gw.get('/projects?limit=1&fields=id,account', staticToken);
    const posts = legacy.sent.filter((s) => s.method === 'POST').length;
    const res = await fetch(`${base}/renders`, { method: 'POST', headers: { authorization: `Bearer ${LEGACY_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ project: projects.body.data[0].id, account: projects.body.data[0].account, data: {} }) });
    expect(res.headers.get('x-legacy')).toBe('yes');
    await gw.app.comparisonsIdle(); // nothing was started in the background for a write; idle at once
    expect(legacy.sent.filter((s) => s.method === 'POST').length).toBe(posts + 1);
    // the legacy backend got the write; the translated side never saw it (no POST reached v1)
    expect(v1Posts()).toBe(before);
    expect((await report()).routes.find((x: any) => x.route.startsWith('POST'))).toBeUndefined();
  });
});

describe('modes follow the route the router matched', () => {
  it('a percent-encoded spelling of a shadowed route is still answered by the legacy side', async () => {
    for (const path of ['/%72enders?limit=2&fields=id', '/renders/?limit=2&fields=id', '/%72%65nders?limit=2&fields=id']) {
      const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${LEGACY_TOKEN}` } });
      expect(res.headers.get('x-legacy'), path).toBe('yes');
      await res.arrayBuffer();
    }
  });
});

describe('compare mode', () => {
  it('answers translated and diffs against the legacy side in the background', async () => {
    const res = await gw.get('/projects?fields=id,title,account&limit=3', staticToken);
    expect(res.status).toBe(200);
    expect(res.headers['x-legacy']).toBeUndefined();
    expect(res.headers['x-gateway-answered-by']).toBe('gateway');
    const r = await route('GET /projects', 1);
    expect(r.differing).toBe(0); // ids differ as strings but name the same v1 objects
  });
});

describe('report page and replay gate', () => {
  it('renders the HTML report in Chromium', async () => {
    legacy.plants.push((url, body) => { if (url.startsWith('/renders') && Array.isArray(body?.data)) body.data[0].title = 'X'; });
    await fetch(`${base}/renders?limit=3&fields=id,title`, { headers: { authorization: `Bearer ${LEGACY_TOKEN}` } });
    await route('GET /renders', 1);
    const exe = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
    expect(exe, 'Debian chromium is installed (.ci/run installs it)').toBeDefined();
    const browser = await chromium.launch({ executablePath: exe!, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'] });
    try {
      const page = await browser.newPage({ extraHTTPHeaders: { authorization: `Bearer ${TEST_ENV.GATEWAY_ADMIN_TOKEN}` } });
      await page.goto(`${base}/_gateway/compare.html`);
      expect(await page.title()).toMatch(/comparison report/);
      expect(await page.locator('#routes tbody tr[data-route="GET /renders"] .rate').textContent()).toBe('100.0 %');
      expect(await page.locator('code', { hasText: 'data[].title' }).count()).toBeGreaterThan(0);
      expect(await page.locator('.tag', { hasText: 'noise' }).count()).toBeGreaterThan(0);
    } finally { await browser.close(); }
  });

  it('replays recorded requests and exits non-zero past the threshold', async () => {
    // (/projects is in compare mode: the gateway translates it; /renders, in shadow mode, is refused — the next test)
    const lines = [
      JSON.stringify({ method: 'GET', path: '/projects', query: { fields: 'id,title', limit: '2' }, headers: { authorization: `Bearer ${LEGACY_TOKEN}` } }),
      JSON.stringify({ method: 'GET', path: '/projects', query: 'limit=1&fields=id', headers: { authorization: `Bearer ${LEGACY_TOKEN}` } }),
      JSON.stringify({ method: 'POST', path: '/renders', body: {}, headers: { authorization: `Bearer ${LEGACY_TOKEN}` } }),
    ];
    const dir = mkdtempSync(join(tmpdir(), 'replay-'));
    writeFileSync(join(dir, 'requests.jsonl'), lines.join('\n'));
    const opts = { legacyUrl: legacy.url, gatewayUrl: base, gatewayToken: staticToken, threshold: 0.2 };
    const clean = await replay(lines, opts, gw.deps.comparator, gw.deps.compareStore);
    expect(clean.exitCode).toBe(0);
    expect(clean.skipped).toBe(1); // the write was not replayed
    await gw.deps.compareStore.clear();
    legacy.plants.push((url, body) => { if (url.startsWith('/projects') && Array.isArray(body?.data)) body.data[0].title = 'drifted'; });
    const gated = await replay(lines, opts, gw.deps.comparator, gw.deps.compareStore);
    expect(gated.exitCode).toBe(1);
    expect(gated.failing).toEqual(['GET /projects']);
    // a gateway token the gateway refuses stops the replay with a clear error instead of reporting 100 % differences
    await expect(replay(lines, { ...opts, gatewayToken: 'not-a-gateway-token' }, gw.deps.comparator, gw.deps.compareStore))
      .rejects.toThrow(/the gateway refused --gateway-token \(401 on GET \/projects\)/);
    // the command line: its exit code is the gate
    // (asynchronous: the gateway it talks to runs in this process)
    const cli = (threshold: string) => new Promise<{ status: number | null; stdout: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'replay', join(dir, 'requests.jsonl'), '--legacy', legacy.url, '--gateway', base, '--gateway-token', staticToken, '--threshold', threshold], {
        env: { ...process.env, ...TEST_ENV, V1_BASE_URL: gw.s.url, DATABASE_URL: gw.config.DATABASE_URL },
      });
      let stdout = '';
      child.stdout.on('data', (d) => { stdout += d; });
      child.stderr.on('data', (d) => { stdout += d; });
      child.on('exit', (status) => resolve({ status, stdout }));
    });
    const failing = await cli('0.2');
    expect(failing.stdout).toMatch(/FAIL: over 20\.0 %: GET \/projects/);
    expect(failing.status).toBe(1);
    legacy.plants.length = 0;
    const passing = await cli('0.2');
    expect(passing.stdout).toMatch(/OK: every route/);
    expect(passing.status).toBe(0);
  });

  it('refuses a route whose mode makes both sides the legacy system (shadow, proxy, or one URL): no false green gate', async () => {
    const recorded = [
      JSON.stringify({ method: 'GET', path: '/projects', query: 'limit=1&fields=id', headers: { authorization: `Bearer ${LEGACY_TOKEN}` } }),
      JSON.stringify({ method: 'GET', path: '/items/renders', query: 'limit=2&fields=id,title', headers: { authorization: `Bearer ${LEGACY_TOKEN}` } }),
    ];
    const opts = { legacyUrl: legacy.url, gatewayUrl: base, gatewayToken: staticToken, threshold: 0.2 };
    const e = await replay(recorded, opts, gw.deps.comparator, gw.deps.compareStore).then(() => undefined, (x: unknown) => x as Error);
    expect(e).toBeInstanceOf(ReplayModeError);
    expect(e!.message).toMatch(/^the gateway answered GET \/items\/renders from the legacy side \(X-Gateway-Answered-By: legacy: its ROUTE_MODES puts \/renders in proxy or shadow mode\)/);
    await expect(replay(recorded, { ...opts, gatewayUrl: `${legacy.url}/` }, gw.deps.comparator, gw.deps.compareStore)).rejects.toThrow(/--legacy and --gateway are one server/);
    // the command line: one line on stderr, exit 78 (the gateway's configuration), never a gate result
    const dir = mkdtempSync(join(tmpdir(), 'replay-mode-'));
    writeFileSync(join(dir, 'requests.jsonl'), recorded.join('\n'));
    const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'replay', join(dir, 'requests.jsonl'), '--legacy', legacy.url, '--gateway', base, '--gateway-token', staticToken], {
        env: { ...process.env, ...TEST_ENV, V1_BASE_URL: gw.s.url, DATABASE_URL: gw.config.DATABASE_URL },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => { stdout += d; });
      child.stderr.on('data', (d) => { stderr += d; });
      child.on('exit', (status) => resolve({ status, stdout, stderr }));
    });
    expect(r.status).toBe(78);
    expect(r.stdout).not.toMatch(/OK: every route/);
    expect(r.stderr).toMatch(/^replay refused: the gateway answered GET \/items\/renders from the legacy side .*\n$/);
  });
});

describe('usage ledger', () => {
  it('counts calls per legacy route and per user or static token, for operators only', async () => {
    await gw.get('/projects?limit=1', staticToken);
    await gw.get('/projects?limit=1', staticToken);
    expect((await gw.get('/_gateway/usage', staticToken)).status).toBe(403);
    const usage = (await gw.get('/_gateway/usage', TEST_ENV.GATEWAY_ADMIN_TOKEN)).body.data;
    const row = usage.find((u: any) => u.route === 'GET /projects' && u.principal_kind === 'static');
    expect(row.count).toBeGreaterThanOrEqual(2);
    expect(row.last_seen).toMatch(/^\d{4}-/);
    expect(usage.some((u: any) => u.route === 'GET /renders' && u.principal_kind === 'legacy')).toBe(true);
  });
});

describe('proxy mode', () => {
  it('passes a route through to the legacy backend with @fastify/http-proxy, tokens as they are', async () => {
    const px = await startGateway({ ROUTE_MODES: JSON.stringify({ '/templates': 'proxy' }), LEGACY_BASE_URL: legacy.url });
    try {
      const res = await px.app.inject({ method: 'GET', url: '/templates?limit=2&fields=id,title', headers: { authorization: `Bearer ${LEGACY_TOKEN}` } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-legacy']).toBe('yes');
      expect(res.body).toBe(legacy.sent.at(-1)!.raw);
      const denied = await px.app.inject({ method: 'GET', url: '/templates', headers: { authorization: 'Bearer nope' } });
      expect(denied.statusCode).toBe(401); // the legacy backend's own answer
      // other routes are still translated
      expect((await px.get('/renders?limit=1')).status).toBe(403);
      expect(res.headers['x-gateway-answered-by']).toBe('legacy');
      expect((await px.get('/renders?limit=1')).headers['x-gateway-answered-by']).toBe('gateway');
      // the legacy side checks these tokens: many at once from one address are not the gateway's to refuse (a proxied
      // route's request has no principal here, and is not one sent without a login)
      const { ANONYMOUS_IN_FLIGHT } = await import('../../src/http/anonymous-gate.js');
      const many = await Promise.all(Array.from({ length: ANONYMOUS_IN_FLIGHT + 16 }, () =>
        px.app.inject({ method: 'GET', url: '/templates?limit=1&fields=id', headers: { authorization: `Bearer ${LEGACY_TOKEN}` } })));
      expect(many.map((r) => r.statusCode).filter((c) => c !== 200)).toEqual([]);
    } finally { await px.close(); }
  });
});

describe('who answered, when a mode answers from its own hook', () => {
  it('a shadowed route whose legacy side is down is answered by the gateway (an error), and says so', async () => {
    const down = await startGateway({ ROUTE_MODES: JSON.stringify({ '/renders': 'shadow' }), LEGACY_BASE_URL: 'http://127.0.0.1:9', COMPARE_TIMEOUT_MS: '200' });
    try {
      const res = await down.app.inject({ method: 'GET', url: '/renders?limit=1', headers: { authorization: `Bearer ${LEGACY_TOKEN}` } });
      expect(res.statusCode).toBeGreaterThanOrEqual(500);
      expect(res.json().errors[0].extensions.code).toBeTypeOf('string');
      expect(res.headers['x-gateway-answered-by']).toBe('gateway');
      expect(res.headers['x-request-id']).toBeTypeOf('string');
    } finally { await down.close(); }
  });

  it('a CORS preflight (answered by the CORS hook) carries the request id and says gateway', async () => {
    const cors = await startGateway({ CORS_ENABLED: 'true', CORS_ORIGIN: 'http://app.example' });
    try {
      const res = await cors.app.inject({
        method: 'OPTIONS', url: '/renders', headers: { origin: 'http://app.example', 'access-control-request-method': 'GET' },
      });
      expect(res.statusCode).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe('http://app.example');
      expect(res.headers['x-gateway-answered-by']).toBe('gateway');
      expect(res.headers['x-request-id']).toBeTypeOf('string');
    } finally { await cors.close(); }
  });
});
