import { errors } from '../errors/catalog.js';
import { Compare, FieldRef, Query, type QueryNode } from '../query/ast.js';
import type { QueryResult } from '../query/run.js';
import type { ExecEnv } from '../live/record-map.js';
import type { Plan } from '../plan/plan.js';
import { execute } from './execute.js';
import type { Execution } from './execution.js';
import { LiveSource } from './live-source.js';

/** A list answered live from v1 (the executor over a LiveSource). */
export async function executeList(
  resource: string, q: QueryNode, plan: Plan, env: ExecEnv, report?: (how: Execution) => void, kept?: (drop: () => void) => void,
): Promise<{ result: QueryResult }> {
  const source = new LiveSource(env);
  const result = await execute(resource, q, plan, source, {
    schemas: env.mappings.schemas, budget: env.budget, ...(report ? { report } : {}), ...(kept ? { kept } : {}),
  });
  return { result };
}

/** One item by legacy uuid, live: 403 FORBIDDEN when unknown, unreachable or malformed (Directus). */
export async function executeOne(
  resource: string, uuid: string, q: QueryNode, plan: (q: QueryNode) => Plan, env: ExecEnv, kept?: (drop: () => void) => void,
): Promise<unknown> {
  const byId = Query.with(q, {
    filter: Compare.create(FieldRef.create(['id']), '_eq', uuid.toLowerCase()),
    search: null,
    meta: [],
    limit: 1,
    offset: 0,
    sort: [],
    aggregate: [],
    groupBy: [],
  });
  const { result } = await executeList(resource, byId, plan(byId), env, undefined, kept);
  const data = result.data[0];
  if (!data) throw errors.forbidden();
  return data;
}
