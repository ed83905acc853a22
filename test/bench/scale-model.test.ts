import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  backfillCalls, DEFAULT_SETTINGS, makePopulation, packTeams, simulateSync, storeBytes, zipfShares, type Costs, type Load, type Population,
  type PopulationSpec, type Team,
} from '../../bench/scale-model-core.js';

const input = JSON.parse(readFileSync(new URL('../../bench/scale-costs.json', import.meta.url), 'utf8')) as {
  costs: Costs;
  population: PopulationSpec;
};
const costs = input.costs;
const s = DEFAULT_SETTINGS;
/** The rule before issue 43's part 2: a polled team of whole syncs synced at half its bound (the by-hand figures below). */
const half = { ...s, dueAtHalfBound: true };

/** Teams of `projects` projects each, a key each, none creating renders; `hooked` of them with webhooks. */
function teams(projects: readonly number[], hooked = 0): Population {
  const list: Team[] = projects.map((p, i) => ({
    id: i, renders: 1000 * p, projectShares: zipfShares(p), key: i + 1, webhooks: i < hooked, readDraw: 1,
  }));
  return { teams: list, keys: list.length };
}
const quiet: Load = { name: 'quiet', createdPerSec: 0, readShare: 1 };

/** By hand: a head page per project and the project list every INDEX_MAX_STALENESS_MS / 2, the full reconcile's extras once a minute. */
const polledByHand = (p: number) => ((p + 1) * 60_000) / (s.stalenessMs / 2) + ((p + 2) * 60_000) / s.reconcileMs;

