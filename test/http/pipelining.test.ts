import { connect, type Socket } from 'node:net';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { afterRequest, trackRequestEnds } from '../../src/http/request-end.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * HTTP/1.1 pipelining, over real sockets (attack pass 24). N1: one connection writing thousands of reads at once, reading
 * nothing, had each started at once (2.2 GB, other tenants' reads 22–53 s). N2: an answer queued behind another when its
 * connection is closed never ended its request, and the anonymous gate's places leaked (an address answered 429 until
 * a restart).
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A raw connection to `port`: what it received so far, and whether it is closed. */
function raw(port: number): { socket: Socket; received: () => string; closed: () => boolean } {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  let closed = false;
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => { text += d; });
  socket.on('error', () => {});
  socket.on('close', () => { closed = true; });
  return { socket, received: () => text, closed: () => closed };
}

const until = async (cond: () => boolean | Promise<boolean>, ms = 15_000) => {
  const end = Date.now() + ms;
  while (!(await cond()) && Date.now() < end) await sleep(20);
  return cond();
};

describe('a request whose answer is queued behind another on its connection', () => {
  it('ends when its connection closes under it (N2: its gate places were never given back)', async () => {
    const app = Fastify();
    trackRequestEnds(app);
    let started = 0;
    let ended = 0;
    app.addHook('onRequest', (_request, reply, done) => { started++; afterRequest(reply, () => { ended++; }); done(); });
    app.get('/slow', async () => { await sleep(300); return { ok: true }; });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const port = (app.server.address() as { port: number }).port;
      const c = raw(port);
      c.socket.write('GET /slow HTTP/1.1\r\nhost: x\r\n\r\n'.repeat(3));
      expect(await until(() => started === 3, 5_000)).toBe(true);
      c.socket.destroy();
      // every one ends: the first with its reply's close, the two queued behind it with their connection's
      expect(await until(() => ended === 3, 5_000)).toBe(true);
    } finally {
      await app.close();
    }
  });
});

