import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prototypeQueries } from './helpers/prototype-keys.js';
import { startGateway, TEST_ENV, type TestGateway } from './helpers/gateway.js';

let gw: TestGateway;
let base: string;
let token: string;
beforeAll(async () => {
  gw = await startGateway();
  await gw.addUser(0, 'ann@example.com');
  token = await gw.login('ann@example.com');
  base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => gw.close());

const OPERATOR_ROUTES: readonly [string, string][] = [
  ['GET', '/_gateway/users'], ['GET', '/_gateway/mappings'], ['GET', '/_gateway/compare'], ['GET', '/_gateway/compare.html'],
  ['GET', '/_gateway/usage'], ['DELETE', '/_gateway/compare'],
];

/** Every spelling of a path that a router may decode to the same route: each character escaped, in both hex cases. */
function spellings(path: string): string[] {
  const out = new Set<string>([`/${path}`, `${path}/`, path.replace('/_gateway/', '/_gateway//')]);
  for (let i = 1; i < path.length; i++) {
    const ch = path[i]!;
    if (ch === '/') continue;
    const hex = ch.charCodeAt(0).toString(16);
    for (const h of [hex.toUpperCase(), hex.toLowerCase()]) out.add(`${path.slice(0, i)}%${h}${path.slice(i + 1)}`);
  }
  out.add(path.replace(/[a-z_]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`));
  return [...out];
}

describe('operator routes are guarded on the route the router matched', () => {
  it('refuses every percent-encoded, doubled-slash and trailing-slash spelling without the operator token', async () => {
    let tried = 0;
    for (const [method, path] of OPERATOR_ROUTES) {
      for (const url of spellings(path)) {
        for (const auth of [undefined, `Bearer ${token}`, 'Bearer wrong-operator-token']) {
          const res = await fetch(base + url, { method, headers: auth ? { authorization: auth } : {} });
          const body = await res.text();
          tried++;
          expect([401, 403, 404], `${method} ${url} ${auth ?? ''} → ${res.status}`).toContain(res.status);
          expect(JSON.parse(body).errors[0].extensions.code).toMatch(/FORBIDDEN|ROUTE_NOT_FOUND|INVALID_CREDENTIALS|INVALID_TOKEN/);
          expect(body).not.toContain('ann@example.com');
        }
      }
    }
    expect(tried).toBeGreaterThan(200);
    // the data is still there for the operator, under the same spellings
    const ok = await fetch(`${base}/%5Fgateway/users`, { headers: { authorization: `Bearer ${TEST_ENV.GATEWAY_ADMIN_TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(JSON.stringify(await ok.json())).toContain('ann@example.com');
  });

  it('does not take the operator token for a legacy user token, nor a legacy token for the operator token', async () => {
    expect((await gw.get('/renders?limit=1', TEST_ENV.GATEWAY_ADMIN_TOKEN)).status).toBe(401);
    expect((await gw.get('/_gateway/users', token)).status).toBe(403);
  });
});

describe('prototype-named query keys', () => {
  it('never crash the process nor leak into later requests, on public and authenticated routes', async () => {
    const before = Object.getOwnPropertyNames(Object.prototype).map((n) => [n, Object.getOwnPropertyDescriptor(Object.prototype, n)!.value]);
    const names = [...Object.getOwnPropertyNames(Object.prototype), 'name', 'length', 'caller', 'bind', 'call', 'apply'];
    for (const name of names) {
      for (const q of prototypeQueries(name)) {
        for (const path of ['/server/ping', '/renders', '/projects/00000000-0000-4000-8000-000000000000', '/nowhere']) {
          const res = await fetch(`${base}${path}?${q}`, { headers: { authorization: `Bearer ${token}` } });
          expect(res.status, `${path}?${q}`).toBeLessThan(500);
          await res.arrayBuffer();
        }
      }
    }
    expect(Object.getOwnPropertyNames(Object.prototype).map((n) => [n, Object.getOwnPropertyDescriptor(Object.prototype, n)!.value])).toEqual(before);
    expect(Object.keys(Object.prototype.toString)).toEqual([]);
    const ping = await fetch(`${base}/server/ping`);
    expect(await ping.text()).toBe('pong');
  });
});

describe('usage ledger', () => {
  it('records nothing for unauthenticated requests or unmatched paths', async () => {
    const before = (await gw.get('/_gateway/usage', TEST_ENV.GATEWAY_ADMIN_TOKEN)).body.data.length;
    for (let i = 0; i < 50; i++) {
      await fetch(`${base}/random-${i}-${'x'.repeat(200)}`);
      await fetch(`${base}/renders?i=${i}`, { headers: { authorization: `Bearer random-token-${i}` } });
      await fetch(`${base}/renders/${i}`);
      await fetch(`${base}/nothing-${i}`, { headers: { authorization: `Bearer ${token}` } });
    }
    await gw.deps.usage.flush();
    const after = (await gw.get('/_gateway/usage', TEST_ENV.GATEWAY_ADMIN_TOKEN)).body.data;
    expect(after.length).toBe(before);
    await gw.get('/renders?limit=1', token);
    await gw.deps.usage.flush();
    const routes = (await gw.get('/_gateway/usage', TEST_ENV.GATEWAY_ADMIN_TOKEN)).body.data.map((u: { route: string }) => u.route);
    expect(routes).toContain('GET /renders');
  });
});

describe('what Node refuses before Fastify', () => {
  const raw = (payload: string) => new Promise<string>((resolve) => {
    const { port } = new URL(base);
    import('node:net').then(({ connect }) => {
      const s = connect(Number(port), '127.0.0.1', () => s.write(payload));
      let got = '';
      s.on('data', (c) => { got += c.toString(); });
      s.on('close', () => resolve(got));
      s.on('error', () => resolve(got));
    });
  });
  it('answers malformed HTTP with a 400 envelope', async () => {
    const got = await raw('GARBAGE / NOT-HTTP\r\n\r\n');
    expect(got).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(got.split('\r\n\r\n')[1]!).errors[0].extensions.code).toBe('INVALID_PAYLOAD');
  });
  it('answers oversized headers with a 431 envelope', async () => {
    const got = await raw(`GET /renders HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`);
    expect(got).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(got.split('\r\n\r\n')[1]!).errors[0].extensions.code).toBe('REQUEST_HEADER_FIELDS_TOO_LARGE');
  });
});

