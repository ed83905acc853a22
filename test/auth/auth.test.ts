import { SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let annId: string;
beforeAll(async () => {
  gw = await startGateway({ LOGIN_MAX_FAILURES: '3', ACCESS_TOKEN_TTL: '15m' });
  annId = await gw.addUser(0, 'ann@example.com');
  await gw.addUser(4, 'bob@example.com');
});
afterAll(async () => gw.close());

const post = (url: string, payload?: unknown, headers: Record<string, string> = {}) =>
  gw.app.inject({ method: 'POST', url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
const secret = new TextEncoder().encode(TEST_ENV.JWT_SECRET);
const claims = () => ({ id: annId, role: 'r', app_access: true, admin_access: false });

describe('POST /auth/login', () => {
  it('answers 200 {data:{access_token, expires, refresh_token}} with expires in milliseconds', async () => {
    const res = await post('/auth/login', { email: 'ANN@example.com', password: 'correct horse battery' });
    expect(res.statusCode).toBe(200);
    const { data } = res.json();
    expect(Object.keys(data).sort()).toEqual(['access_token', 'expires', 'refresh_token']);
    expect(data.expires).toBe(900_000);
    const [, payload] = data.access_token.split('.');
    const c = JSON.parse(Buffer.from(payload, 'base64url').toString());
    expect(Object.keys(c).sort()).toEqual(['admin_access', 'app_access', 'exp', 'iat', 'id', 'iss', 'role']);
    expect(c).toMatchObject({ id: annId, iss: 'directus', app_access: true, admin_access: false });
    expect(c.exp - c.iat).toBe(900);
  });

  it('sets the refresh token as an httpOnly cookie in cookie mode', async () => {
    const res = await post('/auth/login', { email: 'ann@example.com', password: 'correct horse battery', mode: 'cookie' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.refresh_token).toBeUndefined();
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(/^directus_refresh_token=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800/);
  });

  it.each([
    [{ email: 'ann@example.com', password: 'wrong' }, 401, 'INVALID_CREDENTIALS', 'Invalid user credentials.'],
    [{ email: 'nobody@example.com', password: 'x' }, 401, 'INVALID_CREDENTIALS', 'Invalid user credentials.'],
    [{ email: 'not-an-email', password: 'x' }, 400, 'INVALID_PAYLOAD', 'Invalid payload. "email" must be a valid email.'],
    [{ email: 'ann@example.com' }, 400, 'INVALID_PAYLOAD', 'Invalid payload. "password" is required.'],
    [{ password: 'x' }, 400, 'INVALID_PAYLOAD', 'Invalid payload. "email" is required.'],
    ['[]', 400, 'INVALID_PAYLOAD', undefined],
  ] as const)('%j → %i %s', async (body, status, code, message) => {
    const res = await gw.app.inject({ method: 'POST', url: '/auth/login', headers: { 'content-type': 'application/json' }, payload: typeof body === 'string' ? body : JSON.stringify(body) });
    expect(res.statusCode).toBe(status);
    expect(res.json().errors[0].extensions.code).toBe(code);
    if (message) expect(res.json().errors[0].message).toBe(message);
  });

  it('answers a body over the size limit with 400 INVALID_PAYLOAD (Directus: not 413)', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/auth/login', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email: 'a@b.co', password: 'x'.repeat(2_000_000) }) });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].extensions.code).toBe('INVALID_PAYLOAD');
  });

  it('answers malformed JSON with 400 INVALID_PAYLOAD, not 500', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/auth/login', headers: { 'content-type': 'application/json' }, payload: '{"email":' });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].extensions.code).toBe('INVALID_PAYLOAD');
  });

  it('rate-limits repeated failures per account with 429 REQUESTS_EXCEEDED and Retry-After', async () => {
    const email = 'bob@example.com';
    for (let i = 0; i < 3; i++) expect((await post('/auth/login', { email, password: 'bad' })).statusCode).toBe(401);
    const limited = await post('/auth/login', { email, password: 'correct horse battery' });
    expect(limited.statusCode).toBe(429);
    expect(limited.json().errors[0].extensions.code).toBe('REQUESTS_EXCEEDED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // another account is not affected
    expect((await post('/auth/login', { email: 'ann@example.com', password: 'correct horse battery' })).statusCode).toBe(200);
  });
});

describe('rate limit per client address', () => {
  it('refuses a client address that fails across many accounts', async () => {
    const rl = await startGateway({ LOGIN_MAX_FAILURES: '2' }); // per address: 4 × 2
    try {
      await rl.addUser(0, 'z@example.com');
      for (let i = 0; i < 8; i++) {
        const r = await rl.app.inject({ method: 'POST', url: '/auth/login', payload: { email: `nobody${i}@example.com`, password: 'x' }, remoteAddress: '203.0.113.7' });
        expect(r.statusCode).toBe(401);
      }
      const limited = await rl.app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'z@example.com', password: 'correct horse battery' }, remoteAddress: '203.0.113.7' });
      expect(limited.statusCode).toBe(429);
      const elsewhere = await rl.app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'z@example.com', password: 'correct horse battery' }, remoteAddress: '198.51.100.1' });
      expect(elsewhere.statusCode).toBe(200);
    } finally { await rl.close(); }
  });
});