describe('pipelined requests on one connection', () => {
  let gw: TestGateway;
  let port = 0;
  let token = '';
  const closedCount = async () => {
    const m = await gw.deps.metrics.registry.getSingleMetricAsString('gateway_pipelined_connections_closed');
    return Number(/gateway_pipelined_connections_closed (\d+)/.exec(m)?.[1] ?? NaN);
  };
  const waiting = async () => {
    const m = await gw.deps.metrics.registry.getSingleMetricAsString('gateway_pipelined_requests_waiting');
    return Number(/gateway_pipelined_requests_waiting (\d+)/.exec(m)?.[1] ?? NaN);
  };

  beforeAll(async () => {
    gw = await startGateway({ INDEX_ENABLED: 'false' }, { scale: 'tiny' });
    await gw.addUser(0, 'pipe@example.com', 'pipe-password-123');
    token = await gw.login('pipe@example.com', 'pipe-password-123');
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    port = (gw.app.server.address() as { port: number }).port;
  }, 60_000);
  afterAll(async () => { await gw?.close(); });

  it('are worked on one at a time, the rest waiting unread; every one is answered, in order', async () => {
    // (each read waits on v1: the requests pile up behind the first ones)
    await fetch(`${gw.s.url}/_sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ latency_ms: 150 }) });
    try {
      const c = raw(port);
      const n = 24;
      let out = '';
      for (let i = 0; i < n; i++) out += `GET /renders?fields=id&limit=1&n=${i} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\n\r\n`;
      c.socket.write(out);
      expect(await until(async () => (await waiting()) > 0, 5_000)).toBe(true);
      const seen = await waiting();
      // one worked on, the others read and waiting (none answered yet: each waits on v1)
      expect(seen).toBe(n - 1);
      // (the answers follow each other on the connection: a status line right after the last body)
      expect(await until(() => (c.received().match(/HTTP\/1\.1 \d{3} /g) ?? []).length === n, 60_000)).toBe(true);
      const statuses = [...c.received().matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
      expect(statuses).toEqual(Array(n).fill('200'));
      expect(await waiting()).toBe(0);
      c.socket.destroy();
    } finally {
      await fetch(`${gw.s.url}/_sim/faults`, { method: 'DELETE' });
    }
  }, 90_000);

  it('a connection piling up more than 64 is closed; the others are answered meanwhile', async () => {
    await fetch(`${gw.s.url}/_sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ latency_ms: 200 }) });
    try {
      const c = raw(port);
      c.socket.write(`GET /renders?fields=id&limit=1 HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\n\r\n`.repeat(3000));
      expect(await until(c.closed, 20_000)).toBe(true);
      const res = await fetch(`http://127.0.0.1:${port}/renders?fields=id&limit=1`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      expect(await closedCount()).toBeGreaterThanOrEqual(1);
      expect(await until(async () => (await waiting()) === 0, 5_000)).toBe(true);
    } finally {
      await fetch(`${gw.s.url}/_sim/faults`, { method: 'DELETE' });
    }
  }, 60_000);

  it('connections of one address together hold at most 256 waiting: past it a connection is closed (attack pass 25, P1)', async () => {
    await fetch(`${gw.s.url}/_sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ latency_ms: 300 }) });
    const conns: ReturnType<typeof raw>[] = [];
    try {
      const before = await closedCount();
      // 10 connections × 41 (one worked on, 40 waiting each: under the connection's bound, 400 over the address's)
      for (let i = 0; i < 10; i++) {
        const c = raw(port);
        conns.push(c);
        c.socket.write(`GET /renders?fields=id&limit=1&c=${i} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\n\r\n`.repeat(41));
        await sleep(30);
        expect(await waiting()).toBeLessThanOrEqual(256);
      }
      expect(await until(() => conns.some((c) => c.closed()), 10_000)).toBe(true);
      expect(await waiting()).toBeLessThanOrEqual(256);
      expect(await closedCount()).toBeGreaterThan(before);
      const res = await fetch(`http://127.0.0.1:${port}/renders?fields=id&limit=1`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
    } finally {
      for (const c of conns) c.socket.destroy();
      await fetch(`${gw.s.url}/_sim/faults`, { method: 'DELETE' });
    }
    expect(await until(async () => (await waiting()) === 0, 10_000)).toBe(true);
  }, 60_000);

  it('a waiting request holds its query string as text, parsed once its turn comes; one that makes too much is a 400 (attack pass 26, F-A)', async () => {
    // 15 KB of nested bracket keys: 4 500 objects, ~750 KB of heap once parsed (the router parsed it before any hook)
    const junk = Array.from({ length: 500 }, (_, i) => `${i}[a][b][c][d][e][f][g][h]=1`).join('&');
    const line = (i: number) => `GET /renders?fields=id&limit=1&n=${i}&${junk} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\n\r\n`;
    await fetch(`${gw.s.url}/_sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ latency_ms: 1_500 }) });
    const conns: ReturnType<typeof raw>[] = [];
    try {
      const heapBefore = process.memoryUsage().heapUsed;
      // (the first of each connection is a plain read waiting on v1; 60 of the large ones wait behind it)
      for (let c = 0; c < 2; c++) {
        const conn = raw(port);
        conns.push(conn);
        let out = `GET /renders?fields=id&limit=1&c=${c} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\n\r\n`;
        for (let i = 0; i < 60; i++) out += line(i);
        conn.socket.write(out);
      }
      expect(await until(async () => (await waiting()) >= 120, 10_000)).toBe(true);
      // 120 parsed queries would hold ~90 MB; their text is 1.8 MB
      expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(25 * 1024 * 1024);
      expect(await until(() => conns.every((c) => (c.received().match(/HTTP\/1\.1 \d{3} /g) ?? []).length === 61), 60_000)).toBe(true);
      for (const c of conns) {
        const statuses = [...c.received().matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
        expect(statuses).toEqual(['200', ...Array(60).fill('400')]);
        expect(c.received()).toContain('INVALID_QUERY');
      }
    } finally {
      for (const c of conns) c.socket.destroy();
      await fetch(`${gw.s.url}/_sim/faults`, { method: 'DELETE' });
    }
  }, 90_000);

  it('an anonymous flood closed under its queued answers leaves its address able to log in (N2)', async () => {
    for (let round = 0; round < 3; round++) {
      const c = raw(port);
      c.socket.write('GET /renders?limit=1 HTTP/1.1\r\nhost: x\r\n\r\n'.repeat(2000));
      await sleep(150);
      c.socket.destroy();
    }
    await sleep(500);
    const res = await fetch(`http://127.0.0.1:${port}/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'pipe@example.com', password: 'pipe-password-123' }),
    });
    expect(res.status).toBe(200);
  }, 60_000);
});
