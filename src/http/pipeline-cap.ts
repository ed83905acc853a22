import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterRequest } from './request-end.js';
import { peerKey } from '../lib/peer.js';

/**
 * Requests one connection has worked on at once: HTTP/1.1 answers a connection's requests in order anyway, and nginx
 * works on a connection's pipelined requests one at a time too. (8 let one address's 200 connections work on 1 600
 * reads at once: 556 MB, another user's read 10 s — attack pass 25, P1 re-measured.)
 */
export const CONNECTION_IN_FLIGHT = 1;
/** Requests of one connection read and waiting for their turn; past it the connection is closed. */
export const CONNECTION_WAITING = 64;
/** Requests waiting for their turn on the connections of one peer address, together; past it the connection is closed. */
export const ADDRESS_WAITING = 256;
/** Requests waiting for their turn on all connections, together; past it the connection is closed. */
export const INSTANCE_WAITING = 4096;

/** The bounds (the constants above when left out), and the peers not counted per address (trusted proxies). */
export interface PipelineBounds {
  readonly inFlight?: number;
  readonly connectionWaiting?: number;
  readonly addressWaiting?: number;
  readonly instanceWaiting?: number;
  readonly exempt?: (address: string) => boolean;
}

interface Line {
  running: number;
  readonly waiting: ((gone: boolean) => void)[];
  /** This bound stopped reading the connection (and resumes it). */
  paused: boolean;
  /** Closed by this bound (counted once). */
  closed: boolean;
  /** The peer's key (lib/peer.ts), or undefined for a trusted proxy (not counted per address: it carries many clients). */
  readonly address: string | undefined;
}

/**
 * Requests in flight per connection. Node's HTTP server reads pipelined requests ahead of their answers and Fastify
 * starts each at once: one connection writing 20 000 light reads at once, reading nothing, took an instance to 2.2 GB
 * and another tenant's reads to 22–53 s (attack pass 24, N1) — every other bound counts connections, bodies, heavy
 * reads or answer bytes. Past CONNECTION_IN_FLIGHT a request waits for an earlier one of its connection to end, and the
 * connection is not read meanwhile (what was read already is parsed: a chunk at most). Waiting requests are bounded per
 * connection (CONNECTION_WAITING), per peer address (ADDRESS_WAITING: 200 connections of one address each holding 1 000
 * waiting reads took an instance to 1.9 GB and others' reads to 21–52 s — attack pass 25, P1) and per instance
 * (INSTANCE_WAITING): a request past one of them closes its connection, and its waiting requests end unanswered, as
 * they do when the connection closes. About 9 KB a waiting request: 37 MB at most in all.
 */
export class PipelineCap {
  private readonly lines = new WeakMap<Socket, Line>();
  /** Connections closed for piling up requests. */
  closed = 0;
  /** Requests waiting for their turn on their connection, all connections together. */
  waitingNow = 0;
  /** Requests waiting per peer address. */
  private readonly byAddress = new Map<string, number>();
  /** The next requests of connections whose last one ended, started a few a turn. */
  private readonly turns = new Turns();

  private readonly most: number;
  private readonly waitingMost: number;
  private readonly addressMost: number;
  private readonly instanceMost: number;
  private readonly exempt: (address: string) => boolean;

  constructor(bounds: PipelineBounds = {}) {
    this.most = bounds.inFlight ?? CONNECTION_IN_FLIGHT;
    this.waitingMost = bounds.connectionWaiting ?? CONNECTION_WAITING;
    this.addressMost = bounds.addressWaiting ?? ADDRESS_WAITING;
    this.instanceMost = bounds.instanceWaiting ?? INSTANCE_WAITING;
    this.exempt = bounds.exempt ?? (() => false);
  }

