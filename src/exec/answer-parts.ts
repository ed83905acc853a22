import type { ExpansionBudget } from '../query/budget.js';
import type { Rec } from '../query/compile.js';
import { HandFull } from '../translate/data-at-hand.js';
import { itemTooLarge } from './item-bound.js';
import { pace } from '../lib/pace.js';
import type { RecordSource } from './source.js';
import type { QueryResult } from '../query/run.js';
import type { RawJson } from './raw-json.js';

/** Records projected, and answered items written, this many at a time; the event loop gets a turn between chunks. */
export const CHUNK = 500;

/**
 * The render data (its stored size) one evaluation of several items may hold: past it the items are evaluated in more,
 * smaller parts (300 renders of 900 KB on one page were read and built at once: attack pass 5, H1). A part is read,
 * parsed and built in one turn of the event loop: small parts keep other requests' waits short (40 slow readers of
 * 4 MB parts held others' reads for seconds: attack pass 6).
 */
export const HAND_BYTES = 1_048_576;

/**
 * The related items one evaluation of several items may expand: past it the next parts are cut smaller (each part is
 * built in one turn of the event loop; 40 pages of 37 MB, 100 renders each embedding their project's renders, were
 * built a whole page in a turn and held other users' reads for seconds: attack pass 8). An answer that expands
 * relations begins with parts of FIRST_PART items, doubled while they stay below it.
 */
export const PART_RELATED = 2_000;
export const FIRST_PART = 8;

const turn = () => new Promise<void>((r) => setImmediate(r));

/**
 * The records an answer gives, made ready by the source (signed URLs, id pairs recorded and written) and projected a
 * part at a time, each part one evaluation settled by the source within what it may hold of render data.
 */
export class AnswerParts {
  constructor(
    private readonly resource: string,
    private readonly source: RecordSource,
    /**
     * The request's related-items budget, MAX_ITEM_MB (the data one item may hold; none: no bound), and `kept`: where the
     * room an answer's data took goes when its caller gives it back (one item sent whole), else when the next part is asked for.
     */
    private readonly ctx: {
      readonly budget: ExpansionBudget; readonly itemMb?: number | undefined; readonly kept?: ((drop: () => void) => void) | undefined;
    },
    /** The projection of one record as answered (compiled once by the execution). */
    private readonly shapeOne: () => (r: Rec) => unknown,
    /** The projection expands relations: parts begin small and grow while they expand few (PART_RELATED). */
    private readonly expands = false,
  ) {}

  /** Projects records chunk by chunk (each settled on its own), the event loop given a turn between chunks. */
  async shape(recs: readonly Rec[]): Promise<unknown[]> {
    const out: unknown[] = [];
    for await (const part of this.shapeParts(recs)) for (const x of part) out.push(x);
    return out;
  }

  /**
   * Records projected a part at a time, in order: a chunk, or — when its evaluation would hold more render data than
   * HAND_BYTES — smaller parts, down to one item, whose data past MAX_ITEM_MB is refused before any of it is read. A
   * projection that expands relations begins with FIRST_PART items a part and sizes each next part by what the last
   * expanded (about PART_RELATED related items a part, at least one item).
   */
  async *shapeParts(recs: readonly Rec[]): AsyncGenerator<unknown[]> {
    const shapeOne = this.shapeOne();
    const itemMost = this.ctx.itemMb === undefined ? Number.POSITIVE_INFINITY : this.ctx.itemMb * 1_048_576;
    const budget = this.ctx.budget;
    // parts cut smaller (HandFull) wait here before the rest, taken from `next` on, `size` at a time
    const pending: (readonly Rec[])[] = [];
    let next = 0;
    let size = this.expands ? FIRST_PART : CHUNK;
    const take = (): readonly Rec[] | undefined => {
      if (pending.length > 0) return pending.shift();
      if (next >= recs.length) return undefined;
      const part = recs.slice(next, next + size);
      next += part.length;
      return part;
    };
    let first = true;
    for (let part = take(); part; part = take()) {
      if (!first) await turn();
      first = false;
      const one = part.length === 1;
      // the room the part's data took is given back once the next part is asked for: its reader has counted it by then
      // (held, or handed to its socket: the answer memory's), so no other evaluation is let in between
      let drop: (() => void) | undefined;
      try {
        const p = part;
        const kept = this.ctx.kept;
        const before = budget.spent;
        const out = await this.settleShapes(() => p.map((r) => shapeOne(r)), one ? itemMost : HAND_BYTES, kept ?? ((d) => { drop = d; }));
        if (this.expands) {
          // the next part: as many items as PART_RELATED holds at this part's expansions an item, at most twice this one's
          const each = (budget.spent - before) / p.length;
          size = Math.max(1, Math.min(CHUNK, 2 * p.length, each > 0 ? Math.floor(PART_RELATED / each) : CHUNK));
        }
        yield out;
      } catch (e) {
        if (!(e instanceof HandFull)) throw e;
        if (one) throw itemTooLarge(e.bytes, this.ctx.itemMb ?? 0);
        // about twice as many parts as the data needs, in order
        const n = Math.min(part.length, Math.max(2, Math.ceil((2 * e.bytes) / HAND_BYTES)));
        const size = Math.ceil(part.length / n);
        const parts: (readonly Rec[])[] = [];
        for (let i = 0; i < part.length; i += size) parts.push(part.slice(i, i + size));
        pending.unshift(...parts);
      } finally {
        drop?.();
      }
    }
  }

