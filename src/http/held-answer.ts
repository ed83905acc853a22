import type { FastifyReply } from 'fastify';
import type { Deps } from '../deps.js';
import { plainItem, RawJson } from '../exec/raw-json.js';
import { itemTooLarge } from '../exec/item-bound.js';
import { itemBytes, keepAnswerJson, keepPageJson } from '../lib/item-bytes.js';
import { largeValue } from '../lib/json-in-turns.js';
import { pacer } from '../lib/pace.js';
import type { AnswerHold } from '../read/in-flight.js';
import { errors } from '../errors/catalog.js';
import type { RequestContext } from '../read/request-context.js';

/**
 * Answers built whole before a byte is sent (an expanded stream, a JSON body, a file of a page, an item) are held in the
 * answer memory (src/read/in-flight.ts: ANSWER_MEMORY_MB_PER_KEY, ANSWER_MEMORY_MB) by their bytes, counted an item at a
 * time as each is serialised (once: the body is written from those bytes), until the reply has closed — sent, or its
 * client gone. An answer that outgrows what one answer may hold is not built further: what was built is sent first and
 * the rest streams, each item built and serialised as the client reads it.
 */
async function reserve(deps: Pick<Deps, 'answerMemory'>, ctx: RequestContext, reply: FastifyReply, shared = false): Promise<AnswerHold> {
  const hold = deps.answerMemory.reserve((await ctx.session()).partition, shared);
  reply.raw.once('close', () => hold.release());
  if (reply.raw.destroyed || reply.raw.writableFinished) hold.release(); // (already closed: nothing will tell)
  return hold;
}

/**
 * A stream read whole while it fits the answer memory, held until the reply closes (so a failure while it is built — a
 * budget passed — is still a clean error). `json`: its items as JSON bytes (what the body's writer sends as they are);
 * otherwise (a file) as values, measured by their JSON. Past what one answer may hold, the part read is given first and
 * the rest is read as it is written.
 */
export async function heldStream(
  deps: Pick<Deps, 'answerMemory' | 'config'>, ctx: RequestContext, reply: FastifyReply, items: AsyncIterable<unknown>, json: boolean,
): Promise<AsyncIterable<unknown>> {
  const pace = pacer(); // (a short answer goes straight on)
  const hold = await reserve(deps, ctx, reply);
  const most = itemBound(deps.config.MAX_ITEM_MB);
  const read: unknown[] = [];
  const sizes: number[] = [];
  const it = items[Symbol.asyncIterator]();
  const as = async (x: unknown): Promise<{ item: unknown; bytes: number }> => {
    if (json) {
      const raw = x instanceof RawJson ? x : await RawJson.inTurns(x);
      return { item: raw, bytes: most(raw.json.length) };
    }
    const value = plainItem(x);
    return { item: value, bytes: most(x instanceof RawJson ? x.json.length : jsonLength(value)) };
  };
  try {
    for (;;) {
      const turn = pace(sizes.at(-1)); // a long answer shares the event loop a slice at a time
      if (turn) await turn;
      const next = await it.next();
      if (next.done) return drain(read, undefined, undefined, given(hold, sizes));
      const { item, bytes } = await as(next.value);
      read.push(item);
      if (!hold.add(bytes)) return drain(read, it, async (x) => (await as(x)).item, given(hold, sizes));
      sizes.push(bytes);
    }
  } catch (e) {
    hold.release();
    throw e;
  }
}

/**
 * Items answered whole, measured an item at a time and held until the reply closes. `json` (a JSON body): each serialised
 * once, the texts kept with the array returned (`keepPageJson`), the body written from them; otherwise (a file) measured
 * by their JSON, and undefined returned: held whole as they are. Past the room the answer memory has (the rest was not
 * serialised), the stream to send them as, which gives the memory back once the items are written.
 */
export async function heldItems(
  deps: Pick<Deps, 'answerMemory' | 'config'>, ctx: RequestContext, reply: FastifyReply, data: readonly unknown[], json: boolean,
): Promise<AsyncIterable<unknown> | unknown[] | undefined> {
  const pace = pacer(); // (a short answer goes straight on)
  const hold = await reserve(deps, ctx, reply);
  const most = itemBound(deps.config.MAX_ITEM_MB);
  const sizes: number[] = [];
  const texts: (string | undefined)[] = [];
  for (const item of data) {
    // (a long answer — 40 000 aggregate groups — is measured a slice at a time: 0.25 s in one turn, attack pass 15's re-check)
    const turn = pace(sizes.at(-1));
    if (turn) await turn;
    const text = json ? ownText(item) : undefined;
    const bytes = most(text !== undefined ? Buffer.byteLength(text) : await measured(item, json));
    texts.push(text);
    if (!hold.add(bytes)) return drain(written([...data], texts), undefined, undefined, given(hold, sizes));
    sizes.push(bytes);
  }
  return json ? keepPageJson([...data], texts) : undefined;
}

