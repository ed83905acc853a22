import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS_IN_FLIGHT } from '../../src/http/anonymous-gate.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * A shadowed route holds each request's body whole until the legacy side answers: what callers the gateway cannot name
 * may hold there is bounded like any request without a principal — at most ANONYMOUS_IN_FLIGHT at once from one address,
 * and no large body without any credential (attack pass 19, F4: 1 500 anonymous 1 MB POSTs took an instance to 2.8–3.4
 * GB). A legacy side that does not answer is a 503 in the envelope (it was a 500).
 */
let legacy: Server;
let url = '';
const received: number[] = [];
let gw: TestGateway;
beforeAll(async () => {
  // a legacy backend that reads the body and answers 401 a moment later
  legacy = createServer((req, res) => {
    let n = 0;
    req.on('data', (c: Buffer) => { n += c.length; });
    req.on('end', () => {
      received.push(n);
      setTimeout(() => res.writeHead(401, { 'content-type': 'application/json' }).end('{"errors":[{"message":"no","extensions":{"code":"INVALID_CREDENTIALS"}}]}'), 300);
    });
  });
  await new Promise<void>((r) => legacy.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(legacy.address() as { port: number }).port}`;
  gw = await startGateway({ ROUTE_MODES: JSON.stringify({ '/renders': 'shadow' }), LEGACY_BASE_URL: url });
});
afterAll(async () => { await gw?.close(); await new Promise((r) => legacy.close(r)); });

const post = (body: string, headers: Record<string, string> = {}) =>
  gw.app.inject({ method: 'POST', url: '/renders', headers: { 'content-type': 'application/json', ...headers }, payload: body });

describe('a shadowed route, for requests the gateway cannot name', () => {
  it('a large body with no credential is refused unread; with a credential it goes to the legacy side, which decides', async () => {
    const big = JSON.stringify({ project: 'x', data: { k: 'v'.repeat(1_000_000) } });
    received.length = 0;
    const anonymous = await post(big);
    expect(anonymous.statusCode).toBe(403);
    expect(anonymous.json().errors[0].extensions.code).toBe('FORBIDDEN');
    expect(received).toEqual([]);
    const carried = await post(big, { authorization: 'Bearer a-legacy-token' });
    expect(carried.statusCode).toBe(401); // the legacy side's own answer
    expect(received).toEqual([Buffer.byteLength(big)]);
  });

  it('at most ANONYMOUS_IN_FLIGHT at once from one address: the rest are 429 at once', async () => {
    const many = await Promise.all(Array.from({ length: ANONYMOUS_IN_FLIGHT + 16 }, () =>
      gw.app.inject({ method: 'GET', url: '/renders?limit=1', headers: { authorization: 'Bearer a-legacy-token' } })));
    const codes = many.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 429).length).toBe(16);
    expect(codes.filter((c) => c === 401).length).toBe(ANONYMOUS_IN_FLIGHT);
  });

  it('a legacy side that does not answer is a 503 SERVICE_UNAVAILABLE naming it, shadowed or proxied (attack pass 20: the proxy\'s 500)', async () => {
    for (const [route, mode] of [['/renders', 'shadow'], ['/templates', 'proxy']] as const) {
      const down = await startGateway({ ROUTE_MODES: JSON.stringify({ [route]: mode }), LEGACY_BASE_URL: 'http://127.0.0.1:9' });
      try {
        const res = await down.app.inject({ method: 'GET', url: `${route}?limit=1`, headers: { authorization: 'Bearer a-legacy-token' } });
        expect(res.statusCode, mode).toBe(503);
        expect(res.json().errors[0], mode).toMatchObject({ extensions: { code: 'SERVICE_UNAVAILABLE', service: 'legacy' } });
      } finally { await down.close(); }
    }
  });
});
