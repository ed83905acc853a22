import type { FastifyReply } from 'fastify';
import type { Deps } from '../deps.js';
import { plainItem, RawJson } from '../exec/raw-json.js';
import { itemBytes, keepJson } from '../exec/item-json.js';
import { pace } from '../lib/pace.js';
import type { RequestContext } from './request-context.js';

/**
 * Answers built whole before a byte is sent (an expanded stream, a JSON body, a file of a page, an item) are held in the answer memory
 * (src/read/in-flight.ts: ANSWER_MEMORY_MB_PER_KEY, ANSWER_MEMORY_MB) by their bytes, measured once — each item serialised
 * once, the body written from those bytes — until the reply has closed: sent, or its client gone.
 */
async function hold(deps: Pick<Deps, 'answerMemory'>, ctx: RequestContext, reply: FastifyReply, bytes: number): Promise<void> {
  const release = deps.answerMemory.hold((await ctx.session()).partition, bytes);
  reply.raw.once('close', release);
  if (reply.raw.destroyed || reply.raw.writableFinished) release(); // (already closed: nothing will tell)
}

/**
 * A stream read whole, held until the reply closes. `json`: its items as JSON bytes (what the body's writer sends as they
 * are); otherwise (a file) as values, measured by their JSON.
 */
export async function heldStream(
  deps: Pick<Deps, 'answerMemory'>, ctx: RequestContext, reply: FastifyReply, items: AsyncIterable<unknown>, json: boolean,
): Promise<AsyncIterable<unknown>> {
  const all: unknown[] = [];
  let bytes = 0;
  for await (const x of items) {
    const turn = pace(); // a long answer shares the event loop a slice at a time
    if (turn) await turn;
    if (json) {
      const raw = x instanceof RawJson ? x : RawJson.of(x);
      bytes += raw.json.length;
      all.push(raw);
    } else {
      const value = plainItem(x);
      bytes += x instanceof RawJson ? x.json.length : jsonLength(value);
      all.push(value);
    }
  }
  await hold(deps, ctx, reply, bytes);
  return (async function* () { yield* all; })();
}

/**
 * Items answered whole, measured and held until the reply closes. `json` (a JSON body): each serialised once and kept
 * with it, the body written from those bytes; otherwise (a file) measured by their JSON.
 */
export async function heldItems(
  deps: Pick<Deps, 'answerMemory'>, ctx: RequestContext, reply: FastifyReply, data: readonly unknown[], json: boolean,
): Promise<void> {
  let bytes = 0;
  for (const item of data) {
    if (!json) { bytes += jsonLength(item); continue; }
    if (typeof item === 'object' && item !== null && !Array.isArray(item) && !Object.isFrozen(item)) keepJson(item);
    bytes += itemBytes(item)?.length ?? 4;
  }
  await hold(deps, ctx, reply, bytes);
}

const jsonLength = (v: unknown): number => (JSON.stringify(v) as string | undefined)?.length ?? 4;