/**
 * One item answered whole (built already, whatever its size: at most MAX_ITEM_MB), held until the reply closes — carried
 * past the answer memory's bounds when it does not fit, so that no more render data is built for its key meanwhile.
 */
export async function heldOne(
  deps: Pick<Deps, 'answerMemory' | 'config'>, ctx: RequestContext, reply: FastifyReply, item: unknown, json: boolean,
): Promise<void> {
  await heldBytes(deps, ctx, reply, itemBound(deps.config.MAX_ITEM_MB)(await measured(item, json)));
}

/** An answer serialised whole (`bytes` of it), held until the reply closes — carried past the bounds when it does not fit. */
export async function heldBytes(deps: Pick<Deps, 'answerMemory'>, ctx: RequestContext, reply: FastifyReply, bytes: number): Promise<void> {
  const hold = await reserve(deps, ctx, reply);
  if (!hold.add(bytes)) hold.carry(bytes);
}

/**
 * A read's answer as a list is sent: a page built as it is read measured an item at a time (`heldPage`); an expanded
 * stream measured as it is read (`heldStream`); items built whole measured and held (`heldItems`). The items to write as
 * a stream, or the items held whole (an array).
 */
export async function heldAnswer(
  deps: Pick<Deps, 'answerMemory' | 'config'>, ctx: RequestContext, reply: FastifyReply,
  result: { readonly data: readonly unknown[]; readonly stream?: AsyncIterable<unknown>; readonly lazy?: boolean }, expands: boolean, json: boolean,
): Promise<AsyncIterable<unknown> | readonly unknown[]> {
  if (result.stream && result.lazy) return heldPage(deps, ctx, reply, result.stream, json);
  const items = result.stream && expands ? await heldStream(deps, ctx, reply, result.stream, json) : result.stream;
  return items ?? (await heldItems(deps, ctx, reply, result.data, json)) ?? result.data;
}

/** Whether `heldAnswer` held the items whole (the array to answer) rather than giving a stream. */
export const isWhole = (items: AsyncIterable<unknown> | readonly unknown[]): items is readonly unknown[] => Array.isArray(items);

/**
 * A page built as it is read (its items may be large: render data, relations expanded), read while it fits what one
 * answer may hold, each item measured (and, for a JSON body, serialised once) as it comes: then it is answered whole, as
 * any page (the array). Past it, the part read is given first and the rest is built as the client reads it.
 */
async function heldPage(
  deps: Pick<Deps, 'answerMemory' | 'config'>, ctx: RequestContext, reply: FastifyReply, items: AsyncIterable<unknown>, json: boolean,
): Promise<AsyncIterable<unknown> | unknown[]> {
  const pace = pacer(); // (a short answer goes straight on)
  const hold = await reserve(deps, ctx, reply, true); // (a share of the key's room: a stalled reader pins it)
  const most = itemBound(deps.config.MAX_ITEM_MB);
  const read: unknown[] = [];
  const sizes: number[] = [];
  const texts: (string | undefined)[] = [];
  const it = items[Symbol.asyncIterator]();
  try {
    for (;;) {
      // (small items await only microtasks: 40 000 of them were measured in one turn — attack pass 16, H)
      const turn = pace(sizes.at(-1));
      if (turn) await turn;
      const next = await it.next();
      if (next.done) return json ? keepPageJson(read, texts) : read;
      const item = next.value;
      read.push(item);
      const text = json ? ownText(item) : undefined;
      texts.push(text);
      const m = text !== undefined ? Buffer.byteLength(text) : measured(item, json);
      const bytes = most(typeof m === 'number' ? m : await m);
      if (!hold.add(bytes)) return drain(written(read, texts), it, json ? (x) => RawJson.inTurns(x) : (x) => x, given(hold, sizes));
      sizes.push(bytes);
    }
  } catch (e) {
    hold.release();
    throw e;
  }
}

/**
 * The JSON text of an answer's own small item (a plain object made for this answer, not frozen: a replica's kept record
 * has its text kept already), written once here and kept with the page (`keepPageJson`); undefined for any other item.
 */
