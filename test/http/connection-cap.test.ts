import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { call } from '../helpers/sim.js';

/**
 * Connections open at once from one client address are bounded (MAX_CONNECTIONS_PER_ADDRESS; attack pass 19, F3:
 * anonymous POSTs on 3 000 connections from one address held another user's read 9–16 s). At the bound a new connection
 * takes the place of the address's oldest idle one (attack pass 21, R2: 256 silent connections shut the address's other
 * clients out); when every one is working, the next is answered 429 in the envelope and closed at once (R4: ended but
 * left half-open, refused sockets took an instance to its file limit). Trusted proxies are not counted.
 */
const open = (port: number, allowHalfOpen = false) => new Promise<Socket>((resolve, reject) => {
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen }, () => resolve(socket));
  socket.on('error', reject);
});
/** What the connection answers to a request (until a full answer, or the peer closes it). */
const ask = (socket: Socket, path: string, token?: string) => new Promise<string>((resolve) => {
  let text = '';
  socket.on('data', (c: Buffer) => {
    text += c.toString();
    const head = text.indexOf('\r\n\r\n');
    const length = /\r\ncontent-length: (\d+)/i.exec(text)?.[1];
    if (head >= 0 && length !== undefined && Buffer.byteLength(text.slice(head + 4)) >= Number(length)) resolve(text);
  });
  socket.on('close', () => resolve(text));
  socket.on('error', () => resolve(text));
  socket.write(`GET ${path} HTTP/1.1\r\nhost: x\r\n${token ? `authorization: Bearer ${token}\r\n` : ''}\r\n`);
});
const closed = (socket: Socket) => new Promise<void>((r) => { if (socket.destroyed) r(); else socket.once('close', () => r()); });

let gw: TestGateway | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  if (gw) await call(gw.s.url, '/_sim/faults', { method: 'DELETE' });
  await gw?.close();
  gw = undefined;
});

/** A gateway capped at `most`, listening; a user whose reads go to v1 (slowed by `latency` ms), and its token. */
async function capped(most: number, env: Record<string, string> = {}, latency = 0) {
  gw = await startGateway({ INDEX_ENABLED: 'false', MAX_CONNECTIONS_PER_ADDRESS: String(most), ...env });
  await gw.addUser(0, 'cap@example.com');
  const token = await gw.login('cap@example.com');
  const port = Number(new URL(await gw.app.listen({ port: 0, host: '127.0.0.1' })).port);
  if (latency) await call(gw.s.url, '/_sim/faults', { method: 'POST', body: { latency_ms: latency } });
  return { port, token };
}

/** `n` connections each with a read in progress (v1 slowed): their answers. */
async function working(port: number, token: string, n: number): Promise<Promise<string>[]> {
  const answers: Promise<string>[] = [];
  for (let i = 0; i < n; i++) {
    const s = await open(port);
    sockets.push(s);
    answers.push(ask(s, '/renders?limit=1&fields=id', token));
  }
  await new Promise((r) => setTimeout(r, 300)); // (each past its body, its handler waiting on v1)
  return answers;
}

