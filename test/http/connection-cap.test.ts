import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startGateway } from '../helpers/gateway.js';

/**
 * Connections open at once from one client address are bounded (MAX_CONNECTIONS_PER_ADDRESS): past it, the next is
 * answered 429 in the envelope and closed; one closed, a new one is served. Trusted proxies are not counted (attack
 * pass 19, F3: anonymous POSTs on 3 000 connections from one address held another user's read 9–16 s).
 */
const open = (port: number) => new Promise<Socket>((resolve, reject) => {
  const socket = connect(port, '127.0.0.1', () => resolve(socket));
  socket.on('error', reject);
});
/** What the connection answers to a ping (until the peer closes it, or the first full answer). */
const ping = (socket: Socket) => new Promise<string>((resolve) => {
  let text = '';
  socket.on('data', (c: Buffer) => {
    text += c.toString();
    const head = text.indexOf('\r\n\r\n');
    const length = /\r\ncontent-length: (\d+)/i.exec(text)?.[1];
    if (head >= 0 && length !== undefined && Buffer.byteLength(text.slice(head + 4)) >= Number(length)) resolve(text);
  });
  socket.on('close', () => resolve(text));
  socket.on('error', () => resolve(text));
  socket.write('GET /server/ping HTTP/1.1\r\nhost: x\r\n\r\n');
});

describe('connections per client address', () => {
  it('past MAX_CONNECTIONS_PER_ADDRESS: 429 on the bare socket, closed; a place given back when one closes', async () => {
    const gw = await startGateway({ INDEX_ENABLED: 'false', MAX_CONNECTIONS_PER_ADDRESS: '8' });
    const sockets: Socket[] = [];
    try {
      const port = Number(new URL(await gw.app.listen({ port: 0, host: '127.0.0.1' })).port);
      for (let i = 0; i < 8; i++) sockets.push(await open(port));
      expect(await ping(sockets[0]!)).toMatch(/^HTTP\/1\.1 200 /);
      const ninth = await open(port);
      sockets.push(ninth);
      const refused = await ping(ninth);
      expect(refused).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/);
      expect(refused).toMatch(/\r\nretry-after: 1\r\n/);
      expect(JSON.parse(refused.slice(refused.indexOf('\r\n\r\n') + 4)).errors[0].extensions.code).toBe('REQUESTS_EXCEEDED');
      // one of the eight closed: a new connection is served
      await new Promise<void>((r) => { sockets[1]!.once('close', () => r()); sockets[1]!.destroy(); });
      await new Promise((r) => setTimeout(r, 50));
      const tenth = await open(port);
      sockets.push(tenth);
      expect(await ping(tenth)).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      for (const s of sockets) s.destroy();
      await gw.close();
    }
  });

  it('a trusted proxy\'s connections are not counted (TRUST_PROXY naming it, by address or by name)', async () => {
    for (const trust of ['127.0.0.1', 'loopback', '2']) {
      const gw = await startGateway({ INDEX_ENABLED: 'false', MAX_CONNECTIONS_PER_ADDRESS: '4', TRUST_PROXY: trust });
      const sockets: Socket[] = [];
      try {
        const port = Number(new URL(await gw.app.listen({ port: 0, host: '127.0.0.1' })).port);
        for (let i = 0; i < 6; i++) sockets.push(await open(port));
        expect(await ping(sockets[5]!), trust).toMatch(/^HTTP\/1\.1 200 /);
      } finally {
        for (const s of sockets) s.destroy();
        await gw.close();
      }
    }
    // a list that does not name the peer: counted
    const gw = await startGateway({ INDEX_ENABLED: 'false', MAX_CONNECTIONS_PER_ADDRESS: '4', TRUST_PROXY: '10.0.0.0/8' });
    const sockets: Socket[] = [];
    try {
      const port = Number(new URL(await gw.app.listen({ port: 0, host: '127.0.0.1' })).port);
      for (let i = 0; i < 5; i++) sockets.push(await open(port));
      expect(await ping(sockets[4]!)).toMatch(/^HTTP\/1\.1 429 /);
    } finally {
      for (const s of sockets) s.destroy();
      await gw.close();
    }
  });
});
