import { BlockList, isIP, type Socket } from 'node:net';
import type { Server } from 'node:http';
import { errorEnvelope, errors } from '../errors/catalog.js';
import { peerKey } from '../lib/peer.js';

/**
 * Connections open at once from one peer address, at most MAX_CONNECTIONS_PER_ADDRESS. Each connection a flood keeps busy
 * costs every other request a share of each turn of the event loop and of the store's queue: anonymous POSTs on 3 000
 * keep-alive connections from one address held another user's one-item read 9–16 s, on 200 connections 86 ms (attack
 * pass 19, F3). Peers that are trusted proxies (TRUST_PROXY) are not counted: their connections carry many clients,
 * whose floods are the proxy's to limit.
 *
 * At the bound, a new connection takes the place of the address's least recently active connection (by its last request's
 * start or end) with no request (idle or silent since it opened); when each has one, of the least recently active whose
 * request is not worked on (still sending its body, waiting for its body's turn, or its answer being sent — to a reader
 * that may have stopped reading: attack pass 22, P4): 256 silent connections from one address shut every other client
 * of it out (attack pass 21, R2). Only when each is working (a request past its body, its handler running) is the new
 * one answered 429 on the bare socket and closed at once (an ended socket left half-open, uncounted, took an instance to
 * its file limit: R4).
 */
export class ConnectionCap {
  /** The open connections of each counted address, the least recently active first (a Set keeps insertion order). */
  private readonly open = new Map<string, Set<Socket>>();
  /** Each counted connection's set. */
  private readonly of = new WeakMap<Socket, Set<Socket>>();
  /** Requests being worked on per connection (from its handler's start until its answer is handed on). */
  private readonly working = new WeakMap<Socket, number>();
  /** Requests per connection from their headers to their end. */
  private readonly asked = new WeakMap<Socket, number>();

  constructor(private readonly most: number, private readonly exempt: (address: string) => boolean) {}

  /** Counts a new connection: at the bound evicts one of the address's (see above), or refuses this one. */
  admit(socket: Socket): void {
    if (!socket.remoteAddress || this.exempt(socket.remoteAddress)) return;
    const address = peerKey(socket.remoteAddress);
    const mine = this.open.get(address) ?? new Set<Socket>();
    if (mine.size >= this.most) {
      // (first one with no request at all, then one still receiving its request: the least recently active of each)
      const idle = [...mine].find((s) => !this.asked.get(s)) ?? [...mine].find((s) => !this.working.get(s));
      if (!idle) { refuse(socket); return; }
      mine.delete(idle);
      idle.destroy();
    }
    mine.add(socket);
    this.of.set(socket, mine);
    this.open.set(address, mine);
    socket.once('close', () => {
      mine.delete(socket);
      if (mine.size === 0 && this.open.get(address) === mine) this.open.delete(address);
    });
  }

  /**
   * A request came on `socket` (its headers read): the connection is the address's most recently active, and one with a
   * request is evicted only when none of the address has none. The function ends that (the request has ended). A
   * client's keep-alive connection opened first, idle between its requests, was the oldest and evicted by each new
   * connection of a flood from its address — reads stalled 1–6 s (the review of attack pass 21's R1); and one client
   * churning silent connections reset every upload in progress from its address (attack pass 22, P2).
   */
  begin(socket: Socket | null | undefined): () => void {
    if (!socket) return () => {};
    this.touch(socket);
    return counted(this.asked, socket, () => this.touch(socket));
  }

  private touch(socket: Socket): void {
    const mine = this.of.get(socket);
    if (!mine?.delete(socket)) return;
    mine.add(socket);
  }

  /** A request on `socket` is being worked on (its body read, its handler running); the function ends that (its answer handed on). */
  work(socket: Socket | null | undefined): () => void {
    // (not made recently active when it ends: a reader that stopped reading is evicted before a later upload — review of
    // P4's fix)
    return socket ? counted(this.working, socket) : () => {};
  }
}

/** One more for `socket` in `counts`; the function (once) takes it back, then runs `after`. */
function counted(counts: WeakMap<Socket, number>, socket: Socket, after?: () => void): () => void {
  counts.set(socket, (counts.get(socket) ?? 0) + 1);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    counts.set(socket, Math.max(0, (counts.get(socket) ?? 1) - 1));
    after?.();
  };
}

/** The cap for `server`, or undefined when nothing is counted (no bound, or every peer a trusted proxy). */
export function capConnections(server: Server, most: number, trusted: TrustProxy): ConnectionCap | undefined {
  if (most <= 0 || trusted === true || typeof trusted === 'number') return undefined;
  const cap = new ConnectionCap(most, trustedPeer(trusted));
  server.on('connection', (socket: Socket) => cap.admit(socket));
  return cap;
}

/** TRUST_PROXY as parsed: every hop, a number of hops nearest the gateway, or a list of addresses and ranges. */
export type TrustProxy = boolean | number | readonly string[];

/**
 * Whether a peer is a trusted proxy, whose connections carry many clients: every peer when TRUST_PROXY trusts every hop or
 * a number of them (the nearest hop is a proxy), those of the list when it lists them, none when false.
 */
export function trustedPeer(trusted: TrustProxy): (address: string) => boolean {
  if (trusted === true || typeof trusted === 'number') return () => true;
  if (trusted === false) return () => false;
  const proxies = proxyList(trusted);
  return (raw) => {
    const address = raw.startsWith('::ffff:') && isIP(raw.slice(7)) === 4 ? raw.slice(7) : raw;
    const kind = isIP(address);
    return kind !== 0 && proxies.check(address, kind === 6 ? 'ipv6' : 'ipv4');
  };
}

function refuse(socket: Socket): void {
  const ge = errors.requestsExceeded(1);
  const body = JSON.stringify(errorEnvelope(ge));
  socket.on('error', () => {});
  socket.write(`HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json; charset=utf-8\r\nretry-after: 1\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`, () => socket.destroy());
  // (a peer that reads nothing does not hold it either)
  setTimeout(() => socket.destroy(), 1_000).unref();
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
