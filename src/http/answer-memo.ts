import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { bodyJson } from '../lib/item-bytes.js';
import type { ReadSource } from '../replica/service.js';
import type { CallMeter } from '../live/meter.js';
import type { V1Session } from '../v1/client.js';
import { exportFormat } from '../shape/export.js';
import type { AnswerRecall, Asked } from '../read/recall.js';
import { requestContext, type RequestContext } from '../read/request-context.js';
import { routeFacts } from '../auth/route-facts.js';
import { questionOf } from './search.js';

const JSON_TYPE = 'application/json; charset=utf-8';
/** Says whether a kept answer was given (`hit`) or one was computed and kept (`miss`). */
const MEMO_HEADER = 'x-gateway-answer-cache';

/**
 * The answer cache (`read/recall.ts`) adapted to a request and its reply: `answerHeld` and `recall` send a kept answer
 * with its headers, else `recall` gives the memo the computed answer is sent through (`keep`). What is kept, for how
 * long, and which source a miss hands on to the read are `AnswerRecall`'s.
 */
export class Memo {
  private constructor(
    private readonly answers: AnswerRecall, private key: string | null, readonly source: ReadSource | undefined, private readonly now: number,
  ) {}

  /** The query resolved a dynamic variable: its answer depends on the clock or the caller and is not kept. */
  dynamic(): void {
    this.key = null;
  }

  /** Sends the kept answer when everything it needs is held in memory; false when it could not tell (then `recall`). */
  static answerHeld(deps: Deps, answers: AnswerRecall, request: FastifyRequest, reply: FastifyReply, id = ''): boolean {
    if (!Memo.offered(answers, request)) return false;
    const ctx = requestContext(deps, request);
    const body = answers.held(ctx.partitionHeld, asked(ctx, request, id), ctx.now);
    if (body === undefined) return false;
    void reply.header('x-gateway-v1-calls', '0').header('x-gateway-source', 'index').header(MEMO_HEADER, 'hit');
    void reply.type(JSON_TYPE).send(body);
    return true;
  }

  /** Sends the kept answer (null), or gives the memo the answer about to be computed goes through. */
  static async recall(
    deps: Deps, answers: AnswerRecall, request: FastifyRequest, reply: FastifyReply, session: V1Session, meter: CallMeter, id = '',
  ): Promise<Memo | null> {
    const ctx = requestContext(deps, request);
    if (!Memo.offered(answers, request)) return new Memo(answers, null, undefined, ctx.now);
    const found = await answers.recall(session, asked(ctx, request, id), ctx.now);
    if (found.kind === 'miss') return new Memo(answers, found.key, found.source, ctx.now);
    void reply.header('x-gateway-v1-calls', String(meter.calls)).header('x-gateway-source', 'index').header(MEMO_HEADER, 'hit');
    void reply.type(JSON_TYPE).send(found.body);
    return null;
  }

  private static offered(answers: AnswerRecall, request: FastifyRequest): boolean {
    return answers.offered(request.headers['x-gateway-explain'] === '1', !!exportFormat(request.query));
  }

  /** Sends `body`, kept under this request's key when it was read from the replica at `source`. */
  keep(reply: FastifyReply, body: unknown, source: ReadSource, refreshAt: number): FastifyReply {
    // items the replica keeps serialised are written from their kept text (the same bytes JSON.stringify writes)
    const text = bodyJson(body);
    if (this.answers.keep(this.key, source, refreshAt, this.now, text)) void reply.header(MEMO_HEADER, 'miss');
    return reply.type(JSON_TYPE).send(text);
  }
}

/** The question of a request as the answer cache names it. */
const asked = (ctx: RequestContext, request: FastifyRequest, id: string): Asked => ({
  user: ctx.principal.user.id, route: routeFacts(request).url ?? '', id, url: questionOf(request),
});
