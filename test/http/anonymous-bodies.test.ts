import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEARCH_BODY_KEYS } from '../../src/http/json-body.js';
import { AUTH_BODY_BYTES } from '../../src/routes/auth.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * What anyone may send without logging in is read only as far as it needs: an authentication body is a few KB at most,
 * and a body sent to a route that needs a principal is not read past that without one (attack pass 17: 1 500 login
 * bodies of 880 KB held through the login stall ran an instance out of memory — F7; 60 000-key bodies to /auth/refresh
 * cost ~97 ms each, four at once stalling every user — F6). A SEARCH body has at most SEARCH_BODY_KEYS keys.
 */
let gw: TestGateway;
let token: string;
beforeAll(async () => {
  gw = await startGateway({ INDEX_ENABLED: 'false', LOGIN_MAX_FAILURES: '1000' });
  await gw.addUser(0, 'anon@example.com', 'anon-password-123');
  token = await gw.login('anon@example.com', 'anon-password-123');
});
afterAll(async () => gw?.close());

const manyKeys = (n: number) => JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 0])));
const post = (url: string, payload: string, headers: Record<string, string> = {}) =>
  gw.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload });
const errorOf = (body: string) => (JSON.parse(body) as { errors: { message: string; extensions: { code: string } }[] }).errors[0];

describe('bodies sent without logging in', () => {
  it('an authentication body past AUTH_BODY_BYTES is refused before it is read; a login of ordinary size works', async () => {
    const big = JSON.stringify({ email: 'anon@example.com', password: 'anon-password-123', a: Array.from({ length: 440_000 }, () => 0) });
    expect(big.length).toBeGreaterThan(800_000);
    for (const url of ['/auth/login', '/auth/refresh', '/auth/logout']) {
      for (const payload of [big, manyKeys(60_000)]) {
        const res = await post(url, payload);
        expect(res.statusCode, url).toBe(400);
        expect(errorOf(res.body)).toMatchObject({ extensions: { code: 'INVALID_PAYLOAD' }, message: expect.stringMatching(/too large/) });
      }
    }
    const under = JSON.stringify({ email: 'anon@example.com', password: 'anon-password-123', pad: 'x'.repeat(AUTH_BODY_BYTES - 200) });
    expect((await post('/auth/login', under)).statusCode).toBe(200);
  });

  it('a webhook delivery is read up to WEBHOOK_BODY_BYTES before its signature is checked (attack pass 18: 1 MB unsigned posts)', async () => {
    const { WEBHOOK_BODY_BYTES } = await import('../../src/routes/webhooks.js');
    const big = await post('/_gateway/webhooks/v1/team_x', JSON.stringify({ pad: 'x'.repeat(WEBHOOK_BODY_BYTES) }), { 'x-webhook-signature': `sha256=${'0'.repeat(64)}` });
    expect(big.statusCode).toBe(400);
    expect(errorOf(big.body)).toMatchObject({ extensions: { code: 'INVALID_PAYLOAD' }, message: expect.stringMatching(/too large/) });
    // one of a delivery's size is read and its signature refused as before
    const small = await post('/_gateway/webhooks/v1/team_x', JSON.stringify({ pad: 'x'.repeat(4_000) }), { 'x-webhook-signature': `sha256=${'0'.repeat(64)}` });
    expect(small.statusCode).not.toBe(400);
    expect(small.statusCode).toBeLessThan(500);
  });

  it('a route that needs a principal does not read a large body without one: 403 whatever it holds', async () => {
    // not JSON at all: unread, so not a 400 for its syntax
    const junk = `{${'x'.repeat(100_000)}`;
    expect(errorOf((await post('/renders', junk)).body)).toMatchObject({ extensions: { code: 'FORBIDDEN' } });
    expect((await post('/renders', manyKeys(60_000))).statusCode).toBe(403);
    // a small one is read as before (its syntax answered first), and a principal's large one too
    expect(errorOf((await post('/renders', '{x')).body)).toMatchObject({ extensions: { code: 'INVALID_PAYLOAD' } });
    const res = await post('/renders', junk, { authorization: `Bearer ${token}` });
    expect(errorOf(res.body)).toMatchObject({ extensions: { code: 'INVALID_PAYLOAD' } });
  });

  it('a SEARCH body, or a write body, has at most SEARCH_BODY_KEYS keys', async () => {
    const search = (query: string) => gw.app.inject({ method: 'SEARCH', url: '/renders', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: `{"query":${query}}` });
    const over = await search(manyKeys(SEARCH_BODY_KEYS + 1));
    expect(over.statusCode).toBe(400);
    expect(errorOf(over.body)?.message).toBe(`Invalid payload. The body has more than ${SEARCH_BODY_KEYS} keys, or objects and lists.`);
    expect((await search(JSON.stringify({ limit: 1, alias: Object.fromEntries(Array.from({ length: 900 }, (_, i) => [`a${i}`, 'title'])) }))).statusCode).toBe(200);
    // a write body too (attack pass 18, N2: 60 000 unknown keys to PATCH /users/me, four at once, held others 7–10 s)
    for (const [method, url] of [['PATCH', '/users/me'], ['POST', '/renders']] as const) {
      const res = await gw.app.inject({ method, url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: manyKeys(60_000) });
      expect(res.statusCode, url).toBe(400);
      expect(errorOf(res.body)?.message).toBe(`Invalid payload. The body has more than ${SEARCH_BODY_KEYS} keys, or objects and lists.`);
    }
  });

  it('and as many objects and lists, whatever they hold: 333 000 empty objects in 1 MB had no key (attack pass 27, N-3)', async () => {
    const search = (payload: string) => gw.app.inject({ method: 'SEARCH', url: '/renders', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload });
    // (objects as many as keys, lists ten times as many: a render's data may hold long series of pairs)
    for (const [pad, n] of [['{}', SEARCH_BODY_KEYS + 1], ['[]', 10 * SEARCH_BODY_KEYS + 1]] as const) {
      const res = await search(`{"query":{"limit":1,"fields":["id"],"x":[${Array(n).fill(pad).join(',')}]}}`);
      expect(res.statusCode, pad).toBe(400);
      expect(errorOf(res.body)?.message).toBe(`Invalid payload. The body has more than ${SEARCH_BODY_KEYS} keys, or objects and lists.`);
    }
    // a filter as large as the filter's own bound (2 000 terms: 1 000 items of an _and, an operator each; two objects each)
    // still fits, and a list of many numbers (an unknown key of the question is ignored, as Directus does)
    const terms = Array.from({ length: 1_000 }, (_, i) => ({ title: { _neq: `t${i}` } }));
    const filtered = await search(JSON.stringify({ query: { limit: 1, fields: ['id'], filter: { _and: terms } } }));
    expect(filtered.statusCode, filtered.body).toBe(200);
    const res = await search(JSON.stringify({ query: { limit: 1, fields: ['id'], x: Array(50_000).fill(7) } }));
    expect(res.statusCode).toBe(200);
    // a series of 20 000 pairs (its lists past the objects' bound) is read (the review of N-3's fix: 400 with lists as objects)
    const pairs = await search(JSON.stringify({ query: { limit: 1, fields: ['id'], x: Array.from({ length: 20_000 }, (_, i) => [i, i]) } }));
    expect(pairs.statusCode, pairs.body).toBe(200);
  });
});

