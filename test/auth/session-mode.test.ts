import { aggregate, authentication, createDirectus, createItem, readItem, readItems, readMe, rest, updateItem } from '@directus/sdk';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';

/**
 * Directus 10.10's session mode: `mode: "session"` on login, refresh and logout, the access token in the
 * `directus_session_token` cookie (it carries its session; it lives SESSION_COOKIE_TTL, the answer's `expires`), reads
 * authenticated by that cookie when nothing else carries a token. Driven over HTTP and with the SDK 18's
 * authentication('session') behind a cookie jar (Node's fetch keeps none, a browser does).
 */
const SDK_MAJOR = Number((JSON.parse(readFileSync(createRequire(import.meta.url).resolve('@directus/sdk/package.json'), 'utf8')) as { version: string }).version.split('.')[0]);
const sdkLogin = (client: any, email: string, password: string) => (SDK_MAJOR >= 20 ? client.login({ email, password }) : client.login(email, password));
const DAY = 86_400_000;

/** A fetch with a cookie jar (what a browser does with `credentials: 'include'`): Set-Cookie kept, Cookie sent. */
function jarFetch(): { fetch: typeof fetch; jar: Map<string, string>; sent: string[] } {
  const jar = new Map<string, string>();
  const sent: string[] = [];
  const f: typeof fetch = async (input, init = {}) => {
    const headers = new Headers(init.headers);
    if (jar.size > 0) headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
    sent.push(headers.get('cookie') ?? '');
    const res = await fetch(input, { ...init, headers });
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';');
      const [k, v] = [pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1)];
      if (attrs.some((a) => /^\s*Max-Age=0$/i.test(a)) || v === '') jar.delete(k);
      else jar.set(k, v);
    }
    return res;
  };
  return { fetch: f, jar, sent };
}

const code = (r: { json(): any }) => r.json().errors[0].extensions.code;

