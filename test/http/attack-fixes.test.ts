import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deeperThan } from '../../src/http/json-body.js';
import { scrubText } from '../../src/log/scrub.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * What an attacker's pass found, each closed: session-mode tokens end with their session; a static token after a quote
 * in the query is still redacted; deeply nested JSON bodies are a 400 before anything walks them; a refused v1 key is
 * logged without the user's email.
 */
let gw: TestGateway;
let userId: string;
beforeAll(async () => {
  // no grace period (SESSION_REFRESH_GRACE_PERIOD, Directus 10.10's 10 s: test/auth/session-mode.test.ts): a rotated
  // session token is refused at once, and presented again it is reuse
  gw = await startGateway({ SESSION_REFRESH_GRACE_PERIOD: '0' });
  userId = await gw.addUser(0, 'target@example.com', 'session-password-1');
});
afterAll(async () => gw.close());

const sessionLogin = async () => {
  const res = await gw.app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'target@example.com', password: 'session-password-1', mode: 'session' } });
  const set = ([] as string[]).concat(res.headers['set-cookie'] as string | string[]);
  const c = set.find((x) => x.startsWith('directus_session_token='))!;
  return c.slice(0, c.indexOf(';'));
};
const me = async (cookie: string) => (await gw.app.inject({ method: 'GET', url: '/users/me', headers: { cookie } })).statusCode;
const meBearer = async (cookie: string) =>
  (await gw.app.inject({ method: 'GET', url: '/users/me', headers: { authorization: `Bearer ${cookie.split('=')[1]}` } })).statusCode;

describe('session-mode tokens end with their session', () => {
  it('after logout: neither the cookie nor the same token as a bearer reads anything', async () => {
    const cookie = await sessionLogin();
    expect(await me(cookie)).toBe(200);
    expect(await meBearer(cookie)).toBe(200); // (verified once: the check must not be skipped for a token seen before)
    const out = await gw.app.inject({ method: 'POST', url: '/auth/logout', headers: { cookie }, payload: { mode: 'session' } });
    expect(out.statusCode).toBe(204);
    expect(await me(cookie)).toBe(401);
    expect(await meBearer(cookie)).toBe(401);
  });

  it('after a refresh the old token is refused and the new one works; after reuse is detected, neither', async () => {
    const first = await sessionLogin();
    const refreshed = await gw.app.inject({ method: 'POST', url: '/auth/refresh', headers: { cookie: first }, payload: { mode: 'session' } });
    expect(refreshed.statusCode).toBe(200);
    const set = ([] as string[]).concat(refreshed.headers['set-cookie'] as string | string[]).find((x) => x.startsWith('directus_session_token='))!;
    const second = set.slice(0, set.indexOf(';'));
    expect(await me(first)).toBe(401);
    expect(await me(second)).toBe(200);
    // the old one presented again: the session is revoked, the new token with it
    expect((await gw.app.inject({ method: 'POST', url: '/auth/refresh', headers: { cookie: first }, payload: { mode: 'session' } })).statusCode).toBe(401);
    expect(await me(second)).toBe(401);
  });
});

describe('redaction to the end of the query', () => {
  it('a credential parameter after a raw quote is redacted (the access log and comparison records use this)', () => {
    for (const q of [`?limit=1&a='&%61ccess_token=st-secret-value`, `?limit=1&a="&access_token=st-secret-value`, `?x='&token=st-secret-value`]) {
      const out = scrubText(`GET /renders${q}`);
      expect(out).not.toContain('st-secret-value');
      expect(out).toContain('[Redacted]');
    }
  });

  it('and past a fragment: a request line may carry `#&access_token=…` (attack pass 26, F-B)', () => {
    for (const q of ['?fields=email#&%61ccess_token=st-secret-value', '?fields=email#&access%5Ftoken=st-secret-value', '?x#y&access%5ftoken=st-secret-value',
      '#%61ccess_token=st-secret-value', '#x&access_token=st-secret-value']) {
      const out = scrubText(`GET /users/me${q}`);
      expect(out, q).not.toContain('st-secret-value');
      expect(out).toContain('[Redacted]');
    }
  });

  it('a token after a fragment is no part of the query (as Directus reads a URL) and never reaches the log', async () => {
    const gw = await startGateway();
    try {
      const user = await gw.addUser(0, 'frag@example.com');
      const { token } = await gw.deps.users.createStaticToken(user, 'fragment probe');
      const port = (await gw.app.listen({ port: 0, host: '127.0.0.1' })).split(':').pop();
      const ask = (path: string) => new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1');
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (d: string) => { text += d; });
        socket.on('error', reject);
        socket.on('close', () => resolve(text));
        socket.write(`GET ${path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`);
      });
      expect((await ask(`/users/me?fields=email&access_token=${token}`)).split('\r\n')[0]).toContain('200');
      // (and a fragment with no query before it: the router read it as the query — attack pass 27, N-2)
      for (const q of [`?fields=email#&%61ccess_token=${token}`, `?fields=email#&access%5Ftoken=${token}`, `#%61ccess_token=${token}`, `#access_token=${token}`]) {
        const answer = await ask(`/users/me${q}`);
        expect(answer.split('\r\n')[0], q).not.toContain('200');
      }
      await new Promise((r) => setTimeout(r, 300));
      expect(gw.logs.join('').includes(token)).toBe(false);
    } finally {
      await gw.close();
    }
  }, 60_000);
});

