import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * When a request's work is over: its reply closed (sent, or its client gone) and its handler done — Fastify's onSend has
 * run, which it does after the handler's answer, after an error, and after a body whose client left mid-way. A client
 * that hangs up once its body is sent does not end the work it asked for: the body, parsed, is held while its question
 * runs. Gates given back at the hang-up let one user's 900 KB SEARCH bodies, each connection closed 20 ms after sending,
 * take an instance to 5.2 GB and out of memory with no 429 (attack pass 20, N2).
 */
interface Progress { sent: boolean; closed: boolean; readonly then: (() => void)[]; readonly onSent: (() => void)[] }

declare module 'fastify' {
  interface FastifyReply {
    /** Where its request stands (a property, not a WeakMap: one a request made GC work). */
    requestEnd: Progress | null;
  }
}

function of(reply: FastifyReply): Progress {
  let p = reply.requestEnd;
  if (!p) {
    const socket = reply.request.raw.socket as Socket | null;
    const q: Progress = { sent: false, closed: reply.raw.destroyed || reply.raw.writableFinished || !!socket?.destroyed, then: [], onSent: [] };
    if (!q.closed) {
      const close = () => {
        if (q.closed) return;
        q.closed = true;
        if (socket) socketEnds.get(socket)?.delete(close);
        settle(q);
      };
      reply.raw.once('close', close);
      // (an answer queued behind another on its connection — HTTP/1.1 pipelining — has no socket yet, and never emits
      // 'close' when the connection is closed under it: its request ends with the connection — attack pass 24, N2: the
      // anonymous gate's places leaked, an address answered 429 until a restart)
      if (socket) onSocketClose(socket, close);
    }
    reply.requestEnd = p = q;
  }
  return p;
}

/** The requests of each connection still waiting for their reply's close (one 'close' listener a connection). */
const socketEnds = new WeakMap<Socket, Set<() => void>>();

function onSocketClose(socket: Socket, fn: () => void): void {
  let ends = socketEnds.get(socket);
  if (!ends) {
    const mine = new Set<() => void>();
    socketEnds.set(socket, (ends = mine));
    socket.once('close', () => { for (const end of [...mine]) end(); });
  }
  ends.add(fn);
}

function settle(p: Progress): void {
  if (!p.sent || !p.closed) return;
  for (const fn of p.then.splice(0)) fn();
}

/** Runs `fn` once `reply`'s request has ended: its handler done and its reply closed (whichever comes last). */
export function afterRequest(reply: FastifyReply, fn: () => void): void {
  const p = of(reply);
  p.then.push(fn);
  settle(p);
}

/** Runs `fn` once `reply`'s answer is handed to Fastify (its handler done: what is left is sending it). */
export function whenSent(reply: FastifyReply, fn: () => void): void {
  const p = of(reply);
  if (p.sent) fn();
  else p.onSent.push(fn);
}

/** Tells `afterRequest` when a reply's answer is handed to Fastify (every route's onSend). */
export function trackRequestEnds(app: FastifyInstance): void {
  app.decorateReply('requestEnd', null);
  app.addHook('onSend', (_request, reply, payload, done) => {
    const p = of(reply);
    p.sent = true;
    for (const fn of p.onSent.splice(0)) fn();
    settle(p);
    done(null, payload);
  });
}