describe('session mode over HTTP', () => {
  let gw: TestGateway;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    gw = await startGateway({ SESSION_COOKIE_TTL: '1d' }, {}, { clock });
    await gw.addUser(0, 'sess@example.com', 'session-password-1');
  });
  afterAll(async () => gw.close());

  const login = () => gw.app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'sess@example.com', password: 'session-password-1', mode: 'session' } });
  const cookieOf = (r: { headers: Record<string, unknown> }) => {
    const all = ([] as string[]).concat((r.headers['set-cookie'] as string | string[] | undefined) ?? []);
    return all.find((c) => c.startsWith('directus_session_token='));
  };
  const tokenOf = (setCookie: string) => setCookie.slice('directus_session_token='.length, setCookie.indexOf(';'));

  it('login answers only expires and sets the token in an httpOnly cookie (Directus 10.10)', async () => {
    const r = await login();
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ data: { expires: DAY } });
    const c = cookieOf(r)!;
    expect(c).toMatch(/^directus_session_token=[\w-]+\.[\w-]+\.[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=86400; Expires=/);
    expect(c).not.toMatch(/Secure/);
    // the token carries its session and lives a day
    const claims = JSON.parse(Buffer.from(tokenOf(c).split('.')[1]!, 'base64url').toString());
    expect(claims).toMatchObject({ iss: 'directus', app_access: true, admin_access: false });
    expect(typeof claims.session).toBe('string');
    expect(claims.exp - claims.iat).toBe(86_400);
  });

  it('reads are authenticated by the cookie when nothing else carries a token; a header wins over it', async () => {
    const cookie = `directus_session_token=${tokenOf(cookieOf(await login())!)}`;
    const me = await gw.app.inject({ method: 'GET', url: '/users/me?fields=email', headers: { cookie } });
    expect(me.statusCode).toBe(200);
    expect(me.json().data.email).toBe('sess@example.com');
    const list = await gw.app.inject({ method: 'SEARCH', url: '/items/templates', headers: { cookie }, payload: { query: { limit: 1, fields: ['id'] } } });
    expect(list.statusCode).toBe(200);
    const other = await gw.app.inject({ method: 'GET', url: '/users/me', headers: { cookie, authorization: 'Bearer not-a-known-token' } });
    expect(other.statusCode).toBe(401); // the bearer was used, not the cookie
    expect((await gw.app.inject({ method: 'GET', url: '/users/me', headers: { cookie: 'directus_session_token=garbage' } })).statusCode).toBe(401);
    // another cookie name is no carrier
    expect((await gw.app.inject({ method: 'GET', url: '/renders?limit=1', headers: { cookie: cookie.replace('session_token', 'other') } })).statusCode).toBe(403);
  });

  it('refresh with mode session rotates the session and sets a new cookie; the old cookie is good for the grace period only', async () => {
    const first = cookieOf(await login())!;
    const cookie = `directus_session_token=${tokenOf(first)}`;
    clock.advance(1000);
    const r = await gw.app.inject({ method: 'POST', url: '/auth/refresh', headers: { cookie }, payload: { mode: 'session' } });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ data: { expires: DAY } });
    const next = cookieOf(r)!;
    expect(tokenOf(next)).not.toBe(tokenOf(first));
    const claims = (c: string) => JSON.parse(Buffer.from(tokenOf(c).split('.')[1]!, 'base64url').toString());
    expect(claims(next).session).not.toBe(claims(first).session);
    // SESSION_REFRESH_GRACE_PERIOD (10 s, as Directus 10.10): a read in flight and a second refresh with the old cookie
    // still work — a browser tab's concurrent refreshes do not end the session
    expect((await gw.app.inject({ method: 'GET', url: '/users/me?fields=email', headers: { cookie } })).statusCode).toBe(200);
    const concurrent = await gw.app.inject({ method: 'POST', url: '/auth/refresh', headers: { cookie }, payload: { mode: 'session' } });
    expect(concurrent.statusCode).toBe(200);
    const sibling = `directus_session_token=${tokenOf(cookieOf(concurrent)!)}`;
    expect(claims(cookieOf(concurrent)!).session).toBe(claims(next).session); // the same successor (Directus 10.10), not a second chain
    expect((await gw.app.inject({ method: 'GET', url: '/users/me?fields=email', headers: { cookie: `directus_session_token=${tokenOf(next)}` } })).statusCode)
      .toBe(200);
    clock.advance(10_000);
    expect((await gw.app.inject({ method: 'GET', url: '/users/me?fields=email', headers: { cookie } })).statusCode).toBe(401);
    const again = await gw.app.inject({ method: 'POST', url: '/auth/refresh', headers: { cookie }, payload: { mode: 'session' } });
    expect(again.statusCode).toBe(401);
    expect(code(again)).toBe('INVALID_CREDENTIALS');
    // past the grace period that was reuse: the session is ended, its newer cookies too
    expect((await gw.app.inject({ method: 'GET', url: '/users/me?fields=email', headers: { cookie: sibling } })).statusCode).toBe(401);
    // without the cookie: the refresh token is missing
    const none = await gw.app.inject({ method: 'POST', url: '/auth/refresh', payload: { mode: 'session' } });
    expect(none.statusCode).toBe(400);
    expect(code(none)).toBe('INVALID_PAYLOAD');
  });

  it('an expired session cookie neither reads nor refreshes (401 TOKEN_EXPIRED, as Directus verifies it)', async () => {
    const cookie = `directus_session_token=${tokenOf(cookieOf(await login())!)}`;
    clock.advance(DAY + 1000);
    const read = await gw.app.inject({ method: 'GET', url: '/users/me', headers: { cookie } });
    expect(read.statusCode).toBe(401);
    expect(code(read)).toBe('TOKEN_EXPIRED');
    const refresh = await gw.app.inject({ method: 'POST', url: '/auth/refresh', headers: { cookie }, payload: { mode: 'session' } });
    expect(refresh.statusCode).toBe(401);
    expect(code(refresh)).toBe('TOKEN_EXPIRED');
  });

  it('logout with mode session ends the session and clears the cookie', async () => {
    const cookie = `directus_session_token=${tokenOf(cookieOf(await login())!)}`;
    const logout = vi.spyOn(gw.deps.sessions, 'logout');
    const out = await gw.app.inject({ method: 'POST', url: '/auth/logout', headers: { cookie }, payload: { mode: 'session' } });
    expect(out.statusCode).toBe(204);
    expect(logout).toHaveBeenCalledOnce();
    expect(cookieOf(out)).toMatch(/^directus_session_token=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0/);
    const refresh = await gw.app.inject({ method: 'POST', url: '/auth/refresh', headers: { cookie }, payload: { mode: 'session' } });
    expect(refresh.statusCode).toBe(401);
  });

  it('takes its cookie attributes from SESSION_COOKIE_* and refuses an unknown mode', async () => {
    const other = await startGateway({ SESSION_COOKIE_NAME: 'sid', SESSION_COOKIE_SECURE: 'true', SESSION_COOKIE_SAME_SITE: 'strict', SESSION_COOKIE_DOMAIN: 'example.com' });
    try {
      await other.addUser(0, 'sess@example.com', 'session-password-1');
      const r = await other.app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'sess@example.com', password: 'session-password-1', mode: 'session' } });
      expect(String(r.headers['set-cookie'])).toMatch(/^sid=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=86400; Expires=[^;]+; Domain=example\.com; Secure$/);
      const bad = await other.app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'sess@example.com', password: 'session-password-1', mode: 'nope' } });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().errors[0].message).toBe('Invalid payload. "mode" must be one of [json, cookie, session].');
    } finally { await other.close(); }
  });
});