describe('every login answer takes the same minimum time', () => {
  it('pads success, wrong password and unknown email alike', async () => {
    const slow = await startGateway({ LOGIN_STALL_MS: '300' });
    try {
      await slow.addUser(0, 'c@example.com');
      for (const body of [{ email: 'c@example.com', password: 'correct horse battery' }, { email: 'c@example.com', password: 'no' }, { email: 'zz@example.com', password: 'no' }]) {
        const t = performance.now();
        await slow.app.inject({ method: 'POST', url: '/auth/login', payload: body });
        expect(performance.now() - t).toBeGreaterThanOrEqual(295);
      }
    } finally { await slow.close(); }
  });
});

describe('POST /auth/refresh and /auth/logout', () => {
  it('rotates: the old refresh token stops working at once, and its reuse revokes the session', async () => {
    const login = (await post('/auth/login', { email: 'ann@example.com', password: 'correct horse battery' })).json().data;
    const r1 = await post('/auth/refresh', { refresh_token: login.refresh_token });
    expect(r1.statusCode).toBe(200);
    const next = r1.json().data;
    expect(next.refresh_token).not.toBe(login.refresh_token);
    expect(next.expires).toBe(900_000);
    const reuse = await post('/auth/refresh', { refresh_token: login.refresh_token });
    expect(reuse.statusCode).toBe(401);
    expect(reuse.json().errors[0].extensions.code).toBe('INVALID_CREDENTIALS');
    // reuse detection: the newest token of that session is dead too
    expect((await post('/auth/refresh', { refresh_token: next.refresh_token })).statusCode).toBe(401);
  });

  it('reads the token from the cookie and answers in cookie mode', async () => {
    const login = await post('/auth/login', { email: 'ann@example.com', password: 'correct horse battery', mode: 'cookie' });
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const res = await post('/auth/refresh', {}, { cookie });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.refresh_token).toBeUndefined();
    expect(String(res.headers['set-cookie'])).toMatch(/^directus_refresh_token=/);
  });

  it('requires a token: 400 INVALID_PAYLOAD', async () => {
    const res = await post('/auth/refresh', {});
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].message).toBe('Invalid payload. "refresh_token" is required in either the JSON payload or Cookie.');
    expect(res.json().errors[0].extensions.reason).toBe('"refresh_token" is required in either the JSON payload or Cookie');
    expect((await post('/auth/logout', {})).statusCode).toBe(400);
  });

  it('logout answers 204 with an empty body, also for an unknown token, and ends the session', async () => {
    const login = (await post('/auth/login', { email: 'ann@example.com', password: 'correct horse battery' })).json().data;
    const out = await post('/auth/logout', { refresh_token: login.refresh_token });
    expect(out.statusCode).toBe(204);
    expect(out.body).toBe('');
    expect((await post('/auth/refresh', { refresh_token: login.refresh_token })).statusCode).toBe(401);
    const unknown = await post('/auth/logout', { refresh_token: 'never-issued' });
    expect(unknown.statusCode).toBe(204);
    expect(unknown.body).toBe('');
  });
});

