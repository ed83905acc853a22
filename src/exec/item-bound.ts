import { errors } from '../errors/catalog.js';
import { HandFull } from '../translate/data-at-hand.js';

/**
 * MAX_ITEM_MB passed: one item of an answer would be `bytes` (at least), a 400 naming the bound (one render embedding its
 * project's renders, each with 900 KB of data, was 73 MB — ten of them a "light" read of 730 MB).
 */
export function itemTooLarge(bytes: number, mb: number): Error {
  return errors.invalidQuery([{
    path: 'fields',
    reason: `One item of the answer would be ${Math.ceil(bytes / 1_048_576)} MB, more than one item may be (${mb} MB, MAX_ITEM_MB). Ask for fewer ` +
      'relational fields, or fewer related items (deep[…][_limit])',
  }]);
}

/**
 * One item evaluated with `settle` (a RecordMap's: the POST answer, the user reads): the render data it would hold past
 * MAX_ITEM_MB (`mb`) is refused with `itemTooLarge` before any of it is read.
 */
export async function settleItem<T>(settle: (evaluate: () => T, most: number) => Promise<T>, evaluate: () => T, mb: number): Promise<T> {
  try {
    return await settle(evaluate, mb * 1_048_576);
  } catch (e) {
    if (e instanceof HandFull) throw itemTooLarge(e.bytes, mb);
    throw e;
  }
}
