import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { bodyJson } from '../lib/item-bytes.js';
import { answerCacheKey } from '../replica/reads/answer-cache.js';
import type { ReadSource, ReplicaService } from '../replica/service.js';
import type { CallMeter } from '../live/meter.js';
import type { V1Session } from '../v1/client.js';
import { exportFormat } from '../shape/export.js';
import { requestContext } from '../read/request-context.js';
import { routeFacts } from '../auth/route-facts.js';
import { questionOf } from './search.js';

const JSON_TYPE = 'application/json; charset=utf-8';
/** Says whether a kept answer was given (`hit`) or one was computed and kept (`miss`). */
const MEMO_HEADER = 'x-gateway-answer-cache';

/**
 * The answer cache around an item GET: `recall` sends the kept answer when the index still holds what it was read from
 * (no parse, plan or read), else says under which key the answer about to be computed may be kept; `keep` serialises
 * and sends that answer, kept when it was read from the index. Exports, explained answers and queries naming a dynamic
 * variable are never kept (`answerCacheKey`).
 */
export class Memo {
  private constructor(
    private readonly deps: Deps, private key: string | null, readonly source: ReadSource | undefined, private readonly now: number,
  ) {}

  /** The query resolved a dynamic variable: its answer depends on the clock or the caller and is not kept. */
  dynamic(): void {
    this.key = null;
  }

  /**
   * Sends the kept answer of this request when everything it needs is held in memory (the principal's key, the key's
   * reach, fresh teams): no v1 session, meter or snapshot is made. False when it could not (then `recall`).
   */
  static answerHeld(deps: Deps, request: FastifyRequest, reply: FastifyReply, id = ''): boolean {
    const replica = deps.replica;
    if (!replica || !Memo.offered(replica, request)) return false;
    const ctx = requestContext(deps, request);
    const user = ctx.principal.user.id;
    const partition = ctx.partitionHeld;
    if (partition === undefined) return false;
    const key = answerCacheKey(partition, user, routeFacts(request).url ?? '', id, questionOf(request));
    if (key === null || !replica.answers.holds(key)) return false;
    const epoch = replica.epochHeld(partition, ctx.now);
    const body = epoch === undefined ? undefined : replica.answers.get(key, epoch, ctx.now);
    if (body === undefined) return false;
    void reply.header('x-gateway-v1-calls', '0').header('x-gateway-source', 'index').header(MEMO_HEADER, 'hit');
    void reply.type(JSON_TYPE).send(body);
    return true;
  }

  static async recall(deps: Deps, request: FastifyRequest, reply: FastifyReply, session: V1Session, meter: CallMeter, id = ''): Promise<Memo | null> {
    const replica = deps.replica;
    const ctx = requestContext(deps, request);
    if (!replica || !Memo.offered(replica, request)) return new Memo(deps, null, undefined, ctx.now);
    const key = answerCacheKey(session.partition, ctx.principal.user.id, routeFacts(request).url ?? '', id, questionOf(request));
    // only a query answered before (so one that parses) is looked up: a bad one makes no v1 call before its 400
    if (key === null || !replica.answers.holds(key)) return new Memo(deps, key, undefined, ctx.now);
    const source = await replica.source(session, ctx.now);
    if (source.kind === 'replica') {
      const body = replica.answers.get(key, source.epoch, ctx.now);
      if (body) {
        void reply.header('x-gateway-v1-calls', String(meter.calls)).header('x-gateway-source', 'index').header(MEMO_HEADER, 'hit');
        void reply.type(JSON_TYPE).send(body);
        return null;
      }
    }
    return new Memo(deps, key, source, ctx.now);
  }

  /** Whether this request's answer may come from, or go to, the cache at all (not an export, not explained). */
  private static offered(replica: ReplicaService, request: FastifyRequest): boolean {
    return replica.answers.enabled && request.headers['x-gateway-explain'] !== '1' && !exportFormat(request.query);
  }

  /** Sends `body`, kept under this request's key when it was read from the index at `source`. */
  keep(reply: FastifyReply, body: unknown, source: ReadSource, refreshAt: number): FastifyReply {
    // items the replica keeps serialised are written from their kept text (the same bytes JSON.stringify writes)
    const text = bodyJson(body);
    const answers = this.deps.replica?.answers;
    if (answers && this.key !== null && source.kind === 'replica') {
      void reply.header(MEMO_HEADER, 'miss');
      answers.misses++; // (counted here, once per read the cache could have answered)
      const now = this.now;
      const until = Math.min(now + this.deps.config.ANSWER_CACHE_MAX_AGE_MS, refreshAt);
      if (until > now) answers.set(this.key, source.epoch, until, text);
    }
    return reply.type(JSON_TYPE).send(text);
  }
}