describe("the Directus SDK with authentication('session')", () => {
  let gw: TestGateway;
  let base = '';
  beforeAll(async () => {
    gw = await startGateway();
    await gw.addUser(0, 'sdk-session@example.com', 'sdk-password-123');
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => gw.close());

  it('logs in, reads, writes, refreshes and logs out with the cookie only', async () => {
    const { fetch: f, jar } = jarFetch();
    const client = createDirectus<any>(base, { globals: { fetch: f } }).with(authentication('session', { credentials: 'include', autoRefresh: false })).with(rest({ credentials: 'include' }));
    const auth = await sdkLogin(client, 'sdk-session@example.com', 'sdk-password-123');
    expect(auth.expires).toBe(DAY);
    expect(auth.access_token ?? null).toBeNull();
    expect(jar.has('directus_session_token')).toBe(true);
    const token = jar.get('directus_session_token')!;
    expect(await client.request(readMe({ fields: ['email'] }))).toEqual({ email: 'sdk-session@example.com' });
    // the flows of the json-mode SDK test, on the cookie alone
    const list = await client.request(readItems('renders', { fields: ['id', 'title', 'status'], filter: { status: { _eq: 'complete' } }, sort: ['-date_created'], limit: 3 }));
    expect(list).toEqual((await gw.get('/renders?fields=id,title,status&filter[status][_eq]=complete&sort=-date_created&limit=3', token)).body.data);
    expect(list.length).toBe(3);
    const one = await client.request(readItem('renders', list[0]!.id, { fields: ['id', 'project.title'] }));
    expect(one).toEqual((await gw.get(`/renders/${list[0]!.id}?fields=id,project.title`, token)).body.data);
    const counts = await client.request(aggregate('renders', { aggregate: { count: '*' }, groupBy: ['status'] }));
    expect(counts).toEqual((await gw.get('/renders?aggregate[count]=*&groupBy=status', token)).body.data);
    const project = (await client.request(readItems('projects', { fields: ['id', 'account'], limit: 1 })))[0]!;
    const created = await client.request(createItem('renders', { project: project.id, account: project.account, data: { title: 'From a session' } }));
    expect(created).toMatchObject({ title: 'From a session', project: project.id });
    const renamed = await client.request(updateItem('projects', project.id, { title: 'Renamed in a session' }));
    expect(renamed.title).toBe('Renamed in a session');
    await client.refresh();
    expect(jar.get('directus_session_token')).not.toBe(token);
    expect(await client.request(readMe({ fields: ['email'] }))).toEqual({ email: 'sdk-session@example.com' });
    await client.logout();
    expect(jar.has('directus_session_token')).toBe(false);
    await expect(client.request(readMe())).rejects.toMatchObject({ response: { status: 401 } });
    const usage = (await gw.get('/_gateway/usage', TEST_ENV.GATEWAY_ADMIN_TOKEN)).body.data.map((u: { route: string }) => u.route);
    expect(usage).toEqual(expect.arrayContaining(['GET /items/renders', 'POST /items/renders', 'GET /users/me']));
  });
});
