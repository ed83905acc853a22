import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODIES_IN_FLIGHT_BYTES, PRINCIPAL_BODY_BYTES, PRINCIPAL_BODY_LINE } from '../../src/http/body-gate.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { call } from '../helpers/sim.js';

/**
 * What one logged-in user may have in flight as request bodies is bounded in bytes (PRINCIPAL_BODY_BYTES): past it, a
 * request with a body waits its turn before its body is read (past PRINCIPAL_BODY_LINE waiting, a 429); another user is
 * not held back; the bytes are given back as answers end (attack pass 19, F2: 1 000 parallel 900 KB SEARCH bodies of one
 * user ended a 1 GB-heap instance).
 */
let gw: TestGateway;
let mine: string;
let other: string;
beforeAll(async () => {
  gw = await startGateway({
    INDEX_ENABLED: 'false', MAX_PAYLOAD_BYTES: String(2 * 1_048_576),
    CACHE_TTL_METADATA_MS: '0', CACHE_TTL_RENDER_ACTIVE_MS: '0', CACHE_TTL_RENDER_FINAL_MS: '0', ANSWER_CACHE_MB: '0',
  });
  await gw.addUser(0, 'one@example.com');
  await gw.addUser(1, 'two@example.com');
  mine = await gw.login('one@example.com');
  other = await gw.login('two@example.com');
}, 60_000);
afterAll(async () => gw?.close());

/** v1 answering `ms` late while `body` runs. */
async function slowV1(ms: number, body: () => Promise<void>, g: TestGateway = gw): Promise<void> {
  await call(g.s.url, '/_sim/faults', { method: 'POST', body: { latency_ms: ms } });
  try {
    await body();
  } finally {
    await call(g.s.url, '/_sim/faults', { method: 'DELETE' });
  }
}

/** Until `done` holds (polled every 10 ms, 5 s at most). */
async function until(done: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500 && !(await done()); i++) await new Promise((r) => setTimeout(r, 10));
}

const search = (token: string, n: number, fill = 'x'.repeat(900_000)) => gw.app.inject({
  method: 'SEARCH', url: '/renders', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  payload: JSON.stringify({ query: { search: `${n}-${fill}`, limit: 1, fields: ['id'] } }),
});

/** The gateway's port (it listens once, for the tests that need real connections). */
let listened: Promise<number> | undefined;
const listening = () => (listened ??= gw.app.listen({ port: 0, host: '127.0.0.1' }).then((a) => Number(new URL(a).port)));

/** The body gate's two gauges, read as a scrape reads them. */
async function gate(): Promise<{ bytes: number; waiting: number }> {
  const text = await gw.deps.metrics.registry.metrics();
  const read = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { bytes: read('gateway_request_body_bytes'), waiting: read('gateway_request_bodies_waiting') };
}

/** Samples the gate every 20 ms until `done` settles: the most bytes seen, and the most requests seen waiting. */
async function watched<T>(done: Promise<T>): Promise<{ value: T; bytes: number; waiting: number }> {
  let over = false;
  const settled = done.finally(() => { over = true; });
  let bytes = 0;
  let waiting = 0;
  while (!over) {
    const g = await gate();
    bytes = Math.max(bytes, g.bytes);
    waiting = Math.max(waiting, g.waiting);
    await new Promise((r) => setTimeout(r, 20));
  }
  return { value: await settled, bytes, waiting };
}