  /**
   * Projections, settled by the source: an evaluation run again (a round that missed render data, or a relation) counts
   * its expansions once — the related-items budget is given back to where it stood before each round (and when the
   * source gave the evaluation up: HandFull).
   */
  private settleShapes<T>(evaluate: () => T, most?: number, kept?: (drop: () => void) => void): Promise<T> {
    const budget = this.ctx.budget;
    const before = budget.spent;
    return this.source.settle(() => {
      budget.resetTo(before);
      return evaluate();
    }, most, kept).catch((e: unknown) => {
      // a part given up for smaller ones expands nothing
      if (e instanceof HandFull) budget.resetTo(before);
      throw e;
    });
  }

  /**
   * Records about to be answered: made ready by the source, their id pairs recorded and written, then projected — a
   * chunk at a time, the event loop turning between (a page of 40 000 renders was made ready, its pairs written and its
   * items measured in one turn: 2–2.5 s, attack pass 16, H).
   */
  async answer(recs: readonly Rec[], refs: readonly string[]): Promise<unknown[]> {
    const out: unknown[] = [];
    for await (const part of this.inChunks(recs, refs)) for (const x of part) out.push(x);
    return out;
  }

  /** `answerParts` a CHUNK of records at a time, the event loop turning between chunks (a page, or a page's stream). */
  async *inChunks(recs: readonly Rec[], refs: readonly string[]): AsyncGenerator<unknown[]> {
    for (let i = 0; i < recs.length || i === 0; i += CHUNK) {
      if (i > 0) await (pace() ?? turn());
      yield* this.answerParts(recs.slice(i, i + CHUNK), refs.slice(i, i + CHUNK));
    }
  }

  /** `answer`, its items given a part at a time as they are projected (`shapeParts`). */
  async *answerParts(recs: readonly Rec[], refs: readonly string[]): AsyncGenerator<unknown[]> {
    const ready = await this.source.prepare(recs, refs, this.resource);
    this.source.remember(this.resource, refs);
    await this.source.flush();
    yield* this.shapeParts(ready);
  }
}

/**
 * The items of `parts`, one at a time: the parts' generator is resumed only once the last part is used up (so, as with
 * `yield*`, a part's room is given back when its reader asks past it), and an item costs one settled promise — not one
 * at each of the four generators a page's parts pass through (their promises and results were a third of what a read of
 * a page of `*` fields allocated). `return` (a reader stopping early) ends the parts' generator: its `finally` runs.
 */
export function itemsOf<T>(parts: AsyncGenerator<readonly T[]>): AsyncIterableIterator<T> {
  let part: readonly T[] = [];
  let at = 0;
  let closed = false;
  const done = { done: true, value: undefined } as const;
  const items: AsyncIterableIterator<T> = {
    // (one next() at a time, as every reader of a stream asks; after return(), done)
    async next(): Promise<IteratorResult<T>> {
      while (at >= part.length) {
        part = []; // (the used-up part is let go while the next one is built)
        if (closed) return done;
        const n = await parts.next();
        if (n.done || closed) return (part = [], done);
        part = n.value;
        at = 0;
      }
      return { done: false, value: part[at++] as T };
    },
    async return(): Promise<IteratorResult<T>> {
      closed = true;
      part = [];
      await parts.return(undefined);
      return done;
    },
    [Symbol.asyncIterator]: () => items,
  };
  return items;
}

/** Candidates kept as JSON, written as they are (each let go once written; names recorded before they are written). */
export function keptJsonStream(
  source: RecordSource, resource: string, chosen: { ref: string; json?: RawJson }[], recorded: boolean, meta: Record<string, number> | undefined,
): QueryResult {
  const stream = (async function* () {
    for (let i = 0; i < chosen.length; i++) {
      if (!recorded && i % CHUNK === 0) {
        source.remember(resource, chosen.slice(i, i + CHUNK).map((c) => c.ref));
        await source.flush();
      }
      yield chosen[i]!.json as RawJson;
      chosen[i] = undefined as never;
    }
  })();
  return meta ? { meta, data: [], stream } : { data: [], stream };
}
