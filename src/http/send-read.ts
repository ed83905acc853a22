import type { FastifyReply } from 'fastify';
import type { Deps } from '../deps.js';
import { explainList, explainOne } from '../shape/explain.js';
import type { ListRead, OneRead } from '../read/items.js';
import type { ReadSource } from '../replica/service.js';
import type { Memo } from './answer-memo.js';
import { wantsExplain } from '../read/context.js';
import { plainItem, plainItems } from '../exec/raw-json.js';
import { EXPORT_CONTENT_TYPE, exportFilename, exportOne, exportPage, exportStream, type ExportFormat } from '../shape/export.js';
import { heldAnswer, heldBytes, heldOne, internalWhole, isWhole, itemBound } from './held-answer.js';
import { pacedBody } from './paced-body.js';
import { isInternal } from '../compare/legacy-side.js';
import { jsonArrayEnvelope } from './json-stream.js';
import type { RequestContext } from '../read/request-context.js';

/**
 * Sends a list read as the legacy API answers it: a file (`?export=`), a stream (`limit=-1`), or one JSON body (kept by
 * the answer cache when it came from the replica), with explain when asked for. An answer that expands relations is built
 * whole first while it fits the answer memory (so the related-items budget refuses it with a clean 400 before any byte
 * is sent); an answer that outgrows what one answer may hold is written as a stream, its items built as they are read.
 */
export async function sendList(
  deps: Deps, ctx: RequestContext, reply: FastifyReply, memo: Memo, read: ListRead, format: ExportFormat | undefined, collection: string,
): Promise<FastifyReply | Record<string, unknown>> {
  const { result, source } = read;
  sourceHeaders(reply, source);
  // an answer built whole (expanded, or not streamed) is measured and held in the answer memory until sent
  // the gateway's own re-ask (a proof, a comparison) is read whole in memory: bounded, whatever its shape
  if (isInternal(ctx.request.headers)) {
    const whole = await internalWhole(result.stream ?? result.data);
    if (result.stream) {
      const { stream: _streamed, ...page } = result;
      return sendList(deps, ctx, reply, memo, { ...read, result: { ...page, data: whole.map(plainItem) } }, format, collection);
    }
  }
  const items = await heldAnswer(deps, ctx, reply, result, read.expands, format === undefined);
  if (format) return sendExport(deps, ctx, reply, format, collection, isWhole(items) ? [...items] : items);
  const explained = wantsExplain(deps, ctx.request);
  if (!isWhole(items)) {
    if (!result.stream) void reply.header('x-gateway-v1-calls', String(ctx.meter.calls));
    const atEnd = explained ? () => explainList(read.plan, ctx.meter, source, read.from, read.how) : undefined;
    const body = jsonArrayEnvelope(items, ctx.log, result.meta, atEnd, itemBound(deps.config.MAX_ITEM_MB));
    return reply.type('application/json; charset=utf-8').send(await pacedBody(deps, ctx, reply, body));
  }
  const body: Record<string, unknown> = result.meta ? { meta: result.meta, data: items } : { data: items };
  void reply.header('x-gateway-v1-calls', String(ctx.meter.calls));
  if (explained) return { ...body, explain: explainList(read.plan, ctx.meter, source, read.from, read.how) };
  return memo.keep(reply, body, source, read.refreshAt);
}

/** Sends a read by id: a file, the item with explain, or the item (kept when it came from the replica). */
export async function sendOne(
  deps: Deps, ctx: RequestContext, reply: FastifyReply, memo: Memo, read: OneRead, format: ExportFormat | undefined, collection: string,
): Promise<FastifyReply | Record<string, unknown>> {
  void reply.header('x-gateway-v1-calls', String(ctx.meter.calls));
  sourceHeaders(reply, read.source);
  // (one item is sent whole, even past what one answer may hold: it is built already, and holds at most MAX_ITEM_MB; its
  // file is held by its own bytes — an XML file of text full of `&` is five times the JSON: attack pass 9)
  if (format) return sendExport(deps, ctx, reply, format, collection, read.data as object);
  await heldOne(deps, ctx, reply, read.data, true);
  if (wantsExplain(deps, ctx.request)) return { data: read.data, explain: explainOne(ctx.meter, read.source) };
  return memo.keep(reply, { data: read.data }, read.source, read.refreshAt);
}

/**
 * `X-Gateway-Source: index|live`, and `X-Gateway-Partial: 1` when the replica answered from part of the key's reach (the
 * rest being read from the store or backfilled: the read's whole scope is copied, the reach is not).
 */
function sourceHeaders(reply: FastifyReply, source: ReadSource): void {
  void reply.header('x-gateway-source', source.kind === 'replica' ? 'index' : 'live'); // (its public name: the index)
  if (source.kind === 'replica' && source.partial) void reply.header('x-gateway-partial', '1');
}


/**
 * Sends `?export=` data as Directus does: an attachment named after the collection and the time. A streamed answer's items
 * may be kept JSON bytes (the executor's merge and scan buffers): the file is written from the items themselves.
 */
async function sendExport(
  deps: Deps, ctx: RequestContext, reply: FastifyReply, format: ExportFormat, collection: string, data: AsyncIterable<unknown> | unknown[] | object,
): Promise<FastifyReply> {
  const name = exportFilename(collection, new Date(ctx.now), format);
  void reply.header('content-disposition', `attachment; filename="${name}"`).type(EXPORT_CONTENT_TYPE[format]);
  const csv = { escapeFormulas: deps.config.EXPORT_CSV_ESCAPE_FORMULAS };
  if (Array.isArray(data)) return sendFile(deps, ctx, reply, await exportPage(format, data, csv));
  if (Symbol.asyncIterator in data) return sendFile(deps, ctx, reply, exportStream(format, plainItems(data as AsyncIterable<unknown>), csv));
  return sendFile(deps, ctx, reply, await exportOne(format, data, csv));
}

/** A file whole (held by its own bytes until sent), or streamed as its reader takes it. */
async function sendFile(deps: Deps, ctx: RequestContext, reply: FastifyReply, file: string | AsyncIterable<string>): Promise<FastifyReply> {
  if (typeof file !== 'string') return reply.send(await pacedBody(deps, ctx, reply, file));
  await heldBytes(deps, ctx, reply, Buffer.byteLength(file));
  return reply.send(file);
}
