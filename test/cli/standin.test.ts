import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStandin } from '../../src/cli/standin.js';
import { derivedUuid } from '../../src/translate/ids.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';

/** The runnable legacy stand-in, with a gateway in shadow mode (/renders) and compare mode (/projects) in front of it. */
let gw: TestGateway;
let modes: TestGateway;
let standin: { url: string; close(): Promise<void> };
beforeAll(async () => {
  gw = await startGateway();
  await gw.addUser(0, 'ann@example.com');
  standin = await startStandin(gw.deps, 0);
  modes = await startGateway({
    ROUTE_MODES: JSON.stringify({ '/renders': 'shadow', '/projects': 'compare' }), LEGACY_BASE_URL: standin.url, DATABASE_URL: gw.config.DATABASE_URL,
  }, {}, { sim: gw.s });
});
afterAll(async () => { await modes?.close(); await standin?.close(); await gw?.close(); });

const report = async () => (await modes.get('/_gateway/compare', TEST_ENV.GATEWAY_ADMIN_TOKEN)).body.data.routes as any[];

describe('legacy-gateway legacy-standin', () => {
  it('answers as the old system (its own uuids), and the modes in front of it find no difference but the noise', async () => {
    const login = await fetch(`${standin.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ann@example.com', password: 'correct horse battery' }) });
    expect(login.status).toBe(200);
    const token = ((await login.json()) as any).data.access_token as string;
    // the old system hands its own uuids to the id map when it first answers; the gateway in front hears them on the
    // change bus (SQLite: a poll). Asked once first and heard, so the comparison of the shadow read is not a race against
    // the poll (renders sharing a created_at are ordered by their uuids: the derived ones order them otherwise)
    await fetch(`${standin.url}/renders?limit=3&fields=id,title,status`, { headers: { authorization: `Bearer ${token}` } });
    await modes.deps.ids.load();
    const shadow = await modes.get('/renders?limit=3&fields=id,title,status', token);
    expect(shadow.status).toBe(200);
    expect(shadow.headers['x-gateway-answered-by']).toBe('legacy');
    const translated = await gw.get('/renders?limit=3&fields=id,title,status', token);
    expect(shadow.body.data.map((r: any) => r.title)).toEqual(translated.body.data.map((r: any) => r.title));
    // the old system's own uuids, handed to the gateway's id map (imported pairs win: the gateway now answers with them too)
    const v1 = await gw.deps.ids.toV1('render', shadow.body.data[0].id);
    expect(v1).toMatch(/^rend_/);
    expect(shadow.body.data[0].id).not.toBe(derivedUuid('render', v1!));
    expect(translated.body.data[0].id).toBe(shadow.body.data[0].id);
    const compared = await modes.get('/projects?limit=3&fields=id,title', token);
    expect(compared.headers['x-gateway-answered-by']).toBe('gateway');
    await modes.app.comparisonsIdle();
    const routes = await report();
    for (const name of ['GET /renders', 'GET /projects']) {
      const r = routes.find((x) => x.route === name);
      expect(r?.total, name).toBeGreaterThanOrEqual(1);
      expect(r.differing, name).toBe(0);
    }
  });

  it('answers what a Directus client also asks: /server/ping as text, SEARCH as a read (not a recorded write)', async () => {
    const ping = await fetch(`${standin.url}/server/ping`);
    expect(ping.status).toBe(200);
    expect(await ping.text()).toBe('pong');
    const login = await fetch(`${standin.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ann@example.com', password: 'correct horse battery' }) });
    const token = ((await login.json()) as any).data.access_token as string;
    const searched = await fetch(`${standin.url}/templates`, {
      method: 'SEARCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ query: { limit: 2, fields: ['id', 'title'] } }),
    });
    expect(searched.status).toBe(200);
    const body = (await searched.json()) as any;
    expect(body.data).toHaveLength(2);
    expect(Object.keys(body.data[0]).sort()).toEqual(['id', 'title']);
  });
});
