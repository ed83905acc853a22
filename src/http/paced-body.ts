import { Readable } from 'node:stream';
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { Deps } from '../deps.js';
import type { AnswerHold } from '../read/in-flight.js';
import type { RequestContext } from '../read/request-context.js';

/**
 * A streamed body written as its reader takes it. The next chunk is asked for — and so built: an item of render data, a
 * part of a file — only while the connection takes what it is given (the body is not paused: its writer's buffer has
 * drained), never read ahead; the chunk handed on is carried in the answer memory of the reader's key until the
 * connection took it, or the client is gone. So a reader that stops reading pins one chunk, counted: past the key's bound
 * the data room builds no more render data for that key until some is sent (attack pass 8: 130 stalled readers of 16 MB
 * items held 3.3 GB, uncounted).
 */
export async function pacedBody(
  deps: Pick<Deps, 'answerMemory'>, ctx: RequestContext, reply: FastifyReply, chunks: AsyncIterable<Uint8Array | string>,
): Promise<Readable> {
  const hold = deps.answerMemory.reserve((await ctx.session()).partition);
  const res = reply.raw;
  res.once('close', () => hold.release());
  if (res.destroyed || res.writableFinished) hold.release();
  const body: Readable = Readable.from(paced(chunks, res, () => body, hold), { objectMode: true, highWaterMark: 1 });
  return body;
}

/**
 * `chunks` one at a time, each asked for once the one before was taken: the body (`body()`, piped into `res`) is not
 * paused, or its writer drained since. Ends when the client is gone.
 */
export async function* paced(
  chunks: AsyncIterable<Uint8Array | string>, res: ServerResponse, body: () => Readable, hold: Pick<AnswerHold, 'carry' | 'settle'>,
): AsyncGenerator<Uint8Array | string> {
  const it = chunks[Symbol.asyncIterator]();
  const gone = { now: false };
  res.once('close', () => { if (!res.writableFinished) gone.now = true; });
  let ended = false;
  try {
    for (;;) {
      if (body().readableFlowing === false) await drained(res);
      if (gone.now || res.destroyed) return;
      hold.settle(0); // (what was handed on was taken)
      const next = await it.next();
      if (next.done) {
        ended = true;
        return;
      }
      hold.carry(typeof next.value === 'string' ? Buffer.byteLength(next.value) : next.value.byteLength);
      yield next.value;
    }
  } finally {
    if (!ended) await it.return?.();
  }
}

/** Resolves once `res` drained what it was given, or closed. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise<void>((done) => {
    const end = () => {
      res.off('drain', end);
      res.off('close', end);
      done();
    };
    res.once('drain', end);
    res.once('close', end);
  });
}
