import { dump } from 'js-yaml';
import { pace } from '../lib/pace.js';

/**
 * Directus 10.10's `?export=yaml`: its YAML writer (js-yaml's `dump`, default options) over the answer's data — a
 * sequence of mappings, nested mappings for relational fields. Items come from JSON, so no value is shared between two
 * places and no anchor is ever written (`noRefs`: an answer built from shared records writes what Directus writes).
 */
const OPTIONS = { noRefs: true } as const;

/** A single item's file (an item route): the item as a mapping. */
export function yamlExportOne(item: unknown): string {
  return dump(item ?? null, OPTIONS);
}

/**
 * The items' file, written an item at a time: each item is a one-member sequence, and a sequence's members are written
 * independently of each other, so the pieces add up to the whole sequence's bytes (`[]` for no item).
 */
export async function* yamlExport(items: AsyncIterable<unknown> | Iterable<unknown>): AsyncGenerator<string> {
  let first = true;
  for await (const item of items) {
    const wait = pace();
    if (wait) await wait;
    yield dump([item], OPTIONS);
    first = false;
  }
  if (first) yield dump([], OPTIONS);
}
