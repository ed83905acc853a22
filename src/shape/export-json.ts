import { pace } from '../lib/pace.js';

/** Directus 10.10's `?export=json`: `JSON.stringify(data, null, '\t')`, a bare array (no envelope). */

/** A single item's file (an item route): the object itself, as Directus writes `data`. */
export function jsonExportOne(item: unknown): string {
  return JSON.stringify(item ?? null, null, '\t');
}

/** `JSON.stringify(items, null, '\t')`, written an item at a time. */
export async function* jsonExport(items: AsyncIterable<unknown> | Iterable<unknown>): AsyncGenerator<string> {
  let first = true;
  for await (const item of items) {
    const turn = pace();
    if (turn) await turn;
    // a member with no JSON (undefined) is written null, as JSON.stringify writes it in an array
    const body = (JSON.stringify(item, null, '\t') ?? 'null').replace(/\n/g, '\n\t');
    yield `${first ? '[\n\t' : ',\n\t'}${body}`;
    first = false;
  }
  yield first ? '[]' : '\n]';
}