describe('a principal\'s bodies in flight', () => {
  it('past PRINCIPAL_BODY_BYTES at once the rest wait their turn, unread, and are answered; another user does not wait behind them (attack pass 21, R1)', async () => {
    // (32 MB of one user's 900 KB SEARCH bodies at once — 35 questions compiled in each turn of the event loop — held
    // another user's one-item read 2–5 s; a few at a time, 0.2–0.4 s: the gateway's demo, measured)
    expect(PRINCIPAL_BODY_BYTES).toBeLessThanOrEqual(8 * 1_048_576);
    await slowV1(300, async () => {
    const n = Math.ceil(PRINCIPAL_BODY_BYTES / 900_000) + 8;
    const flood = Promise.all(Array.from({ length: n }, (_, i) => search(mine, i)));
    // another user's body, sent once the first user's line is long: answered while it still waits
    await until(async () => (await gate()).waiting >= 4);
    const theirs = await search(other, -1);
    expect(theirs.statusCode).toBe(200);
    expect((await gate()).waiting).toBeGreaterThan(0);
    const { value: answers, bytes, waiting } = await watched(flood);
    // every one answered, none refused; never more than the bound in flight (one body of 900 KB over it, at most)
    expect(answers.map((r) => r.statusCode)).toEqual(answers.map(() => 200));
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(PRINCIPAL_BODY_BYTES);
    expect(waiting).toBeGreaterThan(0);
    expect(await gate()).toEqual({ bytes: 0, waiting: 0 });
    });
  }, 60_000);

  it('over real connections too: a body that waited its turn, its client still there, is answered (attack pass 27, N-4: 503 "The client has gone")', async () => {
    // (Node marks a request's stream destroyed once its body is read: the check after the wait took every one for gone)
    const port = await listening();
    await slowV1(300, async () => {
      const n = Math.ceil(PRINCIPAL_BODY_BYTES / 900_000) + 4;
      const flood = Promise.all(Array.from({ length: n }, async (_, i) => {
        const res = await fetch(`http://127.0.0.1:${port}/renders`, {
          method: 'SEARCH', headers: { authorization: `Bearer ${mine}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query: { search: `${i}-${'y'.repeat(900_000)}`, limit: 1, fields: ['id'] } }),
        });
        return { status: res.status, body: await res.text() };
      }));
      const { value: answers, waiting } = await watched(flood);
      expect(waiting).toBeGreaterThan(0);
      expect(answers.map((r) => r.status), answers.find((r) => r.status !== 200)?.body).toEqual(answers.map(() => 200));
    });
  }, 60_000);

  it('several users\' bodies at once: no more than BODIES_IN_FLIGHT_BYTES in all, and one body of a user holding none (attack pass 22, P3)', async () => {
    // (four users' 4 MiB each at once, 16 questions of 900 KB compiled together, held another user's reads 1.1–1.4 s)
    expect(BODIES_IN_FLIGHT_BYTES).toBeLessThanOrEqual(PRINCIPAL_BODY_BYTES);
    await slowV1(300, async () => {
    const n = Math.ceil(PRINCIPAL_BODY_BYTES / 900_000) + 2;
    const both = Promise.all([mine, other].flatMap((t) => Array.from({ length: n }, (_, i) => search(t, i))));
    const { value: answers, bytes } = await watched(both);
    expect(answers.map((r) => r.statusCode)).toEqual(answers.map(() => 200));
    expect(bytes).toBeGreaterThan(PRINCIPAL_BODY_BYTES / 2);
    expect(bytes).toBeLessThanOrEqual(PRINCIPAL_BODY_BYTES + 1_000_000); // (as one user's, and one body of the other)
    });
  }, 60_000);

  it('a small body passes the all-users bound: another user\'s held bytes leave a user more than one body at a time (review of P3\'s fix, M2)', async () => {
    await slowV1(2_000, async () => {
    // one user holds all users' bytes (four 900 KB bodies waiting on v1) …
    const theirs = Array.from({ length: Math.floor(BODIES_IN_FLIGHT_BYTES / 900_100) }, (_, i) => search(mine, -400 - i));
    await until(async () => (await gate()).bytes >= theirs.length * 900_000);
    // … another user's large body passes (it holds none), and so does its small one beside it
    const large = search(other, -500);
    const small = search(other, -501, 'y'.repeat(1_000));
    // (until both are let in, or one waits)
    const both = theirs.length * 900_000 + 900_000 + 1_000;
    let g = await gate();
    for (let i = 0; i < 250 && g.bytes < both && g.waiting === 0; i++) g = await new Promise((r) => setTimeout(() => r(gate()), 20));
    expect(g.waiting).toBe(0);
    expect(g.bytes).toBeGreaterThanOrEqual(both);
    expect((await Promise.all([large, small, ...theirs])).map((r) => r.statusCode)).toEqual([200, 200, ...theirs.map(() => 200)]);
    });
  }, 60_000);

  it('past the line of PRINCIPAL_BODY_LINE waiting, a 429 with Retry-After, before the body is read', async () => {
    await slowV1(3_000, async () => {
    // two bodies of 2 MB take the user's bytes (each waits on v1); each small body then waits, until the line is full
    const big = (n: number) => search(mine, n, 'x'.repeat(PRINCIPAL_BODY_BYTES / 2 - 100));
    const running = [big(1), big(2)];
    await until(async () => (await gate()).bytes >= PRINCIPAL_BODY_BYTES - 200);
    const small = await Promise.all(Array.from({ length: PRINCIPAL_BODY_LINE + 3 }, (_, i) => search(mine, i, 'y'.repeat(500))));
    const codes = small.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 429).length, JSON.stringify(codes)).toBe(3);
    expect(codes.filter((c) => c !== 429).every((c) => c === 200)).toBe(true);
    const refused = small.find((r) => r.statusCode === 429)!;
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json().errors[0].extensions.code).toBe('REQUESTS_EXCEEDED');
    expect((await Promise.all(running)).map((r) => r.statusCode)).toEqual([200, 200]);
    });
  }, 60_000);

  it('a Content-Length counts no more than the body Fastify reads: none for a GET, at most MAX_PAYLOAD_BYTES (attack pass 22, P1)', async () => {
    const port = await listening();
    await call(gw.s.url, '/_sim/faults', { method: 'POST', body: { latency_ms: 1_000 } });
    const sockets: ReturnType<typeof connect>[] = [];
    try {
      // a GET saying it carries a TB (its answer waiting on v1), and a SEARCH saying so whose body never comes
      const head = (method: string) => `${method} /renders?limit=1&fields=id HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${mine}\r\n` +
        'content-type: application/json\r\ncontent-length: 1000000000000\r\n\r\n';
      for (const method of ['GET', 'SEARCH']) {
        const socket = connect(port, '127.0.0.1', () => socket.write(head(method)));
        socket.on('error', () => {});
        sockets.push(socket);
      }
      let most = 0;
      for (let i = 0; i < 20; i++) {
        most = Math.max(most, (await gate()).bytes);
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(most).toBeLessThanOrEqual(2 * 1_048_576); // (MAX_PAYLOAD_BYTES here)
    } finally {
      for (const s of sockets) s.destroy();
      await call(gw.s.url, '/_sim/faults', { method: 'DELETE' });
    }
  }, 60_000);

  it('a body whose client left while it waited its turn runs no question once read (attack pass 22, P3)', async () => {
    const port = await listening();
    // (every v1 call counted: the v1 cache keeps nothing here, and every question is distinct)
    const calls = () => [...gw.s.sim.stats.values()].reduce((a, b) => a + b, 0);
    expect((await search(mine, -100)).statusCode).toBe(200); // (what is read once is read)
    const c0 = calls();
    expect((await search(mine, -101)).statusCode).toBe(200);
    const perQuestion = calls() - c0;
    expect(perQuestion).toBeGreaterThan(0);
    await slowV1(1_000, async () => {
    const c1 = calls();
    // four bodies take the user's bytes (each waits a second on v1) …
    const held = Array.from({ length: Math.floor(PRINCIPAL_BODY_BYTES / 900_100) }, (_, i) => search(mine, -200 - i));
    await until(async () => (await gate()).bytes >= held.length * 900_000);
    // … and six more are sent whole over their own connections, which close while the bodies wait their turn
    const written: Promise<void>[] = [];
    const leaving = Array.from({ length: 6 }, (_, i) => connect(port, '127.0.0.1', function (this: ReturnType<typeof connect>) {
      const body = JSON.stringify({ query: { search: `${-300 - i}-${'x'.repeat(900_000)}`, limit: 1, fields: ['id'] } });
      written.push(new Promise((ok) => this.write(`SEARCH /renders HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${mine}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`, () => ok())));
    }).on('error', () => {}));
    await until(async () => (await gate()).waiting >= 6);
    // (each body handed whole to the connection before it closes: a body cut short would prove nothing)
    while (written.length < 6) await new Promise((r) => setTimeout(r, 10));
    await Promise.all(written);
    for (const s of leaving) s.destroy();
    expect((await Promise.all(held)).map((r) => r.statusCode)).toEqual(held.map(() => 200));
    for (let i = 0; i < 300; i++) {
      const g = await gate();
      if (g.bytes === 0 && g.waiting === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await gate()).toEqual({ bytes: 0, waiting: 0 });
    // only the four whose clients stayed asked v1 anything — at once, so as one question's calls (v1 reads in flight
    // are shared); before, the six that left were run too, in two more turns: three questions' calls
    expect(calls() - c1).toBeLessThan(2 * perQuestion);
    });
  }, 60_000);

  it('a body waits its turn at most half its request\'s time, then a 503 with Retry-After — not the request timeout\'s 408 (review of P3\'s fix)', async () => {
    const short = await startGateway({ INDEX_ENABLED: 'false', MAX_PAYLOAD_BYTES: String(2 * 1_048_576), HTTP_REQUEST_TIMEOUT_MS: '3000' });
    try {
      await short.addUser(0, 'short@example.com');
      const t = await short.login('short@example.com');
      const ask = (n: number) => short.app.inject({
        method: 'SEARCH', url: '/renders', headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ query: { search: `${n}-${'x'.repeat(900_000)}`, limit: 1, fields: ['id'] } }),
      });
      await call(short.s.url, '/_sim/faults', { method: 'POST', body: { latency_ms: 4_000 } });
      // the user's bytes taken for four seconds (each question waits on v1) …
      const held = Array.from({ length: Math.floor(PRINCIPAL_BODY_BYTES / 900_100) }, (_, i) => ask(i));
      await new Promise((r) => setTimeout(r, 200));
      // … one more waits 1.5 s, then is told to come back
      const late = await ask(99);
      expect(late.statusCode, late.body).toBe(503);
      expect(late.headers['retry-after']).toBe('2');
      expect(late.json().errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
      expect((await Promise.all(held)).map((r) => r.statusCode)).toEqual(held.map(() => 200));
    } finally {
      await call(short.s.url, '/_sim/faults', { method: 'DELETE' });
      await short.close();
    }
  }, 60_000);

  it('a client that hangs up once its body is sent does not give the bytes back before its question has run (attack pass 20, N2)', async () => {
    const port = await listening();
    await slowV1(2_000, async () => {
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
    const n = Math.ceil(PRINCIPAL_BODY_BYTES / 900_000);
    await Promise.all(Array.from({ length: n }, (_, i) => hangUp(i)));
    // their questions still run: the user's bytes are still held, so the next body waits …
    const held = await gate();
    expect(held.bytes).toBeGreaterThanOrEqual(900_000);
    const next = search(mine, n);
    let seen = 0;
    for (let i = 0; i < 50 && seen === 0; i++) {
      seen = (await gate()).waiting;
      if (seen === 0) await new Promise((r) => setTimeout(r, 10));
    }
    expect(seen).toBe(1);
    // … until they have run
    expect((await next).statusCode).toBe(200);
    expect(await gate()).toEqual({ bytes: 0, waiting: 0 });
    });
  }, 60_000);
});
