import { BlockList, isIP, type Socket } from 'node:net';
import type { Server } from 'node:http';
import { errorEnvelope, errors } from '../errors/catalog.js';

/**
 * Connections open at once from one peer address, past MAX_CONNECTIONS_PER_ADDRESS: the next is answered 429 on the bare
 * socket and closed. Each connection a flood keeps busy costs every other request a share of each turn of the event loop
 * and of the store's queue: anonymous POSTs on 3 000 keep-alive connections from one address held another user's
 * one-item read 9–16 s, on 200 connections 86 ms (attack pass 19, F3). Peers that are trusted proxies (TRUST_PROXY) are
 * not counted: their connections carry many clients, whose floods are the proxy's to limit.
 */
export function capConnections(server: Server, most: number, trusted: boolean | number | readonly string[]): void {
  if (most <= 0 || trusted === true || typeof trusted === 'number') return;
  const proxies = trusted === false ? undefined : proxyList(trusted);
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = peer(socket.remoteAddress);
    if (!address || proxies?.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4')) return;
    const n = (open.get(address) ?? 0) + 1;
    if (n > most) { refuse(socket); return; }
    open.set(address, n);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

/** An IPv4 peer seen through an IPv6 socket (`::ffff:10.0.0.1`) as itself. */
const peer = (address: string | undefined): string | undefined =>
  address?.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;

function refuse(socket: Socket): void {
  const ge = errors.requestsExceeded(1);
  const body = JSON.stringify(errorEnvelope(ge));
  socket.on('error', () => {});
  socket.end(`HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json; charset=utf-8\r\nretry-after: 1\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

/** proxy-addr's names for address ranges, as TRUST_PROXY takes them. */
const NAMED: Record<string, readonly string[]> = {
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

function proxyList(list: readonly string[]): BlockList {
  const block = new BlockList();
  for (const entry of list.flatMap((x) => NAMED[x] ?? [x])) {
    const [address = '', bits] = entry.split('/');
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) block.addAddress(address, type);
    else block.addSubnet(address, Number(bits), type);
  }
  return block;
}
