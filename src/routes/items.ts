import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requirePrincipal } from '../auth/guards.js';
import { proxied } from '../config/route-modes.js';
import type { Deps } from '../deps.js';
import { errors } from '../errors/catalog.js';
import { Memo } from '../http/answer-memo.js';
import { parseLegacyQuery } from '../read/context.js';
import { exportFormat } from '../shape/export.js';
import { requestContext } from '../read/request-context.js';
import { searchPreHandler } from '../http/search.js';
import { sendList, sendOne } from '../http/send-read.js';
import { KeptRoom } from '../read/data-room.js';
import { isUuid } from '../lib/uuid.js';
import type { ResourceSchema } from '../query/schema.js';
import { answerEnd } from '../read/answer-end.js';
import { ItemReads } from '../read/items.js';
import { AnswerRecall } from '../read/recall.js';

const ROUTES: readonly { path: string; resource: string }[] = [
  { path: '/renders', resource: 'render' },
  { path: '/projects', resource: 'project' },
  { path: '/accounts', resource: 'account' },
  { path: '/templates', resource: 'template' },
];

/**
 * GET (and SEARCH) /renders, /projects, /accounts, /templates and their /:id, also under /items/…, with the whole query
 * language: a kept answer when there is one (src/read/recall.ts, adapted by src/http/answer-memo.ts), else the query
 * parsed, answered by the item reads (src/read/items.ts) and sent (src/http/send-read.ts).
 */
export function registerItemRoutes(app: FastifyInstance, deps: Deps): void {
  const answers = new AnswerRecall(deps.replica, deps.config.ANSWER_CACHE_MAX_AGE_MS);
  for (const { path, resource } of ROUTES) {
    if (proxied(deps.config, path)) continue;
    const schema = deps.mappings.schemas[resource] as ResourceSchema;
    const reads = new ItemReads(deps, resource, schema, deps.heavyReads);
    const list = async (request: FastifyRequest, reply: FastifyReply) => {
      if (Memo.answerHeld(deps, answers, request, reply)) return reply;
      const ctx = requestContext(deps, request);
      const memo = await Memo.recall(deps, answers, request, reply, await ctx.session(), ctx.meter);
      if (!memo) return reply;
      const q = parseLegacyQuery(deps, request, schema, () => memo.dynamic());
      const format = exportFormat(request.query);
      return sendList(deps, ctx, reply, memo, await reads.list(ctx, q, format !== undefined, answerEnd(reply.raw), memo.source), format, schema.name);
    };
    const one = async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
      requirePrincipal(request);
      const id = request.params.id.toLowerCase();
      if (!isUuid(id)) {
        parseLegacyQuery(deps, request, schema); // a bad query is a 400 before the 403
        exportFormat(request.query);
        throw errors.forbidden();
      }
      if (Memo.answerHeld(deps, answers, request, reply, id)) return reply;
      const ctx = requestContext(deps, request);
      const memo = await Memo.recall(deps, answers, request, reply, await ctx.session(), ctx.meter, id);
      if (!memo) return reply;
      const q = parseLegacyQuery(deps, request, schema, () => memo.dynamic());
      const format = exportFormat(request.query);
      // the room the item's render data took is given back once the item is counted in the answer memory (sendOne)
      const kept = new KeptRoom();
      try {
        return await sendOne(deps, ctx, reply, memo, await reads.one(ctx, id, q, memo.source, answerEnd(reply.raw).gone, kept.keep), format, schema.name);
      } finally {
        kept.release();
      }
    };
    for (const base of [path, `/items${path}`]) {
      app.get(base, list);
      // SEARCH: the same list, its question in the JSON body (Directus's withSearch(), Python clients)
      app.route({ method: 'SEARCH', url: base, preHandler: searchPreHandler, handler: list });
      app.get<{ Params: { id: string } }>(`${base}/:id`, one);
    }
  }
}