describe('JWTs', () => {
  it('refuses one of ours without exp (403 INVALID_TOKEN)', async () => {
    const { SignJWT } = await import('jose');
    const id = (await gw.deps.users.byEmail('ann@example.com'))!.id;
    const forever = await new SignJWT({ id, role: 'r', app_access: true, admin_access: false }).setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt().setIssuer('directus').sign(new TextEncoder().encode(TEST_ENV.JWT_SECRET));
    const res = await gw.get('/users/me', forever);
    expect(res.status).toBe(403);
    expect(res.body.errors[0].extensions.code).toBe('INVALID_TOKEN');
    const withExp = await new SignJWT({ id, role: 'r', app_access: true, admin_access: false }).setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt().setExpirationTime('5m').setIssuer('directus').sign(new TextEncoder().encode(TEST_ENV.JWT_SECRET));
    expect((await gw.get('/users/me', withExp)).status).toBe(200);
  });
});

describe('the access log', () => {
  it('writes one line per request with its id, never a credential parameter, whatever its spelling', async () => {
    const secret = 'static-token-never-logged-0123456789';
    await fetch(`${base}/renders?limit=1&%61ccess_token=${secret}&x=1`, { headers: { 'x-request-id': 'access-line-1' } });
    await gw.deps.logger.flush?.();
    const lines = gw.logs.filter((l) => l.includes('"reqId":"access-line-1"') && l.includes('request completed'));
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({ level: 30, req: { method: 'GET' }, res: { statusCode: 401 } });
    expect(line.req.url).toContain('x=1');
    expect(gw.logs.join('')).not.toContain(secret);
  });
});
