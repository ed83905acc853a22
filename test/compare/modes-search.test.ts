import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';

/**
 * SEARCH in the route modes: its question is the body, so the body goes to the legacy side (proxy, shadow, compare) and
 * to the translated side of a shadowed request. The legacy stand-in answers `{"data":[]}` exactly when the body asks for
 * no item (`limit: 0`), and a different answer otherwise: a comparison without differences shows that both sides were
 * asked the body's question (without it, the translated side would list renders).
 */
const LEGACY_TOKEN = 'legacy-token-of-ann';

describe('SEARCH through proxy, shadow and compare modes', () => {
  let legacy: FastifyInstance;
  let legacyUrl = '';
  const seen: { method: string; url: string; body: unknown }[] = [];
  let gw: TestGateway;
  let proxyGw: TestGateway;
  /** Ann's id, the legacy system's (users imported with it). */
  let annId = '';

  beforeAll(async () => {
    legacy = Fastify();
    legacy.addHttpMethod('SEARCH', { hasBody: true });
    legacy.all('/*', async (req) => {
      if (req.url.startsWith('/users/me')) return { data: { id: annId, email: 'ann@example.com' } };
      seen.push({ method: req.method, url: req.url, body: req.body });
      const q = (req.body as { query?: { limit?: number; alias?: object } } | undefined)?.query;
      if (q?.alias) return { data: [{ t9: 'legacy title' }] };
      return q?.limit === 0 ? { data: [] } : { data: [{ id: 'not-what-was-asked' }] };
    });
    legacyUrl = await legacy.listen({ port: 0, host: '127.0.0.1' });
    gw = await startGateway({ ROUTE_MODES: JSON.stringify({ '/renders': 'shadow', '/projects': 'compare' }), LEGACY_BASE_URL: legacyUrl });
    annId = await gw.addUser(0, 'ann@example.com');
    proxyGw = await startGateway({ ROUTE_MODES: JSON.stringify({ '/templates': 'proxy' }), LEGACY_BASE_URL: legacyUrl });
  });
  afterAll(async () => { await gw.close(); await proxyGw.close(); await legacy.close(); });

  const routes = async () => {
    await gw.app.comparisonsIdle();
    return (await gw.get('/_gateway/compare', TEST_ENV.GATEWAY_ADMIN_TOKEN)).body.data.routes as { route: string; total: number; differing: number }[];
  };

  it('shadow: the legacy side answers the body\'s question, and the translated side is asked the same one', async () => {
    seen.length = 0;
    const r = await gw.app.inject({
      method: 'SEARCH', url: '/items/renders', headers: { authorization: `Bearer ${LEGACY_TOKEN}` }, payload: { query: { limit: 0 } },
    });
    expect(r.headers['x-gateway-answered-by']).toBe('legacy');
    expect(r.json()).toEqual({ data: [] });
    expect(seen[0]).toMatchObject({ method: 'SEARCH', url: '/items/renders', body: { query: { limit: 0 } } });
    const row = (await routes()).find((x) => x.route === 'SEARCH /items/renders');
    expect(row).toMatchObject({ total: 1, differing: 0 });
  });

  it('compare: the translated answer is given, and the legacy side gets the body', async () => {
    seen.length = 0;
    const token = await gw.login('ann@example.com');
    const r = await gw.app.inject({ method: 'SEARCH', url: '/projects', headers: { authorization: `Bearer ${token}` }, payload: { query: { limit: 0 } } });
    expect(r.headers['x-gateway-answered-by']).toBe('gateway');
    expect(r.json()).toEqual({ data: [] });
    await gw.app.comparisonsIdle();
    expect(seen.filter((s) => s.method === 'SEARCH')[0]).toMatchObject({ url: '/projects', body: { query: { limit: 0 } } });
    const row = (await routes()).find((x) => x.route === 'SEARCH /projects');
    expect(row).toMatchObject({ total: 1, differing: 0 });
  });

  it('compare: a credential inside a SEARCH body is not kept in the comparison record (its request line)', async () => {
    await gw.app.inject({ method: 'DELETE', url: '/_gateway/compare', headers: { authorization: `Bearer ${TEST_ENV.GATEWAY_ADMIN_TOKEN}` } });
    const token = await gw.login('ann@example.com');
    const payload = { query: { limit: 1, fields: ['id'] }, access_token: 'body-secret-tok', password: 'body-secret-pw', deep: { refresh_token: 'body-secret-rt' } };
    await gw.app.inject({ method: 'SEARCH', url: '/projects', headers: { authorization: `Bearer ${token}` }, payload });
    await gw.app.comparisonsIdle();
    const text = JSON.stringify((await gw.get('/_gateway/compare', TEST_ENV.GATEWAY_ADMIN_TOKEN)).body.data);
    expect(text).toContain('SEARCH /projects');
    for (const secret of ['body-secret-tok', 'body-secret-pw', 'body-secret-rt']) expect(text).not.toContain(secret);
    expect(text).toContain('[Redacted]');
  });

  it('proxy: SEARCH is passed through with its body', async () => {
    seen.length = 0;
    const r = await proxyGw.app.inject({
      method: 'SEARCH', url: '/items/templates', headers: { authorization: `Bearer ${LEGACY_TOKEN}` }, payload: { query: { limit: 0 } },
    });
    expect(r.statusCode).toBe(200);
    expect(r.headers['x-gateway-answered-by']).toBe('legacy');
    expect(seen[0]).toMatchObject({ method: 'SEARCH', url: '/items/templates', body: { query: { limit: 0 } } });
  });

  it('shadow: a field the body reads under an alias is recorded under the field it copies', async () => {
    await gw.app.inject({
      method: 'SEARCH', url: '/renders', headers: { authorization: `Bearer ${LEGACY_TOKEN}` },
      payload: { query: { limit: 1, sort: ['id'], fields: ['t9'], alias: { t9: 'title' } } },
    });
    await gw.app.comparisonsIdle();
    const report = (await gw.get('/_gateway/compare', TEST_ENV.GATEWAY_ADMIN_TOKEN)).body.data;
    const row = report.routes.find((x: { route: string }) => x.route === 'SEARCH /renders');
    expect(row.fields.filter((f: { noise: boolean }) => !f.noise).map((f: { kind: string; path: string }) => `${f.kind} ${f.path}`))
      .toEqual(['value data[].title (alias)']);
  });
});
