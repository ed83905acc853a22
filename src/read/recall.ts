import { answerCacheKey } from '../replica/reads/answer-cache.js';
import type { ReadSource, ReplicaService } from '../replica/service.js';
import type { V1Session } from '../v1/client.js';
import { chooseSource } from './source.js';

/** A question as the answer cache names it: who asks, the route, the item's id ('' for a list), the URL with its query. */
export interface Asked {
  readonly user: string;
  readonly route: string;
  readonly id: string;
  readonly url: string;
}

/** A recall's outcome: the kept answer, or the key the answer about to be computed may be kept under and its source. */
export type Recalled =
  | { readonly kind: 'hit'; readonly body: string | Buffer }
  | { readonly kind: 'miss'; readonly key: string | null; readonly source: ReadSource | undefined };

/**
 * The answer cache as the item reads use it (a decorator in front of `ItemReads`): a kept answer given when the replica
 * still holds what it was read from — no parse, plan or read — else the key the computed answer may be kept under and
 * the source chosen for it (`chooseSource`, handed on to the read). Exports, explained answers and questions naming a
 * dynamic variable are never kept (`offered`, `answerCacheKey`). No HTTP here: `http/answer-memo.ts` adapts it.
 */
export class AnswerRecall {
  constructor(private readonly replica: ReplicaService | null, private readonly maxAgeMs: number) {}

  /** Whether an answer may come from, or go to, the cache at all. */
  offered(explained: boolean, exporting: boolean): boolean {
    return !!this.replica?.answers.enabled && !explained && !exporting;
  }

  /**
   * The kept answer when everything it needs is held in memory (the key's partition, the key's reach, fresh teams): no
   * v1 session, meter or snapshot is made. Undefined when it could not tell (then `recall`).
   */
  held(partition: string | undefined, asked: Asked, now: number): string | Buffer | undefined {
    const replica = this.replica;
    if (!replica || partition === undefined) return undefined;
    const key = answerCacheKey(partition, asked.user, asked.route, asked.id, asked.url);
    if (key === null || !replica.answers.holds(key)) return undefined;
    const epoch = replica.epochHeld(partition, now);
    return epoch === undefined ? undefined : replica.answers.get(key, epoch, now);
  }

  /** Looks the question up with the request's v1 session: the source is chosen only for a question answered before. */
  async recall(session: V1Session, asked: Asked, now: number): Promise<Recalled> {
    const replica = this.replica;
    if (!replica) return { kind: 'miss', key: null, source: undefined };
    const key = answerCacheKey(session.partition, asked.user, asked.route, asked.id, asked.url);
    // only a query answered before (so one that parses) is looked up: a bad one makes no v1 call before its 400
    if (key === null || !replica.answers.holds(key)) return { kind: 'miss', key, source: undefined };
    const source = await chooseSource(replica, session, now);
    const body = source.kind === 'replica' ? replica.answers.get(key, source.epoch, now) : undefined;
    return body ? { kind: 'hit', body } : { kind: 'miss', key, source };
  }

  /**
   * Keeps an answer computed from the replica at `source` (never a partial one: the cache's epoch covers the teams it
   * read, not the part of the reach it did not) until its first signed URL must be refreshed or its age is reached.
   * True when the cache could have answered it (a miss, counted).
   */
  keep(key: string | null, source: ReadSource, refreshAt: number, now: number, text: string | Buffer): boolean {
    const answers = this.replica?.answers;
    if (!answers || key === null || source.kind !== 'replica' || source.partial) return false;
    answers.misses++;
    const until = Math.min(now + this.maxAgeMs, refreshAt);
    if (until > now) answers.set(key, source.epoch, until, text);
    return true;
  }
}