  /** Calls `go` when the request may start (now, or once an earlier one of its connection ended), or `refuse` when it will not. */
  enter(socket: Socket, go: (leave: () => void) => void, refuse: () => void): void {
    const line = this.lineOf(socket);
    const start = () => {
      line.running++;
      let left = false;
      go(() => {
        if (left) return;
        left = true;
        this.leave(socket, line);
      });
    };
    if (line.running < this.most && !line.closed) { start(); return; }
    const atAddress = line.address === undefined ? 0 : this.byAddress.get(line.address) ?? 0;
    if (line.closed || line.waiting.length >= this.waitingMost || atAddress >= this.addressMost || this.waitingNow >= this.instanceMost) {
      if (!line.closed) {
        line.closed = true;
        this.closed++;
        socket.destroy();
      }
      refuse();
      return;
    }
    // (each time: Node resumes a connection it paused itself once its answers drain)
    line.paused = true;
    socket.pause();
    this.waitingNow++;
    const address = line.address;
    if (address !== undefined) this.byAddress.set(address, atAddress + 1);
    line.waiting.push((gone) => {
      this.waitingNow--;
      if (address !== undefined) {
        const left = (this.byAddress.get(address) ?? 1) - 1;
        if (left > 0) this.byAddress.set(address, left);
        else this.byAddress.delete(address);
      }
      if (gone) refuse();
      else start();
    });
  }

  private lineOf(socket: Socket): Line {
    let line = this.lines.get(socket);
    if (!line) {
      const raw = socket.remoteAddress ?? '';
      const made: Line = { running: 0, waiting: [], paused: false, closed: false, address: this.exempt(raw) ? undefined : peerKey(raw) };
      this.lines.set(socket, (line = made));
      socket.once('close', () => { for (const w of made.waiting.splice(0)) w(true); });
    }
    return line;
  }

  private leave(socket: Socket, line: Line): void {
    const next = line.waiting.shift();
    // the next one in a later turn of the event loop, after what the sockets have brought, and only as many a turn as fit
    // in TURN_MS (every connection's next one started as the last ended — its answer's end comes in a tick — ran 6 144
    // pipelined requests as one block of 6.5 s, another user's read waiting 6–13 s behind it: attack pass 27, N-1)
    // (its place kept meanwhile: a request read in between waits behind it)
    if (next) {
      this.turns.add(() => {
        line.running--;
        // (a start that throws would leave its place taken and the connection's later requests waiting: it is closed)
        try { next(socket.destroyed); } catch (e) { socket.destroy(); throw e; }
      });
      return;
    }
    line.running--;
    // (read again once nothing waits — unless Node paused it for its own reasons: answers its reader has not taken)
    if (line.paused && !socket.destroyed) {
      line.paused = false;
      if (!(socket as { _paused?: boolean })._paused) socket.resume();
    }
  }
}

/** What a turn of the event loop spends starting pipelined requests (their hooks up to the first wait: a query's parse). */
export const TURN_MS = 4;

/** Work started in later turns of the event loop, in order, as much a turn as fits in TURN_MS (one at least). */
class Turns {
  private readonly queue: (() => void)[] = [];
  private scheduled = false;

  add(work: () => void): void {
    this.queue.push(work);
    if (!this.scheduled) { this.scheduled = true; setImmediate(() => this.run()); }
  }

  private run(): void {
    const until = performance.now() + TURN_MS;
    let i = 0;
    do {
      try {
        this.queue[i++]!();
      } catch (e) {
        // (one request's start failing stops no other's)
        process.emitWarning(`a pipelined request could not start: ${String(e)}`);
      }
    } while (i < this.queue.length && performance.now() < until);
    this.queue.splice(0, i);
    if (this.queue.length > 0) setImmediate(() => this.run());
    else this.scheduled = false;
  }
}

/** `cap` as the first hook of every request (a connection from `inject`, which has no socket to pause, is not counted). */
export function capPipelines(app: FastifyInstance, cap: PipelineCap): PipelineCap {
  app.addHook('onRequest', (request, reply, done) => {
    const socket = request.raw.socket as Socket | null;
    if (!socket || typeof socket.pause !== 'function' || typeof socket.resume !== 'function' || !('remoteAddress' in socket) || !socket.remoteAddress) {
      done();
      return;
    }
    // a request refused is one of a connection closed under it (by a bound, or by its client): let go at once, no error
    // answer built for nobody — the rest of a chunk Node had read, hundreds a connection, each answered 429 made a
    // flood's refusal cost seconds
    cap.enter(socket, (leave) => { afterRequest(reply, leave); done(); }, () => { void reply.hijack(); done(); });
  });
  return cap;
}
