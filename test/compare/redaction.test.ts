import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportLink } from '../../src/compare/links.js';
import { openDb } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';
import { startLegacyBackend, type LegacyBackend } from '../helpers/legacy-backend.js';

/**
 * Comparison records hold no credential: every token form the gateway accepts, sent in the ways clients send them,
 * is looked for in the report's JSON, its HTML page and the read-only linked page (and its JSON); stored samples from
 * before are redacted by a migration. The report pages carry a Content-Security-Policy that lets only their own
 * style and script run.
 */
let ref: TestGateway;
let gw: TestGateway;
let legacy: LegacyBackend;
let base: string;
let staticToken: string;
let jwt: string;
let refreshToken: string;
const LEGACY_TOKEN = 'legacy-token-of-bea';
const tokens: Record<string, string> = { [LEGACY_TOKEN]: 'bea@example.com' };

beforeAll(async () => {
  ref = await startGateway();
  await ref.addUser(0, 'bea@example.com');
  const refToken = await ref.login('bea@example.com');
  legacy = await startLegacyBackend(ref, refToken, () => gw, tokens);
  gw = await startGateway({ ROUTE_MODES: JSON.stringify({ '/renders': 'shadow', '/projects': 'compare' }), LEGACY_BASE_URL: legacy.url, COMPARE_SAMPLE_RATE: '1' });
  await gw.addUser(0, 'bea@example.com');
  staticToken = (await gw.deps.users.createStaticToken((await gw.deps.users.byEmail('bea@example.com'))!.id, 'shared with legacy')).token;
  tokens[staticToken] = 'bea@example.com';
  const login = await gw.app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'bea@example.com', password: 'correct horse battery' } });
  jwt = login.json().data.access_token;
  refreshToken = login.json().data.refresh_token;
  tokens[jwt] = 'bea@example.com';
  base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => { await gw.close(); await legacy.close(); await ref.close(); });

const secrets = () => [staticToken, jwt, refreshToken, encodeURIComponent(staticToken), encodeURIComponent(jwt)];

