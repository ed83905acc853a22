import { LIFECYCLE_RANK, type V1Render } from '../v1/schemas.js';

/**
 * The recency rule, defined once: a render's state replaces the one held only when it moves back neither in time
 * (`updated_at`, else `created_at`) nor in the lifecycle (`LIFECYCLE_RANK`: a final status is never followed by an
 * earlier one, whatever its time). An equal state replaces (its signed URLs are fresher). The replica in memory, its
 * store rows and the webhook ledger all apply it: in TypeScript here, in SQL through `supersedesSql`, held equal by
 * test/store/recency.test.ts on SQLite and PostgreSQL. It lives in the store, the lowest layer that applies it (its
 * upserts), so that the store imports no feature; the replica imports it from here.
 */
export interface RenderState { readonly updatedAt: number; readonly rank: number }

export const stateOf = (r: Pick<V1Render, 'updated_at' | 'created_at' | 'status'>): RenderState =>
  ({ updatedAt: r.updated_at ?? r.created_at, rank: LIFECYCLE_RANK[r.status] });

export function supersedes(held: RenderState | undefined, next: RenderState): boolean {
  return !held || (held.updatedAt <= next.updatedAt && held.rank <= next.rank);
}

/**
 * The same rule as an SQL condition of an upsert: `held` names the stored row's table, `next` the incoming row
 * (`excluded`), both with `updated_at` and `rank` columns.
 */
export function supersedesSql(held: string, next = 'excluded'): string {
  if (!/^[a-z_]+$/.test(held) || !/^[a-z_]+$/.test(next)) throw new TypeError('table names only');
  return `${held}.updated_at <= ${next}.updated_at and ${held}.rank <= ${next}.rank`;
}
