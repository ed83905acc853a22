import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MigrationReport } from '../../src/migrate/report.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';
import { startLegacyBackend, type LegacyBackend } from '../helpers/legacy-backend.js';

/** Comparison records carry the client: the migration report shows a diff rate per client and shape (compare and shadow modes). */
let ref: TestGateway;
let gw: TestGateway;
let legacy: LegacyBackend;
let base: string;
let staticToken: string;
let tokenId: string;
let ann: string;
const LEGACY_TOKEN = 'legacy-token-of-ann';
const tokens: Record<string, string> = { [LEGACY_TOKEN]: 'ann@example.com' };

beforeAll(async () => {
  ref = await startGateway();
  await ref.addUser(0, 'ann@example.com');
  legacy = await startLegacyBackend(ref, await ref.login('ann@example.com'), () => gw, tokens);
  gw = await startGateway({ ROUTE_MODES: JSON.stringify({ '/renders': 'shadow', '/projects': 'compare' }), LEGACY_BASE_URL: legacy.url });
  ann = await gw.addUser(0, 'ann@example.com');
  const t = await gw.deps.users.createStaticToken(ann, 'shared with legacy');
  staticToken = t.token;
  tokenId = t.id;
  tokens[staticToken] = 'ann@example.com';
  base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
}, 60_000);
afterAll(async () => { await gw.close(); await legacy.close(); await ref.close(); });

describe('diff rates per client and shape', () => {
  it('counts compared and differing answers per (client, shape), noise aside', async () => {
    const ask = (url: string, token: string, ua: string) => fetch(`${base}${url}`, { headers: { authorization: `Bearer ${token}`, 'user-agent': ua } });
    // compare mode, a static token's curl: two answers alike, then one with a planted difference
    for (let i = 0; i < 2; i++) expect((await ask('/projects?limit=3&fields=id,title', staticToken, 'curl/8.5.0')).status).toBe(200);
    await gw.app.comparisonsIdle();
    legacy.plants.push((url, body) => { if (url.startsWith('/projects') && Array.isArray(body?.data)) body.data[0].title = 'planted'; });
    expect((await ask('/projects?limit=3&fields=id,title', staticToken, 'curl/8.5.0')).status).toBe(200);
    await gw.app.comparisonsIdle();
    legacy.plants.length = 0;
    // shadow mode: the legacy token's user, by its User-Agent family
    for (let i = 0; i < 2; i++) expect((await ask('/renders?limit=3&fields=id,title', LEGACY_TOKEN, 'python-requests/2.31')).status).toBe(200);
    await gw.app.comparisonsIdle();
    await gw.deps.shapes.flush();
    const report = (await gw.get('/_gateway/migrate?prove=false', TEST_ENV.GATEWAY_ADMIN_TOKEN)).body.data as MigrationReport;
    const curl = report.clients.find((c) => c.client === `static:${tokenId}~curl`);
    expect(curl?.shapes.find((s) => s.key === 'GET /projects fields=id,title paging=limit')).toMatchObject({ count: 3, compared: 3 });
    expect(curl?.shapes[0]?.diffRate).toBeCloseTo(1 / 3, 3);
    expect(curl?.diffRate).toBeCloseTo(1 / 3, 3);
    // the comparison's samples name the client too
    const compare = (await gw.get('/_gateway/compare', TEST_ENV.GATEWAY_ADMIN_TOKEN)).body.data;
    const title = compare.routes.find((r: any) => r.route === 'GET /projects').fields.find((f: any) => f.path === 'data[].title');
    expect(title.samples.map((x: any) => x.client)).toEqual([`static:${tokenId}~curl`]);
    const shadowed = report.clients.find((c) => c.client === `user:${ann}~python-requests`);
    expect(shadowed?.shapes.find((s) => s.key === 'GET /renders fields=id,title paging=limit')).toMatchObject({ compared: 2, diffRate: 0 });
  });
});