describe('access tokens', () => {
  it('accepts Bearer and ?access_token=, the header winning', async () => {
    const t = await gw.login('ann@example.com');
    expect((await gw.get('/users/me', t)).body.data.email).toBe('ann@example.com');
    expect((await gw.get(`/users/me?access_token=${t}`)).body.data.email).toBe('ann@example.com');
    const res = await gw.get(`/users/me?access_token=garbage`, t);
    expect(res.status).toBe(200);
    // two valid tokens of two users: the header's user answers (a user of its own: bob is locked out by the limiter test)
    await gw.addUser(1, 'dora@example.com');
    const other = await gw.login('dora@example.com');
    const both = await gw.get(`/users/me?fields=email&access_token=${other}`, t);
    expect(both.body.data.email).toBe('ann@example.com');
    expect((await gw.get(`/users/me?fields=email&access_token=${t}`, other)).body.data.email).toBe('dora@example.com');
  });

  it.each([
    ['alg none', async () => new UnsecuredJWT({ ...claims() }).setIssuer('directus').setIssuedAt().setExpirationTime('1h').encode()],
    ['a wrong key', async () => new SignJWT(claims()).setProtectedHeader({ alg: 'HS256' }).setIssuer('directus').setIssuedAt().setExpirationTime('1h').sign(new TextEncoder().encode('x'.repeat(40)))],
    ['another algorithm', async () => new SignJWT(claims()).setProtectedHeader({ alg: 'HS512' }).setIssuer('directus').setIssuedAt().setExpirationTime('1h').sign(new TextEncoder().encode(TEST_ENV.JWT_SECRET + TEST_ENV.JWT_SECRET))],
    ['an edited payload', async () => {
      const good = await gw.login('ann@example.com');
      const [h, p, s] = good.split('.');
      const edited = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), admin_access: true })).toString('base64url');
      return `${h}.${edited}.${s}`;
    }],
    ['missing claims', async () => new SignJWT({ id: annId }).setProtectedHeader({ alg: 'HS256' }).setIssuer('directus').setIssuedAt().setExpirationTime('1h').sign(secret)],
  ])('refuses a token with %s: 403 INVALID_TOKEN', async (_name, make) => {
    const res = await gw.get('/renders?limit=1', await make());
    expect(res.status).toBe(403);
    expect(res.body.errors[0].extensions.code).toBe('INVALID_TOKEN');
  });

  it('answers an expired token with 401 TOKEN_EXPIRED', async () => {
    const t = await new SignJWT(claims()).setProtectedHeader({ alg: 'HS256' }).setIssuer('directus').setIssuedAt(1_000).setExpirationTime(2_000).sign(secret);
    const res = await gw.get('/renders', t);
    expect(res.status).toBe(401);
    expect(res.body.errors[0]).toEqual({ message: 'Token expired.', extensions: { code: 'TOKEN_EXPIRED' } });
  });

  it('treats any other bearer string as a static token: unknown → 401 INVALID_CREDENTIALS', async () => {
    const res = await gw.get('/renders', 'not-a-jwt');
    expect(res.status).toBe(401);
    expect(res.body.errors[0].extensions.code).toBe('INVALID_CREDENTIALS');
  });

  it('without a token: 403 FORBIDDEN on legacy routes, 401 on /users/me', async () => {
    const r = await gw.get('/renders');
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ errors: [{ message: "You don't have permission to access this.", extensions: { code: 'FORBIDDEN' } }] });
    expect((await gw.get('/users/me')).status).toBe(401);
  });

  it('static tokens work until revoked and never expire', async () => {
    const { id, token } = await gw.deps.users.createStaticToken(annId, 'server');
    expect((await gw.get('/users/me', token)).body.data.id).toBe(annId);
    await gw.deps.users.revokeStaticToken(id);
    expect((await gw.get('/users/me', token)).status).toBe(401);
  });
});

describe('users/me', () => {
  it('returns the legacy User shape with accounts and accounts_owned, honouring fields', async () => {
    const t = await gw.login('ann@example.com');
    const me = (await gw.get('/users/me', t)).body.data;
    expect(Object.keys(me)).toEqual(['id', 'first_name', 'last_name', 'email', 'role', 'accounts', 'accounts_owned']);
    const reach = gw.s.keys[0]!.teams;
    expect(me.accounts).toHaveLength(reach.length);
    expect(me.accounts_owned).toHaveLength(reach.filter((r) => r.role === 'admin').length);
    for (const a of me.accounts) expect(a).toMatch(/^[0-9a-f-]{36}$/);
    expect((await gw.get('/users/me?fields=email,first_name', t)).body.data).toEqual({ email: 'ann@example.com', first_name: 'First0' });
    const expanded = (await gw.get('/users/me?fields=accounts.name', t)).body.data;
    expect(expanded.accounts.map((a: any) => Object.keys(a))).toEqual(reach.map(() => ['name']));
  });

  it('PATCH keeps first_name, last_name and email, with email unique', async () => {
    const t = await gw.login('ann@example.com');
    const res = await gw.app.inject({ method: 'PATCH', url: '/users/me', headers: { authorization: `Bearer ${t}` }, payload: { first_name: 'Ann', last_name: 'Lee' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ first_name: 'Ann', last_name: 'Lee', email: 'ann@example.com' });
    const dup = await gw.app.inject({ method: 'PATCH', url: '/users/me', headers: { authorization: `Bearer ${t}` }, payload: { email: 'BOB@example.com' } });
    expect(dup.statusCode).toBe(400);
    expect(dup.json().errors[0].extensions.code).toBe('RECORD_NOT_UNIQUE');
    const bad = await gw.app.inject({ method: 'PATCH', url: '/users/me', headers: { authorization: `Bearer ${t}` }, payload: { email: 'nope' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0].extensions.code).toBe('INVALID_PAYLOAD');
  });
});

describe('isolation and key revocation', () => {
  it("A's token only ever reaches A's key", async () => {
    const ta = await gw.login('ann@example.com');
    const a = (await gw.get('/accounts?fields=id&limit=-1', ta)).body.data.map((x: any) => x.id).sort();
    const bobUser = await gw.deps.users.byEmail('bob@example.com');
    const { token } = await gw.deps.users.createStaticToken(bobUser!.id, 'b');
    const b = (await gw.get('/accounts?fields=id&limit=-1', token)).body.data.map((x: any) => x.id).sort();
    expect(a).toHaveLength(gw.s.keys[0]!.teams.length);
    expect(b).toHaveLength(gw.s.keys[4]!.teams.length);
    expect(a).not.toEqual(b);
  });

  it('a revoked v1 key answers 401 INVALID_CREDENTIALS asking for a rebind; the log names the user, never the key', async () => {
    const carl = await gw.addUser(3, 'carl@example.com');
    const t = await gw.login('carl@example.com');
    await fetch(`${gw.s.url}/_sim/keys/revoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: gw.s.keys[3]!.api_key }) });
    const res = await gw.get('/renders?limit=1', t);
    expect(res.status).toBe(401);
    expect(res.body.errors[0].extensions.code).toBe('INVALID_CREDENTIALS');
    expect(res.body.errors[0].message).toMatch(/rebind/);
    const line = gw.logs.find((l) => l.includes('rebound'))!;
    expect(line).toContain(carl);
    expect(line).not.toContain(gw.s.keys[3]!.api_key);
    // a rebind written by another process (the command line) takes effect on the next request
    const fresh = await (await fetch(`${gw.s.url}/_sim/keys/rotate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user_id: gw.s.keys[3]!.user_id }) })).json() as { api_key: string };
    await gw.deps.users.rebind(carl, fresh.api_key, gw.s.keys[3]!.user_id);
    expect((await gw.get('/renders?limit=1', t)).status).toBe(200);
  });
});