describe('scale model: the sync', () => {
  it('calls a minute of polled teams are Σ (projects + the project list) ÷ half the bound, plus the full reconcile', () => {
    const pop = teams([10, 20]);
    const r = simulateSync(pop, pop.teams, quiet, costs, half);
    expect(polledByHand(10)).toBe(276);
    expect(polledByHand(20)).toBe(526); // bench:index measured 516–537 a minute for a 20-project team being read
    expect(r.callsPerMin).toBe(276 + 526);
    expect(r.polledCallsPerMin).toBe(802);
    expect(r.hookedCallsPerMin).toBe(0);
    expect(r.syncsPerMin).toBe(2 * 24);
    expect(r.refusalsPerMin).toBe(0);
    // every sync's 4 statements (the real calls equal the reservation: no settle), the team row of a full one; its
    // project rows only before issue 43 (the code now writes the projects that changed: none here)
    expect(r.bookkeepingWritesPerSec).toBeCloseTo((48 * 4) / 60, 9);
    expect(r.projectWritesPerSec).toBe(0);
    const before = simulateSync(pop, pop.teams, quiet, costs, { ...half, fullRewritesProjects: true });
    expect(before.projectWritesPerSec).toBeCloseTo((10 + 20) / 60, 9);
    const lasting = simulateSync(pop, pop.teams, quiet, { ...costs, signedUrlLifetimeS: { ...costs.signedUrlLifetimeS, value: Infinity } }, half);
    expect(lasting.syncWritesPerSec).toBeCloseTo((48 * 4 + 1 + 1) / 60, 9);
  });

  it('before issue 43, head renders with signed URLs were rewritten every 0.8 × the URLs\' lifetime; now they are not', () => {
    const pop = teams([10, 20]); // 1 000 renders a project's share and more: full head pages
    expect(simulateSync(pop, pop.teams, quiet, costs, s).urlRefreshRowsPerSec).toBe(0);
    const r = simulateSync(pop, pop.teams, quiet, costs, { ...half, urlRewrites: true });
    const perSec = (30 * s.headPage * costs.outputShare.value) / (0.8 * costs.signedUrlLifetimeS.value);
    expect(r.urlRefreshRowsPerSec).toBeCloseTo(perSec, 6);
  });

  it('since issue 43, part 2, a polled team of whole syncs is synced as late as its bound allows, less a tick and twice its last sync', () => {
    const pop = teams([10, 20]);
    // v1 answering at once: every floor − a tick − two ticks (4 250 ms), the sync before a full one at half the bound:
    // syncs at 0 (full), 4 250, …, 59 500, then the full one at 62 000 — 15 syncs and one full reconcile every 62 s
    const instant = { ...costs, v1LatencyMs: { ...costs.v1LatencyMs, value: 0 } };
    const every = s.stalenessMs - 3 * s.tickMs;
    const cycle = 14 * every + s.stalenessMs / 2;
    expect(cycle).toBe(62_000);
    const byHand = (p: number) => ((p + 1) * 15 * 60_000) / cycle + ((p + 2) * 60_000) / cycle;
    const r = simulateSync(pop, pop.teams, quiet, instant, s);
    // (within 5 %: the ticks' grid and the four simulated minutes' edges move a sync or two)
    expect(Math.abs(r.polledCallsPerMin - (byHand(10) + byHand(20))) / (byHand(10) + byHand(20))).toBeLessThan(0.05);
    expect(r.ageP99Ms).toBeLessThanOrEqual(s.stalenessMs); // a reader finds the team within its bound
    // v1 taking 50 ms a call (2 at once): earlier, by twice the last sync's duration (300 ms) — fewer than at half the bound
    const slow = simulateSync(pop, pop.teams, quiet, costs, s);
    const before = simulateSync(pop, pop.teams, quiet, costs, half);
    expect(slow.polledCallsPerMin).toBeGreaterThan(r.polledCallsPerMin);
    expect(slow.polledCallsPerMin).toBeLessThan(before.polledCallsPerMin * 0.7);
    expect(slow.ageP99Ms).toBeLessThanOrEqual(s.stalenessMs);
    expect(slow.bookkeepingWritesPerSec).toBeLessThan(before.bookkeepingWritesPerSec * 0.7);
  });

  it('a team whose syncs do not fit its budget every half bound is synced as often as whole syncs fit a minute', () => {
    // 100 projects: 101 calls a sync, 5 whole syncs in 600 → every 12 s; the full one (203 calls) leaves room for 3 more
    const pop = teams([100]);
    const r = simulateSync(pop, pop.teams, quiet, costs, s);
    expect(r.callsPerMin).toBeLessThanOrEqual(s.perTeamPerMin);
    expect(r.syncsPerMin).toBeGreaterThanOrEqual(4);
    expect(r.syncsPerMin).toBeLessThanOrEqual(5);
    expect(r.ageP99Ms).toBeGreaterThanOrEqual(12_000);
  });

  it('webhooks on half the teams halve the polling; the webhook-fed half costs its reconciliation only', () => {
    const trusted = { ...half, hookTrustMs: Infinity, webhookReconcileMs: 0 };
    const none = simulateSync(teams([20, 20, 20, 20]), teams([20, 20, 20, 20]).teams, quiet, costs, trusted);
    const some = teams([20, 20, 20, 20], 2);
    const r = simulateSync(some, some.teams, quiet, costs, trusted);
    expect(none.polledCallsPerMin).toBe(4 * 526);
    expect(r.polledCallsPerMin).toBe(none.polledCallsPerMin / 2);
    // due at half INDEX_RECONCILE_MS: two syncs a minute, one of them full
    expect(r.hookedCallsPerMin).toBe(2 * (2 * 21 + 22));
  });

  it('before issue 43 (WEBHOOK_RECONCILE_MS 0), a team with webhooks but no delivery within INDEX_RECONCILE_MS was polled', () => {
    const some = teams([20, 20, 20, 20], 2);
    const r = simulateSync(some, some.teams, quiet, costs, { ...half, webhookReconcileMs: 0 });
    expect(r.polledCallsPerMin).toBe(4 * 526);
    expect(r.quietHookCallsPerMin).toBe(2 * 526);
  });

  it('a team with webhooks registered is trusted (issue 43): no head polling, a full reconcile every WEBHOOK_RECONCILE_MS', () => {
    // 40 teams of 20 projects, all with webhooks, quiet: one full sync (list + 20 heads + 20 templates + team + members
    // = 43 calls) each per WEBHOOK_RECONCILE_MS — 40 × 43 ÷ its minutes a minute over the simulated minutes (one reconcile
    // interval, phases spread over it: each team once)
    const minutes = s.webhookReconcileMs / 60_000;
    const all = teams(Array.from({ length: 40 }, () => 20), 40);
    const r = simulateSync(all, all.teams, quiet, costs, s, minutes);
    expect(r.polledCallsPerMin).toBe(0);
    expect(r.quietHookCallsPerMin).toBe(0);
    expect(r.hookedCallsPerMin).toBeCloseTo((40 * 43) / minutes, 0);
    expect(r.syncsPerMin).toBeCloseTo(40 / minutes, 1);
  });

  it('teams sharing a key share its budget: ten 20-project teams on one key are held to 1 200 a minute together', () => {
    const pop = teams(Array.from({ length: 10 }, () => 20));
    const shared: Population = { teams: pop.teams.map((t) => ({ ...t, key: 1 })), keys: 1 };
    const r = simulateSync(shared, shared.teams, quiet, costs, s);
    expect(r.maxKeyCallsPerMin).toBeLessThanOrEqual(s.perKeyPerMin);
    expect(r.callsPerMin).toBeLessThan(10 * 526);
  });
});

