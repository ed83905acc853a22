import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS_IN_FLIGHT } from '../../src/http/anonymous-gate.js';
import { PRINCIPAL_BODY_BYTES } from '../../src/http/body-gate.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * A shadowed route holds each request's body whole until the legacy side answers: what callers the gateway cannot name
 * may hold there is bounded: without a credential, like any request without a principal — at most ANONYMOUS_IN_FLIGHT at
 * once from one address, counted once the body is read — and no large body; with one, its bodies in bytes per credential
 * (attack pass 19, F4: 1 500 anonymous 1 MB POSTs took an instance to 2.8–3.4 GB). A legacy side that does not answer is
 * a 503 in the envelope (it was a 500).
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

  it('without a credential, at most ANONYMOUS_IN_FLIGHT at once from one address: the rest are 429 at once', async () => {
    const many = await Promise.all(Array.from({ length: ANONYMOUS_IN_FLIGHT + 16 }, () => gw.app.inject({ method: 'GET', url: '/renders?limit=1' })));
    const codes = many.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 429).length).toBe(16);
    expect(codes.filter((c) => c === 401).length).toBe(ANONYMOUS_IN_FLIGHT);
  });

  it('requests with a credential are not counted per address; their bodies are bounded in bytes per credential (attack pass 20, N3)', async () => {
    const many = await Promise.all(Array.from({ length: ANONYMOUS_IN_FLIGHT + 16 }, () =>
      gw.app.inject({ method: 'GET', url: '/renders?limit=1', headers: { authorization: 'Bearer a-legacy-token' } })));
    expect(many.map((r) => r.statusCode).filter((c) => c !== 401)).toEqual([]);
    const big = JSON.stringify({ project: 'x', data: { k: 'v'.repeat(1_000_000) } });
    const n = Math.ceil(PRINCIPAL_BODY_BYTES / Buffer.byteLength(big)) + 8;
    const [mine, theirs] = await Promise.all([
      Promise.all(Array.from({ length: n }, () => post(big, { authorization: 'Bearer a-legacy-token' }))),
      post(big, { authorization: 'Bearer another-legacy-token' }),
    ]);
    const codes = mine.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 429).length, JSON.stringify(codes)).toBeGreaterThanOrEqual(8);
    expect(codes.filter((c) => c !== 429).every((c) => c === 401)).toBe(true);
    expect(theirs.statusCode).toBe(401);
  }, 30_000);

  it('bodies trickled in without a credential take no place: the address\'s users are answered meanwhile (attack pass 20, N3)', async () => {
    const address = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const port = Number(new URL(address).port);
    const sockets = Array.from({ length: ANONYMOUS_IN_FLIGHT + 16 }, () => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      socket.write('POST /renders HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"pr');
      return socket;
    });
    try {
      await new Promise((r) => setTimeout(r, 300));
      const withToken = await gw.app.inject({ method: 'GET', url: '/renders?limit=1', headers: { authorization: 'Bearer a-legacy-token' } });
      expect(withToken.statusCode).toBe(401); // the legacy side's own answer, not the gate's 429
      expect((await post('{"project":"x"}')).statusCode).toBe(401);
    } finally {
      for (const s of sockets) s.destroy();
    }
  });

  it('a body cut short by its client is logged as a client that left, not an unexpected error (attack pass 21, L-a, L-b)', async () => {
    const address = await gw.app.listen({ port: 0, host: '127.0.0.1' }).catch(() => `http://127.0.0.1:${(gw.app.server.address() as { port: number }).port}`);
    const port = Number(new URL(address).port);
    const before = gw.logs.length;
    const sockets = Array.from({ length: 5 }, () => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      socket.write('POST /renders HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"pr');
      return socket;
    });
    await new Promise((r) => setTimeout(r, 200));
    for (const s of sockets) s.destroy();
    await new Promise((r) => setTimeout(r, 300));
    const lines = gw.logs.slice(before).join('');
    expect(lines).not.toMatch(/unexpected error/);
    // (its line says the client left: there is no answer to log)
    expect(lines.match(/client closed the request/g)?.length).toBeGreaterThanOrEqual(5);
  });

  it('bodies with forged credentials, a new one each time, are bounded all together (SHADOW_BODY_MB; attack pass 21, R3)', async () => {
    const small = await startGateway({ ROUTE_MODES: JSON.stringify({ '/renders': 'shadow' }), LEGACY_BASE_URL: url, SHADOW_BODY_MB: '4' });
    try {
      const big = JSON.stringify({ project: 'x', data: { k: 'v'.repeat(1_000_000) } });
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => small.app.inject({
        method: 'POST', url: '/renders', headers: { 'content-type': 'application/json', authorization: `Bearer forged-${i}` }, payload: big,
      })));
      const codes = answers.map((r) => r.statusCode);
      // four bodies of a MB fit at once (each held until the legacy side answers, 300 ms): the rest are 429
      expect(codes.filter((c) => c === 401).length, JSON.stringify(codes)).toBe(4);
      expect(codes.filter((c) => c === 429).length, JSON.stringify(codes)).toBe(4);
      // given back once those ended
      const later = await small.app.inject({ method: 'POST', url: '/renders', headers: { 'content-type': 'application/json', authorization: 'Bearer forged-x' }, payload: big });
      expect(later.statusCode).toBe(401);
      // chunked bodies trickled in with forged credentials hold none of it while they trickle (the review of this fix:
      // each was counted as the largest body from its first byte, five took every caller's share for a minute)
      const port = Number(new URL(await small.app.listen({ port: 0, host: '127.0.0.1' })).port);
      const slow = Array.from({ length: 5 }, (_, i) => {
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => {});
        socket.write(`POST /renders HTTP/1.1\r\nhost: x\r\nauthorization: Bearer trickle-${i}\r\ncontent-type: application/json\r\n` +
          'transfer-encoding: chunked\r\n\r\n2\r\n{"\r\n');
        return socket;
      });
      try {
        await new Promise((r) => setTimeout(r, 300));
        const meanwhile = await small.app.inject({ method: 'POST', url: '/renders', headers: { 'content-type': 'application/json', authorization: 'Bearer real' }, payload: big });
        expect(meanwhile.statusCode).toBe(401);
      } finally {
        for (const x of slow) x.destroy();
      }
    } finally {
      await small.close();
    }
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
