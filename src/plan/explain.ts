import type { ReadSource } from '../replica/service.js';
import type { IndexStrategy } from '../index/read.js';
import type { CallMeter } from './meter.js';
import type { Plan } from './plan.js';

/** What explain and the response headers say about where an answer came from. */
export function describeSource(source: ReadSource): Record<string, unknown> {
  return source.kind === 'index'
    ? { source: 'index', index_age_ms: source.ageMs, teams: source.snapshot.teams.length, synced_first: source.synced }
    : { source: 'live', reason: source.reason };
}

/** The explain block of a live read: the plan (its residual filter named, not dumped) and the v1 calls, pages and records. */
export function explainLive(plan: Plan, meter: CallMeter): Record<string, unknown> {
  return { plan: { ...plan, residual: plan.residual ? 'in memory' : null }, ...meter.summary() };
}

/**
 * The explain block of a list: the live plan as planned, or — answered from the replica — what was really done there
 * (the scope narrowed in memory, every record of it evaluated; no pushdown, no v1 pages: the planner's reasons about v1
 * requests are left out).
 */
export function explainList(plan: Plan, meter: CallMeter, source: ReadSource, how?: IndexStrategy): Record<string, unknown> {
  if (source.kind === 'live') {
    const live = explainLive(plan, meter);
    return { ...live, plan: { ...(live.plan as object), source: 'live' }, ...describeSource(source) };
  }
  const scope = plan.ids ? 'records by id' : plan.scope.projects ? "the projects' records" : 'every record in reach';
  const reasons = [...plan.reasons.filter((r) => !/v1|GET|pushdown|status=/.test(r)), 'answered from the render index: filter, sort and aggregation in memory'];
  return {
    plan: {
      resource: plan.resource, source: 'index', strategy: `index: ${how?.strategy ?? 'scan'} of ${scope}`, scope: plan.scope,
      residual: plan.residual ? 'in memory' : null, stopAfter: plan.stopAfter, pages: null,
      relations: { read: plan.relations, resolved: 'from the index, synchronously (no v1 call)' },
      tested: how?.tested ?? null, matched: how?.matched ?? null, reasons,
    },
    ...meter.summary(),
    ...describeSource(source),
  };
}

/** The explain block of a read by id. */
export function explainOne(meter: CallMeter, source: ReadSource): Record<string, unknown> {
  return { ...meter.summary(), ...describeSource(source) };
}