describe('connections per client address', () => {
  it('at the bound, a new connection takes the place of the oldest idle one: silent connections shut no one out (R2)', async () => {
    const { port } = await capped(8);
    for (let i = 0; i < 8; i++) sockets.push(await open(port));
    const ninth = await open(port);
    sockets.push(ninth);
    expect(await ask(ninth, '/server/ping')).toMatch(/^HTTP\/1\.1 200 /);
    await closed(sockets[0]!); // the oldest silent one made room
    expect(sockets.slice(1, 8).every((s) => !s.destroyed)).toBe(true);
  });

  it('the connection evicted is the least recently active: a client\'s keep-alive connection opened first is kept while it asks (review of R1)', async () => {
    const { port } = await capped(8);
    const first = await open(port);
    sockets.push(first);
    expect(await ask(first, '/server/ping')).toMatch(/^HTTP\/1\.1 200 /);
    const silent: Socket[] = [];
    for (let i = 0; i < 7; i++) silent.push(await open(port));
    sockets.push(...silent);
    // the first connection asks again: the most recently active now, though opened first
    first.removeAllListeners('data');
    expect(await ask(first, '/server/ping')).toMatch(/^HTTP\/1\.1 200 /);
    const ninth = await open(port);
    sockets.push(ninth);
    expect(await ask(ninth, '/server/ping')).toMatch(/^HTTP\/1\.1 200 /);
    // the silent one opened earliest made room (before: the first connection, the oldest opened)
    expect(await Promise.race([closed(silent[0]!).then(() => 'silent'), closed(first).then(() => 'first')])).toBe('silent');
    expect(first.destroyed).toBe(false);
    first.removeAllListeners('data');
    expect(await ask(first, '/server/ping')).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('a connection receiving its request is not evicted while others have none: silent connections churned reset no upload (attack pass 22, P2)', async () => {
    const { port, token } = await capped(8);
    // an upload in progress: its headers sent, its body a part at a time
    const body = JSON.stringify({ query: { limit: 1, fields: ['id'], search: 'x'.repeat(2_000) } });
    const upload = await open(port);
    sockets.push(upload);
    let answer = '';
    upload.on('data', (c: Buffer) => { answer += c.toString(); });
    const ended = new Promise<void>((r) => upload.once('close', () => r()));
    upload.write(`SEARCH /renders HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body.slice(0, 100)}`);
    await new Promise((r) => setTimeout(r, 200));
    // silent connections, far more than the bound, each opened as the last took a place
    for (let i = 0; i < 24; i++) sockets.push(await open(port));
    upload.write(body.slice(100));
    await ended;
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('a connection sending an answer its reader does not read is evicted, not the newcomer refused (attack pass 22, P4)', async () => {
    const { port, token } = await capped(4, { HEAVY_READS_PER_KEY: '16' });
    // twelve renders carrying 900 KB of data each: an answer of 11 MB, more than the connection's buffers take
    const auth = { authorization: `Bearer ${token}` };
    const { id: project, account } = (await gw!.app.inject({ url: '/projects?limit=1&fields=id,account', headers: auth })).json().data[0];
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const r = await gw!.app.inject({ method: 'POST', url: '/renders', headers: auth, payload: { project, account, data: { text: `${i}`.padEnd(900_000, 'x') } } });
      expect(r.statusCode, r.body.slice(0, 300)).toBe(200);
      ids.push(r.json().data.id as string);
    }
    // four readers of it that never read it
    const readers: Socket[] = [];
    for (let i = 0; i < 4; i++) {
      const s = await open(port);
      sockets.push(s);
      readers.push(s);
      s.write(`GET /renders?limit=-1&fields=id,data&filter[id][_in]=${ids.join(',')}&x=${i} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\n\r\n`);
    }
    // each answer begun (its head arrived): the handlers are done, the answers wait on their readers
    for (let i = 0; i < 600 && readers.some((s) => s.readableLength === 0); i++) await new Promise((r) => setTimeout(r, 25));
    expect(readers.every((s) => s.readableLength > 0)).toBe(true);
    const fifth = await open(port);
    sockets.push(fifth);
    expect(await ask(fifth, '/server/ping')).toMatch(/^HTTP\/1\.1 200 /);
    // (a reader's socket sees its end once it reads: the one evicted is closed, the others stay open)
    for (const s of readers) s.resume();
    expect(await Promise.race([Promise.any(readers.map(closed)).then(() => 'a reader'), new Promise((r) => setTimeout(r, 10_000, 'none'))]))
      .toBe('a reader');
  }, 60_000);

  it('when every connection of the address is working: 429 on the bare socket, closed at once (R4); served again once they end', async () => {
    const { port, token } = await capped(4, {}, 1_500);
    const answers = await working(port, token, 4);
    // (a peer that never closes its side: the gateway closes the connection all the same)
    const fifth = await open(port, true);
    sockets.push(fifth);
    const refused = await new Promise<string>((resolve) => {
      let text = '';
      fifth.on('data', (c: Buffer) => { text += c.toString(); if (/"errors"[^]*\}$/.test(text)) resolve(text); });
      fifth.write('GET /server/ping HTTP/1.1\r\nhost: x\r\n\r\n');
    });
    expect(refused).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/);
    expect(refused).toMatch(/\r\nretry-after: 1\r\n/);
    expect(JSON.parse(refused.slice(refused.indexOf('\r\n\r\n') + 4)).errors[0].extensions.code).toBe('REQUESTS_EXCEEDED');
    const connections = () => new Promise<number>((r) => gw!.app.server.getConnections((_e, n) => r(n)));
    for (let i = 0; i < 40 && (await connections()) > 4; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await connections()).toBe(4);
    for (const a of answers) expect(await a).toMatch(/^HTTP\/1\.1 200 /);
    const later = await open(port);
    sockets.push(later);
    expect(await ask(later, '/server/ping')).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('a trusted proxy\'s connections are not counted (TRUST_PROXY naming it, by address, by name or by hops); a list not naming it counts', async () => {
    for (const trust of ['127.0.0.1', 'loopback', '2']) {
      const { port, token } = await capped(2, { TRUST_PROXY: trust }, 1_000);
      const answers = await working(port, token, 4);
      for (const a of answers) expect(await a, trust).toMatch(/^HTTP\/1\.1 200 /);
      for (const s of sockets.splice(0)) s.destroy();
      await call(gw!.s.url, '/_sim/faults', { method: 'DELETE' });
      await gw!.close();
      gw = undefined;
    }
    const { port, token } = await capped(2, { TRUST_PROXY: '10.0.0.0/8' }, 1_000);
    const answers = [...await working(port, token, 2), ...await working(port, token, 1)];
    const codes = (await Promise.all(answers)).map((a) => a.slice(9, 12));
    expect(codes).toEqual(['200', '200', '429']);
  });
});
