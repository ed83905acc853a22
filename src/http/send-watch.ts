import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * A connection whose answer stopped moving — bytes waiting to be written, none written for `HTTP_IDLE_TIMEOUT_MS` — is
 * closed, and what its answer held given back. Node's own idle timer lets such a connection live up to twice that bound
 * (a timeout is passed over whenever the socket's write queue changed since the last one: the write that filled it
 * counts), and a streamed answer waiting for the reader to drain wrote nothing Node could time: a reader that stopped
 * reading held its answer's memory for 300 s and more (attack pass 22, P4: one such reply lived the whole 340 s of a run).
 * A reader that takes its answer slowly, a byte now and then, is never closed by this: only one that took nothing.
 * Every connection is watched from its opening (only an answer leaves bytes waiting: one between answers, or whose
 * answer is written whole, is never closed) — nothing is done per request.
 */
export class SendWatch {
  /** Each watched socket: where its writing stood when last seen to move, and when. */
  private readonly watched = new Map<Socket, { stood: string; at: number }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly idleMs: number, private readonly now: () => number = Date.now, private readonly onClose: () => void = () => {}) {}

  /** Watches `socket` from now on until it closes. */
  watch(socket: Socket): void {
    if (this.idleMs <= 0 || socket.destroyed || this.watched.has(socket)) return;
    this.watched.set(socket, { stood: standing(socket), at: this.now() });
    socket.once('close', () => this.watched.delete(socket));
    // (checked a quarter of the bound apart: a stalled answer is closed within 1.25 times it)
    this.timer ??= setInterval(() => this.check(), Math.max(250, Math.floor(this.idleMs / 4))).unref();
  }

  /** Closes each watched connection with bytes waiting and none written for the bound; the rest are seen again. */
  check(): void {
    const now = this.now();
    for (const [socket, seen] of this.watched) {
      if (socket.destroyed) { this.watched.delete(socket); continue; }
      const stood = standing(socket);
      if (stood !== seen.stood || !waiting(socket)) {
        seen.stood = stood;
        seen.at = now;
        continue;
      }
      if (now - seen.at < this.idleMs) continue;
      this.watched.delete(socket);
      socket.destroy();
      this.onClose();
    }
    if (this.watched.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** How many connections are watched (those open). */
  get size(): number {
    return this.watched.size;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.watched.clear();
  }
}

/**
 * The bytes a socket has yet to write: in its stream's buffer, and in the kernel-bound queue below it (a large write is
 * handed down whole at once: `bytesWritten` counts it then, and only this queue shrinks as the reader takes it — the
 * measure Node's own idle timer reads).
 */
const queued = (socket: Socket): number => (socket as unknown as { _handle?: { writeQueueSize?: number } | null })._handle?.writeQueueSize ?? 0;
const standing = (socket: Socket): string => `${socket.bytesWritten}:${socket.writableLength}:${queued(socket)}`;
const waiting = (socket: Socket): boolean => socket.writableLength > 0 || queued(socket) > 0;

/** Watches every connection of `app`'s server from its opening until it closes. */
export function watchSends(app: FastifyInstance, watch: SendWatch): void {
  app.server.on('connection', (socket: Socket) => watch.watch(socket));
  app.addHook('onClose', (_app, done) => { watch.stop(); done(); });
}
