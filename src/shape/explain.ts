import type { Execution } from '../exec/execution.js';
import type { SourceDescription } from '../exec/source.js';
import type { ReadSource } from '../replica/service.js';
import type { CallMeter } from '../live/meter.js';
import type { Plan } from '../plan/plan.js';

/** What explain and the response headers say about where an answer came from. */
export function describeSource(source: ReadSource): Record<string, unknown> {
  const described = source.kind === 'replica'
    ? {
      source: 'index', index_age_ms: source.ageMs, bound_ms: source.boundMs, active_bound_ms: source.activeBoundMs,
      teams: source.snapshot.teams.length, synced_first: source.synced,
    }
    : { source: 'live', reason: source.reason };
  return source.partial ? { ...described, partial: describePartial(source) } : described;
}

/**
 * Part of the key's reach is not held whole: on the replica, the answer's scope is (`answered: 'partial'`); live, it is
 * not. Either way, which teams are still read from the store or backfilled, and how many projects are not copied yet.
 */
function describePartial(source: ReadSource): Record<string, unknown> {
  const p = source.partial!;
  return {
    answered: source.kind === 'replica' ? 'partial' : 'live',
    reason: source.kind === 'replica'
      ? `${p.reason}; every project the question can touch is copied`
      : `${p.reason}; the question can touch what is not copied yet`,
    teams_loading: p.loading,
    teams_backfilling: p.backfilling,
    projects_pending: p.projectsPending.length,
  };
}

/**
 * The explain block of a list: the compiled plan as it was run — the plan itself (its residual filter named, not
 * dumped), the record source it ran on with that source's age and the v1 calls it makes, and how the executor answered
 * (strategy, records tested and matched) — then the v1 calls, pages and records really spent.
 */
export function explainList(plan: Plan, meter: CallMeter, source: ReadSource, from: SourceDescription, how?: Execution): Record<string, unknown> {
  return {
    plan: {
      ...plan,
      residual: plan.residual ? 'in memory' : null,
      source: from.kind,
      source_age_ms: from.ageMs,
      v1_calls_planned: from.calls,
      relations_resolved: from.kind === 'replica' ? 'from the replica, synchronously (no v1 call)' : 'fetched from v1 as evaluation needs them',
      execution: how ?? null,
    },
    ...meter.summary(),
    ...describeSource(source),
  };
}

/** The explain block of a read by id. */
export function explainOne(meter: CallMeter, source: ReadSource): Record<string, unknown> {
  return { ...meter.summary(), ...describeSource(source) };
}
