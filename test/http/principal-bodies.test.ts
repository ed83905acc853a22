import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRINCIPAL_BODY_BYTES } from '../../src/http/body-gate.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { call } from '../helpers/sim.js';

/**
 * What one logged-in user may have in flight as request bodies is bounded in bytes (PRINCIPAL_BODY_BYTES): past it, a
 * request with a body is a 429 before its body is read; another user is not held back; the bytes are given back as
 * answers end (attack pass 19, F2: 1 000 parallel 900 KB SEARCH bodies of one user ended a 1 GB-heap instance).
 */
let gw: TestGateway;
let mine: string;
let other: string;
beforeAll(async () => {
  gw = await startGateway({ INDEX_ENABLED: 'false', MAX_PAYLOAD_BYTES: String(2 * 1_048_576) });
  await gw.addUser(0, 'one@example.com');
  await gw.addUser(1, 'two@example.com');
  mine = await gw.login('one@example.com');
  other = await gw.login('two@example.com');
}, 60_000);
afterAll(async () => gw?.close());

const search = (token: string, n: number) => gw.app.inject({
  method: 'SEARCH', url: '/renders', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  payload: JSON.stringify({ query: { search: `${n}-${'x'.repeat(900_000)}`, limit: 1, fields: ['id'] } }),
});

describe('a principal\'s bodies in flight', () => {
  it('past PRINCIPAL_BODY_BYTES at once: 429 with Retry-After, before the body is read; another user passes; given back after', async () => {
    const n = Math.ceil(PRINCIPAL_BODY_BYTES / 900_000) + 20;
    const [answers, theirs] = await Promise.all([Promise.all(Array.from({ length: n }, (_, i) => search(mine, i))), search(other, -1)]);
    const codes = answers.map((r) => r.statusCode);
    const refused = answers.filter((r) => r.statusCode === 429);
    expect(refused.length, JSON.stringify(codes)).toBeGreaterThanOrEqual(20);
    expect(codes.filter((c) => c !== 429).every((c) => c === 200)).toBe(true);
    expect(refused[0]!.headers['retry-after']).toBe('1');
    expect(refused[0]!.json().errors[0].extensions.code).toBe('REQUESTS_EXCEEDED');
    expect(theirs.statusCode).toBe(200);
    // every place given back: the same user's next one passes
    expect((await search(mine, n + 1)).statusCode).toBe(200);
  }, 60_000);

  it('a client that hangs up once its body is sent does not give the bytes back before its question has run (attack pass 20, N2)', async () => {
    const address = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const port = Number(new URL(address).port);
    await call(gw.s.url, '/_sim/faults', { method: 'POST', body: { latency_ms: 2_000 } });
    try {
      // each body sent whole over its own connection, the connection closed a second later (read by then, its question
      // waiting on v1)
      const hangUp = (n: number) => new Promise<void>((resolve, reject) => {
        const body = JSON.stringify({ query: { search: `${n}-${'x'.repeat(900_000)}`, limit: 1, fields: ['id'] } });
        const socket = connect(port, '127.0.0.1', () => {
          socket.write(`SEARCH /renders HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${mine}\r\ncontent-type: application/json\r\n` +
            `content-length: ${Buffer.byteLength(body)}\r\n\r\n`);
          socket.write(body, () => setTimeout(() => { socket.destroy(); resolve(); }, 1_000));
        });
        socket.on('error', reject);
      });
      const n = Math.ceil(PRINCIPAL_BODY_BYTES / 900_000) + 2;
      await Promise.all(Array.from({ length: n }, (_, i) => hangUp(i)));
      // their questions still run: the user's bytes are still held, so the next body is refused …
      const next = await search(mine, n);
      expect(next.statusCode, next.body).toBe(429);
      // … and given back once they have run
      let after = 429;
      for (let i = 0; i < 100 && after === 429; i++) {
        await new Promise((r) => setTimeout(r, 100));
        after = (await search(mine, n + 1 + i)).statusCode;
      }
      expect(after).toBe(200);
    } finally {
      await call(gw.s.url, '/_sim/faults', { method: 'DELETE' });
    }
  }, 60_000);
});