function ownText(item: unknown): string | undefined {
  if (typeof item !== 'object' || item === null || Array.isArray(item) || Object.isFrozen(item) || largeValue(item)) return undefined;
  return JSON.stringify(item) as string | undefined;
}

/** Items whose text was written (`texts[i]`) given as those bytes (a stream's writer sends them as they are). */
function written(items: unknown[], texts: readonly (string | undefined)[]): unknown[] {
  for (let i = 0; i < texts.length; i++) {
    const text = texts[i];
    if (text !== undefined) items[i] = new RawJson(Buffer.from(text));
  }
  return items;
}

/** An item's JSON bytes: kept with it for a JSON body (written from them), else measured (a promise only for a large item). */
function measured(item: unknown, json: boolean): number | Promise<number> {
  if (!json) return jsonLength(item);
  // (a large item's text is written a slice a turn: attack pass 10, M — one 16 MB item held every request 0.4–0.75 s)
  if (typeof item === 'object' && item !== null && !Array.isArray(item) && !Object.isFrozen(item)) return keepAnswerJson(item);
  return itemBytes(item)?.length ?? 4;
}

/** What `hold` holds for the items read, given back an item at a time (`sizes`: what each held) as each is handed on. */
function given(hold: AnswerHold, sizes: readonly number[]): (i: number) => void {
  return (i) => {
    if (i >= sizes.length) hold.release();
    else hold.settle(hold.held - sizes[i]!);
  };
}

/**
 * Items given one at a time, each let go once given: first those read, then the rest of `more` as it is read. `handed`
 * is told as each read is given, with its index (its writer counts it from then on, until sent), and with the count of
 * those read once all are.
 */
async function* drain(
  read: unknown[], more?: AsyncIterator<unknown>, convert: (x: unknown) => unknown = (x) => x, handed: (i: number) => void = () => {},
): AsyncGenerator<unknown> {
  // (a reader gone, whenever it goes, stops the items' source too: what it holds — its data's room — is given back;
  // attack pass 9: a client that left while the items read were handed on left the source suspended, its room held)
  try {
    for (let i = 0; i < read.length; i++) {
      const item = read[i];
      read[i] = undefined;
      handed(i); // (its writer counts it from here: what it handed its socket and was not yet sent)
      yield item;
    }
    handed(read.length);
    if (!more) return;
    for (;;) {
      const next = await more.next();
      if (next.done) return;
      yield await convert(next.value);
    }
  } finally {
    handed(read.length);
    await more?.return?.();
  }
}

/** The UTF-8 bytes of a value's JSON (what a file of it holds, about). */
const jsonLength = (v: unknown): number => Buffer.byteLength((JSON.stringify(v) as string | undefined) ?? 'null');

/**
 * The most an answer to the gateway's own re-ask (a migration proof, a comparison) may be: it is read whole in memory
 * (an in-process request buffers its body), then parsed and compared in the gateway's process between other users'
 * reads, so a larger one is refused before it is built further (32 MB parsed and diffed held other reads over a second:
 * attack pass 34, M-1).
 */
export const INTERNAL_ANSWER_BYTES = 8 * 1_048_576;

/**
 * The items of an answer to an internal re-ask, read whole while within INTERNAL_ANSWER_BYTES; past it a 400 naming the
 * bound (the proof says "not proven" and why).
 */
export async function internalWhole(items: AsyncIterable<unknown> | readonly unknown[]): Promise<unknown[]> {
  const pace = pacer(); // (a short answer goes straight on)
  const out: unknown[] = [];
  let bytes = 0;
  let last = 0;
  for await (const x of items) {
    const turn = pace(last);
    if (turn) await turn;
    last = x instanceof RawJson ? x.json.length : itemBytes(x)?.length ?? 4;
    bytes += last;
    if (bytes > INTERNAL_ANSWER_BYTES) {
      const reason = `The answer is larger than a re-ask by the gateway itself reads (${INTERNAL_ANSWER_BYTES / 1_048_576} MB)`;
      throw errors.invalidQuery([{ path: 'limit', reason }]);
    }
    out.push(x);
  }
  return out;
}

/**
 * MAX_ITEM_MB: the bytes of one answered item, passed on when within the bound; past it a 400 naming the bound
 * (`itemTooLarge`). An item past it after part of a streamed answer was sent ends that body short.
 */
export function itemBound(mb: number): (bytes: number) => number {
  const bound = mb * 1_048_576;
  return (bytes) => {
    if (bytes <= bound) return bytes;
    throw itemTooLarge(bytes, mb);
  };
}
