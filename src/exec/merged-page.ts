import { mergeByKey, type MergeSource } from '../plan/merge.js';
import type { Rec } from '../query/compile.js';
import { CHUNK } from './answer-parts.js';

/** A record reduced to some of its fields. */
export function pick(rec: Rec, keys: readonly string[]): Rec {
  const o: Record<string, unknown> = {};
  for (const k of keys) o[k] = rec[k];
  return o;
}

/**
 * The entries a page of merged date-ordered runs answers, in order, a batch (of up to a chunk) at a time: each
 * timestamp's entries settled together (ties ordered by `cmp`), the first `offset` skipped, none past `limit`;
 * `matched` is told of each entry passed (skipped or answered). Reading stops once the page is settled. Pure.
 */
export async function* mergedPage<T extends { readonly at: number }>(
  runs: readonly MergeSource<T>[], desc: boolean, cmp: (a: T, b: T) => number, offset: number, limit: number, matched: () => void,
): AsyncGenerator<T[]> {
  let skipped = 0;
  let emitted = 0;
  let batch: T[] = [];
  for await (const group of mergeByKey(runs, (e) => e.at, desc)) {
    if (group.length > 1) group.sort(cmp);
    for (const e of group) {
      if (emitted + batch.length >= limit) break;
      matched();
      if (skipped < offset) skipped++;
      else batch.push(e);
    }
    if (batch.length >= CHUNK) {
      emitted += batch.length;
      yield batch;
      batch = [];
    }
    if (emitted + batch.length >= limit) break;
  }
  if (batch.length > 0) yield batch;
}