describe('requests without a principal from one address', () => {
  it('at most ANONYMOUS_IN_FLIGHT at once: past it 429 at once; each place given back when its answer ends', async () => {
    const { ANONYMOUS_IN_FLIGHT } = await import('../../src/http/anonymous-gate.js');
    const login = (password: string) => post('/auth/login', JSON.stringify({ email: 'anon@example.com', password }));

    // one after another, far more than the bound: each answered (a place given back every time)
    for (let i = 0; i < ANONYMOUS_IN_FLIGHT + 20; i++) expect((await post('/auth/refresh', '{}')).statusCode, `refresh ${i}`).toBe(400);
    // at once (each held through the login's hashing): past the bound, 429 with Retry-After, once its few KB are read
    // (the login limiter answers 429s of its own once an address tries too often: 'retry after 900s'; the gate's say 1 s)
    const answers = await Promise.all(Array.from({ length: ANONYMOUS_IN_FLIGHT + 10 }, () => login('anon-password-123')));
    const gated = answers.filter((r) => r.statusCode === 429 && r.headers['retry-after'] === '1');
    expect(gated.length).toBe(10);
    expect(errorOf(gated[0]!.body)).toMatchObject({ message: 'Too many requests, retry after 1s.', extensions: { code: 'REQUESTS_EXCEEDED' } });
    expect(answers.filter((r) => r.statusCode === 200).length).toBeGreaterThan(0);
    // a user with a token is not counted, and the places are free again once those answers ended
    expect((await gw.app.inject({ method: 'GET', url: '/renders?limit=1', headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(200);
    const again = await Promise.all(Array.from({ length: ANONYMOUS_IN_FLIGHT }, () => post('/auth/refresh', '{}')));
    expect(again.every((r) => r.statusCode === 400)).toBe(true);
  });

  it('bodies trickled in take no place: 80 slow connections, and the same address still logs in; past HTTP_REQUEST_TIMEOUT_MS a 408 (attack pass 20, N4)', async () => {
    const slow = await startGateway({ INDEX_ENABLED: 'false', HTTP_REQUEST_TIMEOUT_MS: '1500' });
    const sockets: Socket[] = [];
    try {
      await slow.addUser(0, 'slow@example.com', 'slow-password-123');
      const address = await slow.app.listen({ port: 0, host: '127.0.0.1' });
      const port = Number(new URL(address).port);
      const { ANONYMOUS_IN_FLIGHT } = await import('../../src/http/anonymous-gate.js');
      const answers: string[] = [];
      for (let i = 0; i < ANONYMOUS_IN_FLIGHT + 16; i++) {
        const socket = connect(port, '127.0.0.1');
        sockets.push(socket);
        let text = '';
        socket.on('data', (c: Buffer) => { text += c.toString(); });
        socket.on('close', () => answers.push(text));
        socket.on('error', () => {});
        socket.write('POST /auth/login HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"em');
      }
      await new Promise((r) => setTimeout(r, 200));
      // the same address, meanwhile: logs in, and its requests without a token are answered
      const login = await slow.app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'slow@example.com', password: 'slow-password-123' } });
      expect(login.statusCode, login.body).toBe(200);
      expect((await slow.app.inject({ method: 'POST', url: '/auth/refresh', payload: {} })).statusCode).toBe(400);
      // the trickling ones are ended at the deadline: a 408 in the envelope, the connection closed
      for (let i = 0; i < 100 && answers.length < sockets.length; i++) await new Promise((r) => setTimeout(r, 100));
      expect(answers.length).toBe(sockets.length);
      expect(answers[0]).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
      const body = JSON.parse(answers[0]!.slice(answers[0]!.indexOf('\r\n\r\n') + 4));
      expect(body).toEqual({ errors: [{ message: 'The request was not sent in time.', extensions: { code: 'REQUEST_TIMEOUT' } }] });
    } finally {
      for (const s of sockets) s.destroy();
      await slow.close();
    }
  }, 30_000);
});