describe('operator routes', () => {
  it('need the operator token (compared through fixed-length digests: safeEqual)', async () => {
    expect((await gw.get('/_gateway/users')).status).toBe(403);
    expect((await gw.get('/_gateway/users', 'operator-token-wrong')).status).toBe(403);
    expect((await gw.get('/_gateway/users', await gw.login('ann@example.com'))).status).toBe(403);
    const ok = await gw.get('/_gateway/users', TEST_ENV.GATEWAY_ADMIN_TOKEN);
    expect(ok.status).toBe(200);
    expect(JSON.stringify(ok.body)).not.toMatch(/sk_|v1_key|password/);
  });
});

describe('logs', () => {
  it('carry no password, token or API key', async () => {
    const t = await gw.login('ann@example.com');
    await gw.get(`/renders?limit=1&access_token=${t}`);
    await post('/auth/login', { email: 'ann@example.com', password: 'correct horse battery' });
    const all = gw.logs.join('\n');
    expect(all).not.toContain('correct horse battery');
    expect(all).not.toContain(t);
    for (const k of gw.s.keys) expect(all).not.toContain(k.api_key);
    expect(all).toContain('access_token=[Redacted]');
  });
});

describe('refresh cookie and suspended users', () => {
  it('logout clears the refresh cookie, with the same attributes', async () => {
    const post = (url: string, payload: object, headers: Record<string, string> = {}) => gw.app.inject({ method: 'POST', url, payload, headers });
    const login = await post('/auth/login', { email: 'ann@example.com', password: 'correct horse battery', mode: 'cookie' });
    const set = String(login.headers['set-cookie']);
    expect(set).toMatch(/; HttpOnly(;|$)/);
    expect(set).toMatch(/; SameSite=Lax(;|$)/);
    expect(set).not.toMatch(/Secure/); // REFRESH_COOKIE_SECURE=false in these tests
    const out = await post('/auth/logout', {}, { cookie: set.split(';')[0]! });
    expect(out.statusCode).toBe(204);
    const cleared = String(out.headers['set-cookie']);
    expect(cleared).toMatch(/^directus_refresh_token=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0/);
  });

  it('a suspended user can neither refresh nor call; activated again, both work', async () => {
    const id = await gw.addUser(2, 'suspend-me@example.com');
    const login = (await gw.app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'suspend-me@example.com', password: 'correct horse battery' } })).json().data;
    expect(await gw.deps.users.setStatus(id, 'suspended')).toBe(true);
    expect((await gw.app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: login.refresh_token } })).statusCode).toBe(401);
    expect((await gw.get('/users/me', login.access_token)).status).toBe(401);
    await gw.deps.users.setStatus(id, 'active');
    expect((await gw.get('/users/me', login.access_token)).status).toBe(200);
  });
});