describe('comparison records without credentials', () => {
  it('keep the query with every credential parameter redacted, in any spelling, and no token in a sample value', async () => {
    // the legacy side answers with tokens in its body: a differing field named token, and a JWT inside a title
    legacy.plants.push((_url, body) => {
      if (!Array.isArray(body?.data)) return;
      body.data[0].title = `changed ${jwt}`;
      body.data[0].token = staticToken;
      body.data[0].meta = { refresh_token: refreshToken, note: `Bearer ${staticToken}` };
    });
    const urls = [
      `/renders?limit=2&fields=id,title&access_token=${encodeURIComponent(staticToken)}`,
      `/renders?limit=2&fields=id,title&%61ccess_token=${encodeURIComponent(staticToken)}`,
      `/renders?limit=2&fields=id,title&ACCESS_TOKEN=${encodeURIComponent(staticToken)}&access_token=${encodeURIComponent(staticToken)}`,
      `/renders?limit=2&fields=id,title&access_token=${jwt}`,
      `/renders?limit=2&fields=id,title&filter[title][_neq]=${jwt}&access_token=${encodeURIComponent(staticToken)}`,
      `/projects?limit=2&fields=id,title&access_token=${encodeURIComponent(staticToken)}`,
      `/projects?limit=2&fields=id,title&access_token=${jwt}`,
    ];
    for (const u of urls) expect((await fetch(`${base}${u}`)).status).toBe(200);
    await gw.app.comparisonsIdle();

    const json = JSON.stringify((await gw.get('/_gateway/compare', TEST_ENV.GATEWAY_ADMIN_TOKEN)).body);
    const html = await gw.app.inject({ method: 'GET', url: '/_gateway/compare.html', headers: { authorization: `Bearer ${TEST_ENV.GATEWAY_ADMIN_TOKEN}` } });
    const link = reportLink(TEST_ENV.GATEWAY_ADMIN_TOKEN, gw.deps.clock.now(), 60_000);
    const view = await fetch(`${base}/_gateway/compare/view?link=${encodeURIComponent(link)}`);
    const viewText = await view.text();
    const viewJson = await (await fetch(`${base}/_gateway/compare/view.json?link=${encodeURIComponent(link)}`)).text();
    expect(json).toContain('access_token=[Redacted]');
    expect(json).toContain('data[].token');
    expect(json).toContain('changed [Redacted]');
    for (const page of [json, html.body, viewText, viewJson]) {
      for (const s of secrets()) expect(page).not.toContain(s);
    }
  });

  it('compares only requests the gateway authenticated (refusals compared to refusals would flood a route towards 0 %)', async () => {
    await gw.app.inject({ method: 'DELETE', url: '/_gateway/compare', headers: { authorization: `Bearer ${TEST_ENV.GATEWAY_ADMIN_TOKEN}` } });
    const sentBefore = legacy.sent.length;
    for (let i = 0; i < 5; i++) expect((await fetch(`${base}/projects?anon=${i}`)).status).toBe(403);
    expect((await fetch(`${base}/projects?limit=1&fields=id&access_token=${encodeURIComponent(staticToken)}`)).status).toBe(200);
    await gw.app.comparisonsIdle();
    const routes = (await gw.get('/_gateway/compare', TEST_ENV.GATEWAY_ADMIN_TOKEN)).body.data.routes as { route: string; total: number }[];
    expect(routes.find((r) => r.route === 'GET /projects')?.total).toBe(1);
    expect(legacy.sent.length - sentBefore).toBeLessThanOrEqual(2); // the authenticated one (and its noise repeat) only
  });

  it('the report pages carry a Content-Security-Policy under which their own style and refresher still run', async () => {
    const html = await gw.app.inject({ method: 'GET', url: '/_gateway/compare.html', headers: { authorization: `Bearer ${TEST_ENV.GATEWAY_ADMIN_TOKEN}` } });
    expect(html.headers['content-security-policy']).toMatch(/default-src 'none'.*script-src 'none'/);
    const link = reportLink(TEST_ENV.GATEWAY_ADMIN_TOKEN, gw.deps.clock.now(), 600_000);
    const exe = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
    expect(exe, 'Debian chromium is installed (.ci/run installs it)').toBeDefined();
    const browser = await chromium.launch({ executablePath: exe!, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync'] });
    try {
      const page = await browser.newPage();
      const violations: string[] = [];
      page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) violations.push(m.text()); });
      const res = await page.goto(`${base}/_gateway/compare/view?link=${encodeURIComponent(link)}`);
      expect(res!.headers()['content-security-policy']).toMatch(/script-src 'sha256-/);
      // the page's own style applies (a hash mismatch would leave the table without its collapsed borders)
      expect(await page.evaluate('getComputedStyle(document.querySelector("table#routes")).borderCollapse')).toBe('collapse');
      // an injected script would not run: the policy names no inline script but the refresher's hash
      const injected = 'const s = document.createElement("script"); s.textContent = "window.__x = 1"; document.body.append(s); window.__x';
      expect(await page.evaluate(injected)).toBeUndefined();
      expect(violations.some((v) => /script/i.test(v))).toBe(true); // that refusal, and no other
      expect(violations.filter((v) => !/inline script/i.test(v))).toEqual([]);
    } finally { await browser.close(); }
  });

  it('a migration redacts samples stored before (the request line and the values)', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'gw-redact-')), 'store.db');
    const db = await openDb(file);
    try {
      await migrate(db.kysely, '0009_index_head_marks');
      await db.kysely.insertInto('compare_samples').values({
        id: 'sample-1', route: 'GET /renders', path: 'data[].token', kind: 'changed', legacy: JSON.stringify('legacy-static-token-value'),
        translated: JSON.stringify(`x Bearer ${jwt}`), request: `GET /renders?limit=1&access_token=legacy-static-token-value`, created_at: 1,
      } as never).execute();
      await db.kysely.insertInto('compare_samples').values({
        id: 'sample-2', route: 'GET /renders', path: 'data[].title', kind: 'changed', legacy: JSON.stringify(`t ${jwt}`),
        translated: JSON.stringify('plain'), request: `GET /renders?%61ccess_token=${jwt}`, created_at: 2,
      } as never).execute();
      expect(await migrate(db.kysely)).toContain('0010_compare_samples_redacted');
      const rows = await db.kysely.selectFrom('compare_samples').selectAll().orderBy('created_at').execute();
      const all = JSON.stringify(rows);
      expect(all).not.toContain('legacy-static-token-value');
      expect(all).not.toContain(jwt);
      expect(rows[0]!.legacy).toBe('"[Redacted]"');
      expect(rows[1]!.translated).toBe('"plain"');
      expect(rows[1]!.request).toBe('GET /renders?%61ccess_token=[Redacted]');
    } finally {
      await db.close();
    }
  });
});