describe('scale model: population, backfill, store, instances', () => {
  it('a seeded population sums to its renders and is the same on every run', () => {
    const spec = { ...input.population, teams: 500, totalRenders: 5_000_000 };
    const a = makePopulation(spec);
    const b = makePopulation(spec);
    const sum = a.teams.reduce((n, t) => n + t.renders, 0);
    expect(Math.abs(sum - spec.totalRenders)).toBeLessThanOrEqual(spec.teams);
    const shape = (p: Population) => p.teams.map((t) => [t.renders, t.projectShares.length, t.key, t.webhooks]);
    expect(shape(a)).toEqual(shape(b));
    expect(a.teams.filter((t) => t.webhooks).length).toBe(Math.round(spec.webhookShare * spec.teams));
  });

  it('backfill calls: render pages per project, a template call per project, the project list, team and members', () => {
    const t: Team = { id: 0, renders: 1000, projectShares: [1], key: 1, webhooks: false, readDraw: 1 };
    expect(backfillCalls(t, costs, s)).toBe(Math.ceil(1000 / costs.rendersPerBackfillPage.value) + 1 + 1 + 2);
  });

  it('store bytes are rows × bytes a row measured', () => {
    const pop = teams([1, 1]);
    const b = storeBytes(pop, quiet, costs);
    expect(b.renders).toBe(2000);
    expect(b.parts.renderRows).toBe(2000 * costs.storeBytesPerRenderRow.value);
    expect(b.parts.webhookLedger).toBe(0);
  });

  it('instances: teams packed by memory with headroom, one instance a team when each fills more than half of one', () => {
    const mbPerRender = costs.rssBytesPerRender.value / 2 ** 20;
    const cap = costs.instanceMemoryMb.value * (1 - costs.memoryHeadroom.value) - costs.idleRssMb.value - costs.answerCacheMb.value;
    const big = Math.floor((0.6 * cap) / mbPerRender);
    const pop: Team[] = [0, 1, 2].map((id) => ({ id, renders: big, projectShares: [1], key: id, webhooks: false, readDraw: 1 }));
    expect(packTeams(pop, costs).instances).toBe(3);
    const small = pop.map((t) => ({ ...t, renders: Math.floor(big / 2) }));
    expect(packTeams(small, costs).instances).toBe(1); // 3 × 0.3 of one
    expect(packTeams([...small, { ...small[0]!, id: 3 }], costs).instances).toBe(2); // 4 × 0.3
    expect(packTeams([{ ...pop[0]!, renders: Math.ceil((1.1 * cap) / mbPerRender) }], costs).oversized).toBe(1);
  });
});