describe('deeply nested JSON bodies', () => {
  const nested = (n: number, leaf = '1') => { let s = leaf; for (let i = 0; i < n; i++) s = `{"a":${s}}`; return s; };
  const nestedArray = (n: number) => '['.repeat(n) + ']'.repeat(n);

  it('counts depth without recursion, and allows what legacy clients send', () => {
    expect(deeperThan(JSON.parse(nested(100)), 100)).toBe(false);
    expect(deeperThan(JSON.parse(nested(101)), 100)).toBe(true);
    expect(deeperThan(JSON.parse(nested(50_000)), 100)).toBe(true);
  });

  it('SEARCH and writes answer 400 INVALID_PAYLOAD, never 500 (without a token, so large a body is not read: 403)', async () => {
    const token = await gw.login('target@example.com', 'session-password-1');
    const cases = [
      { method: 'SEARCH', url: '/renders', payload: `{"query":{"filter":${nested(20_000)}}}`, headers: {}, code: 'FORBIDDEN' },
      { method: 'SEARCH', url: '/items/projects', payload: `{"query":{"filter":${nestedArray(20_000)}}}`, headers: {}, code: 'FORBIDDEN' },
      { method: 'SEARCH', url: '/renders', payload: `{"query":{"filter":${nested(20_000)}}}`, headers: { authorization: `Bearer ${token}` } },
      { method: 'SEARCH', url: '/renders', payload: `{"query":{"filter":${nested(5_000)}}}`, headers: { authorization: `Bearer ${token}` } },
      { method: 'POST', url: '/renders', payload: `{"title":"x","data":${nested(5_000)}}`, headers: { authorization: `Bearer ${token}`, 'idempotency-key': 'deep-1' } },
      { method: 'POST', url: '/renders', payload: `{"title":"x","data":${nested(5_000)}}`, headers: { authorization: `Bearer ${token}` } },
    ];
    for (const c of cases) {
      const res = await gw.app.inject({ method: c.method as 'POST', url: c.url, payload: c.payload, headers: { 'content-type': 'application/json', ...c.headers } });
      const code = (c as { code?: string }).code ?? 'INVALID_PAYLOAD';
      expect(res.statusCode, `${c.method} ${c.url}`).toBe(code === 'FORBIDDEN' ? 403 : 400);
      expect(res.json().errors[0].extensions.code).toBe(code);
    }
  });
});

describe('logs without emails', () => {
  it('a key v1 refused is logged with the user id, not the email', async () => {
    const token = await gw.login('target@example.com', 'session-password-1');
    await fetch(`${gw.s.url}/_sim/keys/revoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: gw.s.keys[0]!.api_key }) });
    gw.logs.length = 0;
    await gw.get('/renders?limit=1&filter[title][_eq]=nothing-cached', token);
    const line = gw.logs.find((l) => l.includes('v1 rejected the key'));
    expect(line).toBeDefined();
    expect(line).toContain(userId);
    expect(line).not.toContain('target@example.com');
  });
});

describe('PATCH /users/me', () => {
  it('refuses (403) a field the role may not update — password, role, admin_access — instead of a silent 200', async () => {
    const token = await gw.login('target@example.com', 'session-password-1');
    for (const body of [{ password: 'newpass123' }, { role: 'admin' }, { admin_access: true }, { first_name: 'A', password: 'x' }]) {
      const res = await gw.app.inject({ method: 'PATCH', url: '/users/me', headers: { authorization: `Bearer ${token}` }, payload: body });
      expect(res.statusCode, JSON.stringify(body)).toBe(403);
      expect(res.json().errors[0].extensions.code).toBe('FORBIDDEN');
    }
    const ok = await gw.app.inject({ method: 'PATCH', url: '/users/me', headers: { authorization: `Bearer ${token}` }, payload: { first_name: 'Ada' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data.first_name).toBe('Ada');
  });
});
