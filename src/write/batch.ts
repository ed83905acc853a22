import { createHash } from 'node:crypto';
import { errors } from '../errors/catalog.js';
import { asAnswer, type Answer } from './idempotency.js';

/** One item's outcome: its answer, and the uuid of the item it made or changed (its place in the batch's answer). */
export interface ItemOutcome {
  readonly answer: Answer;
  readonly id?: string;
}

/**
 * The Idempotency-Key of item `index` of an array body: the key applies per item (a retry replays the items made). A key
 * too long for a suffix is replaced by its digest (keys are at most 255 characters).
 */
export const itemKey = (key: string, index: number): string => {
  const k = `${key}#${index}`;
  return k.length <= 255 || key.length > 255 ? k : `sha256:${createHash('sha256').update(key).digest('hex')}#${index}`;
};

/**
 * An array body, as Directus answers it: every item's data in one array, in primary-key order (not the order sent).
 * Every item is checked first (`check` throws what Directus would answer, before anything is made); then the items are
 * made one after another. v1 cannot undo a render, so where Directus rolls the whole batch back the gateway stops at the
 * first failure and answers it with the uuids of the items already made (`extensions.created`, in the order sent).
 * `max` (MAX_BATCH_MUTATION): a longer array is 400 before any item is checked; `gone` (the client has left): no item is
 * made after it (each one is billed), the answer — for the log — names the items made.
 */
export async function runBatch(
  items: readonly unknown[],
  check: (item: unknown, index: number) => void,
  one: (item: unknown, index: number) => Promise<ItemOutcome>,
  bounds: { readonly max?: number; readonly gone?: AbortSignal } = {},
): Promise<Answer> {
  checkBatchLength(items.length, bounds.max);
  items.forEach((item, i) => check(item, i));
  const made: { id: string; data: unknown }[] = [];
  for (const [i, item] of items.entries()) {
    if (bounds.gone?.aborted) {
      return withCreated(asAnswer(errors.serviceUnavailable('The client has gone.', 'gateway')), made.map((m) => m.id), i, items.length);
    }
    const { answer, id } = await one(item, i);
    if (answer.status >= 300) return withCreated(answer, made.map((m) => m.id), i, items.length);
    made.push({ id: id ?? '', data: (answer.body as { data?: unknown }).data ?? null });
  }
  made.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { status: 200, body: { data: made.map((m) => m.data) } };
}

/** A batch longer than MAX_BATCH_MUTATION: 400 INVALID_PAYLOAD, before any item is checked. */
export function checkBatchLength(length: number, max: number | undefined): void {
  if (max !== undefined && length > max) throw errors.invalidPayload(`Exceeded max batch mutation limit of ${max}.`);
}

function withCreated(answer: Answer, created: readonly string[], index: number, total: number): Answer {
  const body = answer.body as { errors?: { message: string; extensions: Record<string, unknown> }[] };
  if (!Array.isArray(body.errors)) return answer;
  const note = created.length > 0 ? ` Item ${index + 1} of ${total} failed; the ${created.length} before it were made.` : '';
  return {
    ...answer,
    body: { errors: body.errors.map((e) => ({ message: `${e.message}${note}`, extensions: { ...e.extensions, created, failed_item: index } })) },
  };
}
