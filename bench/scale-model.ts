/**
 * The scale model (docs/scale.md): a seeded population of teams, the replica's sync simulated over it, memory,
 * instances, the store and the backfill from measured unit costs; Markdown tables on stdout. Deterministic.
 * usage: npm run bench:scale-model [-- overrides.json]   (overrides: any of costs.<name>.value, population, loads, settings)
 */
import { readFileSync } from 'node:fs';
import {
  backfillCalls, budgetIntervalMs, COST_NAMES, DEFAULT_SETTINGS, instanceCapacityMb, leasePlacement, makePopulation, maxOf, packTeams, readTeams, simulateSync,
  storeBytes, syncCallsFor, teamMb, webhookWritesPerSec, type Costs, type Load, type Population, type PopulationSpec, type Settings, type Team,
} from './scale-model-core.js';

interface Input {
  costs: Costs;
  population: PopulationSpec;
  loads: Load[];
  settings: Settings;
}

function loadInput(): Input {
  const base = JSON.parse(readFileSync(new URL('../../bench/scale-costs.json', import.meta.url), 'utf8')) as Input;
  const file = process.argv[2];
  const over = file ? (JSON.parse(readFileSync(file, 'utf8')) as Partial<Input>) : {};
  const costs = { ...base.costs } as Record<string, Costs[keyof Costs]>;
  for (const [k, v] of Object.entries(over.costs ?? {})) costs[k] = { ...costs[k]!, ...v, source: `override (${file})` };
  for (const n of COST_NAMES) if (!costs[n]) throw new Error(`bench/scale-costs.json: no cost ${n}`);
  return {
    costs: costs as Costs,
    population: { ...base.population, ...over.population },
    loads: over.loads ?? base.loads,
    settings: { ...DEFAULT_SETTINGS, ...base.settings, ...over.settings },
  };
}

const fmt = (n: number, digits = 0): string =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }).replace(/,/g, ' ') : '∞';
const gb = (bytes: number): string => fmt(bytes / 2 ** 30, 1);
const pct = (x: number): string => `${fmt(100 * x, 0)} %`;
const table = (head: string[], rows: (string | number)[][]): string =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
};

const input = loadInput();
const { costs, settings: s } = input;
const out: string[] = [];
const say = (line = ''): void => void out.push(line);

function keyTeams(p: Population, teams: readonly Team[]): Map<number, number> {
  const m = new Map<number, number>();
  for (const t of teams) m.set(t.key, (m.get(t.key) ?? 0) + 1);
  void p;
  return m;
}

/** The issue's estimate: Σ projects ÷ bound over the polled read teams (a head check a project per bound), a minute. */
function projectsOverBound(read: readonly Team[], p: Population, load: Load): number {
  const total = p.teams.reduce((a, t) => a + t.renders, 0);
  const kt = keyTeams(p, read);
  let perMin = 0;
  for (const t of read) {
    if (t.webhooks) continue;
    const P = t.projectShares.length;
    const moving = Math.round(((load.createdPerSec * t.renders) / total) * costs.renderDurationS.value);
    const cpm = Math.min(s.perTeamPerMin, s.perKeyPerMin / Math.max(1, kt.get(t.key) ?? 1));
    const bound = Math.max(s.stalenessMs, budgetIntervalMs(syncCallsFor(P, moving), cpm));
    perMin += (P * 60_000) / bound;
  }
  return perMin;
}

/** The model for one population and load: the figures every table and the growth runs read. */
function evaluate(spec: PopulationSpec, load: Load, c: Costs, set: Settings = s) {
  const p = makePopulation(spec);
  const read = readTeams(p, load.readShare);
  const sync = simulateSync(p, read, load, c, set);
  const hooks = webhookWritesPerSec(p, load, c);
  const store = storeBytes(p, load, c);
  const cap = instanceCapacityMb(c);
  const largest = p.teams.reduce((a, t) => (t.renders > a.renders ? t : a));
  // a team's share of a core: its sync calls and the statements they write; deliveries reach any instance (spread evenly)
  const writesPerCall = sync.callsPerMin > 0 ? sync.syncWritesPerSec / (sync.callsPerMin / 60) : 0;
  const perCallUs = c.cpuUsPerSyncCall.value + writesPerCall * c.cpuUsPerStoreWrite.value;
  const teamBusy = new Map([...sync.teamCallsPerMin].map(([id, perMin]) => [id, ((perMin / 60) * perCallUs) / 1e6]));
  const hookBusy = (hooks.deliveriesPerSec * c.cpuUsPerWebhook.value + hooks.writesPerSec * c.cpuUsPerStoreWrite.value) / 1e6;
  // instances: every team held, packed by memory and by the event loop (room left for an even share of the deliveries)
  const byMemory = packTeams(p.teams, c);
  let packed = packTeams(p.teams, c, teamBusy, c.eventLoopBusyLimit.value - hookBusy / byMemory.instances);
  packed = packTeams(p.teams, c, teamBusy, Math.max(0.05, c.eventLoopBusyLimit.value - hookBusy / packed.instances));
  const calls = new Array<number>(packed.instances).fill(0);
  const busy = new Array<number>(packed.instances).fill(hookBusy / packed.instances);
  for (const [id, perMin] of sync.teamCallsPerMin) {
    calls[packed.of.get(id)!]! += perMin;
    busy[packed.of.get(id)!]! += teamBusy.get(id)!;
  }
  // the backfill: per team its calls; a key's teams backfill at once (first reads), each at INDEX_SYNC_CONCURRENCY
  const perKeyTeams = keyTeams(p, p.teams);
  const maxKeyTeams = maxOf(perKeyTeams.values());
  const keyBackfillDemand = (maxKeyTeams * set.concurrency * 60_000) / c.v1LatencyMs.value;
  const writesPerSec = sync.syncWritesPerSec + hooks.writesPerSec;
  const stale = read.length === 0 ? 0 : sync.teamsOver60s / read.length;
  return {
    p, read, sync, hooks, store, byMemory, packed, cap, largest, calls, busy, maxKeyTeams, keyBackfillDemand, writesPerSec, stale,
    limits: {
      v1KeySync: sync.maxKeyCallsPerMin / c.v1RateLimitPerKeyPerMin.value,
      storeWrites: writesPerSec / c.storeWritesPerSecLimit.value,
      memory: teamMb(largest, c) / cap,
      freshness: stale,
    },
  };
}

const spec = input.population;
const [rest, peak] = [input.loads[0]!, input.loads[input.loads.length - 1]!];
const base = evaluate(spec, rest, costs);
const atPeak = evaluate(spec, peak, costs);
const p = base.p;
const renders = p.teams.map((t) => t.renders);
const projects = p.teams.map((t) => t.projectShares.length);
const kt = keyTeams(p, p.teams);

say(`# Scale model: ${fmt(spec.teams)} teams, ${fmt(spec.totalRenders)} renders (seed ${spec.seed})`);
say();
say('## Inputs');
say();
say(table(['cost', 'value', 'unit', 'source'], COST_NAMES.map((n) => [n, fmt(costs[n].value, 2), costs[n].unit, costs[n].source])));
say();
say(`Settings: INDEX_MAX_STALENESS_MS ${s.stalenessMs}, INDEX_RECONCILE_MS ${s.reconcileMs}, INDEX_SYNC_CALLS_PER_MIN ${s.perTeamPerMin}, ` +
  `INDEX_SYNC_CALLS_PER_KEY_PER_MIN ${s.perKeyPerMin}, INDEX_SYNC_CONCURRENCY ${s.concurrency}, tick ${s.tickMs} ms, head page ${s.headPage}, ` +
  `quiet projects checked every ${s.quietEvery} sync(s), WEBHOOK_RECONCILE_MS ${s.webhookReconcileMs}.`);
say();
say('## Population');
say();
say(table(['teams', 'renders', 'projects', 'sync keys', 'teams of the widest key', 'teams with webhooks', 'renders a team p50 / p90 / p99 / max',
  'projects a team p50 / p99 / max'], [[
  fmt(p.teams.length), fmt(renders.reduce((a, b) => a + b, 0)), fmt(projects.reduce((a, b) => a + b, 0)), fmt(p.keys), fmt(maxOf(kt.values())),
  `${fmt(p.teams.filter((t) => t.webhooks).length)} (${pct(spec.webhookShare)})`,
  [0.5, 0.9, 0.99, 1].map((q) => fmt(quantile(renders, q))).join(' / '), [0.5, 0.99, 1].map((q) => fmt(quantile(projects, q))).join(' / '),
]]));
say();
say('## v1 calls a minute (the background sync of the teams being read)');
say();
const callsRow = (name: string, e: ReturnType<typeof evaluate>, load: Load) => [
  name, `${fmt(e.read.length)} (${pct(load.readShare)})`, fmt(load.createdPerSec, 1), fmt(e.sync.callsPerMin), fmt(e.sync.hookedCallsPerMin),
  fmt(e.sync.polledCallsPerMin), fmt(e.sync.quietHookCallsPerMin), fmt(projectsOverBound(e.read, e.p, load)), fmt(e.sync.syncsPerMin),
  fmt(e.sync.refusalsPerMin, 1),
  fmt(e.sync.maxKeyCallsPerMin), `${fmt(e.sync.ageP50Ms / 1000, 1)} s / ${fmt(e.sync.ageP99Ms / 1000, 1)} s`, fmt(e.sync.teamsOver60s),
];
const callsHead = ['load', 'teams read', 'renders created/s', 'calls/min', 'webhook-fed (reconciliation)', 'polled',
  'of which webhook teams gone quiet', 'Σ projects ÷ bound (polled)', 'syncs/min', 'syncs refused/min', 'busiest key /min',
  'worst age a reader sees p50 / p99',
  'read teams older than 60 s'];
say(table(callsHead, [callsRow(rest.name, base, rest), callsRow(peak.name, atPeak, peak)]));
say();
say(`Webhook share ${pct(spec.webhookShare)}: a team with webhooks registered is trusted (issue 43): not head-polled, reconciled (a full ` +
  `sync) every WEBHOOK_RECONCILE_MS (${s.webhookReconcileMs / 60_000} min); before it, only while a delivery arrived within INDEX_RECONCILE_MS.`);
say();
say('### The webhook share');
say();
const shares = [0, 0.25, 0.5, 0.75, 1];
const shareRows: (string | number)[][] = [];
for (const load of [rest, peak]) {
  for (const share of shares) {
    const e = evaluate({ ...spec, webhookShare: share }, load, costs);
    shareRows.push([load.name, pct(share), fmt(e.sync.callsPerMin), fmt(e.sync.hookedCallsPerMin), fmt(e.sync.polledCallsPerMin),
      fmt(e.sync.quietHookCallsPerMin), fmt(e.hooks.deliveriesPerSec, 1), fmt(e.writesPerSec)]);
  }
}
say(table(['load', 'teams with webhooks', 'calls/min', 'webhook-fed', 'polled', 'of which quiet webhook teams', 'deliveries/s', 'store writes/s'], shareRows));
say();
say('### Choosing WEBHOOK_RECONCILE_MS (at rest)');
say();
say('The reconcile finds renders created and never moved (creation sends no event) and what has no event (templates, members): ' +
  'its interval is their staleness bound for a trusted team. 0: the rule before issue 43.');
say();
const cadenceRows: (string | number)[][] = [];
for (const share of [0.5, 1]) {
  for (const every of [0, 300_000, 600_000, 900_000, 1_200_000, 1_800_000]) {
    const e = evaluate({ ...spec, webhookShare: share }, rest, costs, { ...s, webhookReconcileMs: every });
    cadenceRows.push([pct(share), every === 0 ? '0 (before)' : `${every / 60_000} min`, fmt(e.sync.callsPerMin), fmt(e.sync.hookedCallsPerMin),
      fmt(e.sync.polledCallsPerMin), fmt(e.writesPerSec)]);
  }
}
say(table(['teams with webhooks', 'WEBHOOK_RECONCILE_MS', 'calls/min', 'webhook-fed', 'polled', 'store writes/s'], cadenceRows));
say();
say('## The store');
say();
const sizeRows = Object.entries(base.store.parts).map(([k, v]) => [k, gb(v)]);
say(table(['part', 'GB'], [...sizeRows, ['total', gb(base.store.total)]]));
say();
const writeRow = (name: string, e: ReturnType<typeof evaluate>) => [
  name, fmt(e.hooks.deliveriesPerSec, 1), fmt(e.hooks.writesPerSec), fmt(e.sync.syncWritesPerSec), fmt(e.sync.bookkeepingWritesPerSec),
  fmt(e.sync.projectWritesPerSec), fmt(e.sync.urlRefreshStatementsPerSec), fmt(e.sync.renderRowWritesPerSec, 1),
  fmt(e.writesPerSec), fmt(costs.storeWritesPerSecLimit.value), pct(e.limits.storeWrites), fmt(e.sync.syncRowsPerSec + e.hooks.writesPerSec),
];
say(table(['load', 'webhook deliveries/s', 'their statements/s', 'sync statements/s', 'of which every sync\'s bookkeeping',
  'of which project rows of full syncs', 'of which head renders rewritten for their URLs', 'render rows found changed', 'total statements/s',
  'limit', 'used', 'rows written/s'],
  [writeRow(rest.name, base), writeRow(peak.name, atPeak)]));
say();
say('## Memory and instances');
say();
const memRow = (name: string, teams: readonly Team[], c: Costs) => {
  const packed = packTeams(teams, c);
  const leased = leasePlacement(teams, c, packed.instances);
  const largest = teams.reduce((a, t) => (t.renders > a.renders ? t : a));
  return [name, fmt(teams.length), gb(teams.reduce((a, t) => a + t.renders, 0) * c.rssBytesPerRender.value), fmt(instanceCapacityMb(c)),
    fmt(packed.instances), leased.oversized > 0 ? `— (${leased.oversized} too large)` : fmt(leased.instances), fmt(teamMb(largest, c)),
    fmt(packed.oversized)];
};
const cut = { ...costs, rssBytesPerRender: costs.rssBytesPerRenderNow };
say(table(['teams held', 'teams', 'RSS of the replica, GB', 'MB an instance gives teams', 'instances, teams packed', 'instances, as leases fall',
  'largest team, MB', 'teams larger than one instance'], [
  memRow(`all, ${costs.rssBytesPerRender.value} B a render`, p.teams, costs),
  memRow(`read at peak (${pct(peak.readShare)}), ${costs.rssBytesPerRender.value} B`, atPeak.read, costs),
  memRow(`all, ${cut.rssBytesPerRender.value} B (after the memory work)`, p.teams, cut),
  memRow(`read at peak, ${cut.rssBytesPerRender.value} B`, atPeak.read, cut),
]));
say();
say(`Instance: ${fmt(costs.instanceMemoryMb.value)} MB, ${pct(costs.memoryHeadroom.value)} headroom, ${costs.idleRssMb.value} MB idle, ` +
  `${costs.answerCacheMb.value} MB answer cache. ${costs.rssBytesPerRender.value} B a render: measured at 1M before the memory work; ` +
  `${costs.rssBytesPerRenderNow.value} B: measured at 200 000 after it. The other tables use ${costs.rssBytesPerRender.value} B.`);
say();
const perInstance = (name: string, e: ReturnType<typeof evaluate>) => [
  name, fmt(e.byMemory.instances), fmt(e.packed.instances), fmt(maxOf(e.packed.loadMb) + costs.idleRssMb.value + costs.answerCacheMb.value),
  fmt(maxOf(e.calls)),
  fmt(e.sync.callsPerMin / e.packed.instances), fmt(e.hooks.deliveriesPerSec / e.packed.instances, 2), pct(maxOf(e.busy)),
];
say(table(['load (all teams held, packed)', 'instances for memory', 'instances for memory and event loop', 'largest RSS, MB',
  'busiest instance sync calls/min', 'mean sync calls/min',
  'deliveries/s an instance', 'busiest event loop (background work)'], [perInstance(rest.name, base), perInstance(peak.name, atPeak),
  perInstance(`${peak.name}, ${cut.rssBytesPerRender.value} B a render`, evaluate(spec, peak, cut))]));
say();
say('## Backfill and restart');
say();
const bf = p.teams.map((t) => backfillCalls(t, costs, s));
const bfTotal = bf.reduce((a, b) => a + b, 0);
const largestCalls = backfillCalls(base.largest, costs, s);
const perInstRenders = maxOf(base.packed.loadMb) / (costs.rssBytesPerRender.value / 2 ** 20);
const keyCalls = new Map<number, number>();
p.teams.forEach((t, i) => keyCalls.set(t.key, (keyCalls.get(t.key) ?? 0) + bf[i]!));
const widestKeyCalls = maxOf(keyCalls.values());
const slowestKeyMin = widestKeyCalls / costs.v1RateLimitPerKeyPerMin.value;
say(table(['measure', 'value', 'how'], [
  ['backfill calls, whole population', fmt(bfTotal),
    'Σ teams: render pages per project (≥ 1) + a template call per project + project pages + team + members'],
  ['backfill of an instance (its teams, CPU-bound)', `${fmt((perInstRenders * costs.backfillUsPerRender.value) / 1e6 / 60, 1)} min`,
    `${fmt(perInstRenders)} renders × ${costs.backfillUsPerRender.value} µs`],
  ['backfill of the largest team (v1-bound)', `${fmt((largestCalls / s.concurrency) * costs.v1LatencyMs.value / 60_000, 1)} min`,
    `${fmt(largestCalls)} calls ÷ ${s.concurrency} at once × ${costs.v1LatencyMs.value} ms`],
  ['backfill of the whole population, v1-bound (keys in parallel, the slowest key)', `${fmt(slowestKeyMin, 0)} min`,
    `the widest key's teams' ${fmt(widestKeyCalls)} calls ÷ v1's assumed ${fmt(costs.v1RateLimitPerKeyPerMin.value)} a minute`],
  ['a key backfilling its teams at once, calls/min', fmt(base.keyBackfillDemand),
    `${base.maxKeyTeams} teams × ${s.concurrency} at once × 60 000 ÷ ${costs.v1LatencyMs.value} ms; ` +
    `v1's limit assumed ${fmt(costs.v1RateLimitPerKeyPerMin.value)}`],
  ['restart: an instance reads its teams back from the store', `${fmt((perInstRenders * costs.reloadUsPerRender.value) / 1e6, 0)} s`,
    `${fmt(perInstRenders)} renders × ${costs.reloadUsPerRender.value} µs`],
  ['restart: the largest team read back (its first read waits)', `${fmt((base.largest.renders * costs.reloadUsPerRender.value) / 1e6, 0)} s`,
    `${fmt(base.largest.renders)} renders × ${costs.reloadUsPerRender.value} µs`],
  ['restart: first sync of the teams being read (rest)', `${fmt(base.read.reduce((a, t) => a + syncCallsFor(t.projectShares.length, 0), 0))} calls`,
    'one sync each (their stored rows are stale), within the sync budget'],
]));
say();
say('## What breaks first');
say();
const LIMITS = ['storeWrites', 'v1KeySync', 'memory', 'freshness'] as const;
const NAMES: Record<(typeof LIMITS)[number], string> = {
  storeWrites: 'store writes/s ÷ limit', v1KeySync: 'busiest key\'s sync calls ÷ v1 limit',
  memory: 'largest team ÷ one instance', freshness: 'read teams older than 60 s (not a limit)',
};
const factors = [0.125, 0.25, 0.5, 1, 2, 4];
say('Shared limits that more instances do not lift: the store (one database), v1\'s rate limit per key, a team held whole by one ' +
  'instance. Memory and the event loop of an instance are met by adding instances (their count is a column, packed by both); ' +
  'the share of read teams a reader may find older than 60 s is shown beside, as what readers see.');
say();
for (const [axis, grow] of [
  ['the number of teams (renders a team unchanged)', (f: number) => ({ ...spec, teams: Math.round(spec.teams * f), totalRenders: spec.totalRenders * f })],
  ['the size of teams (10 000 teams)', (f: number) => ({ ...spec, totalRenders: spec.totalRenders * f })],
] as const) {
  const rows: (string | number)[][] = [];
  const first = new Map<string, number>();
  for (const f of factors) {
    const e = evaluate(grow(f), { ...peak, createdPerSec: peak.createdPerSec * f }, costs);
    for (const l of LIMITS) if (l !== 'freshness' && e.limits[l] >= 1 && !first.has(l)) first.set(l, f);
    rows.push([`×${f}`, fmt(e.p.teams.length), fmt(e.store.renders), fmt(e.packed.instances), fmt(e.sync.callsPerMin),
      ...LIMITS.map((l) => pct(e.limits[l]))]);
  }
  say(`### Peak load, growing the number of renders by ${axis}`);
  say();
  say(table(['factor', 'teams', 'renders', 'instances', 'v1 calls/min', ...LIMITS.map((l) => NAMES[l])], rows));
  say();
  const order = [...first.entries()].sort((a, b) => a[1] - b[1]);
  say(order.length === 0 ? 'No shared limit crossed up to ×4.'
    : `First crossed: ${order.map(([l, f]) => `${NAMES[l as (typeof LIMITS)[number]]} at ×${f}`).join(', ')}.`);
  say();
}
say('## Levers (peak load)');
say();
const levers: [string, PopulationSpec, Settings, Costs?][] = [
  ['as configured', spec, s],
  ['INDEX_MAX_STALENESS_MS 30 s', spec, { ...s, stalenessMs: 30_000 }],
  ['quiet projects checked every 10th sync', spec, { ...s, quietEvery: 10 }],
  ['webhooks on 90 % of teams', { ...spec, webhookShare: 0.9 }, s],
  ['WEBHOOK_RECONCILE_MS 0: webhooks trusted only while deliveries arrive (before issue 43)', spec, { ...s, webhookReconcileMs: 0 }],
  ['a sync\'s bookkeeping in 2 statements (not in the code)', spec, { ...s, bookkeeping: 2, settleStatements: 0 }],
  ['30 s, every 10th, 90 %', { ...spec, webhookShare: 0.9 }, { ...s, stalenessMs: 30_000, quietEvery: 10 }],
  ['a full sync rewrites every project row (before issue 43)', spec, { ...s, fullRewritesProjects: true }],
  ['head renders rewritten for their signed URLs alone (before issue 43)', spec, { ...s, urlRewrites: true }],
  ['polled whole syncs at half their bound (before issue 43, part 2)', spec, { ...s, dueAtHalfBound: true }],
  ['all of the above', { ...spec, webhookShare: 0.9 },
    { ...s, stalenessMs: 30_000, quietEvery: 10, bookkeeping: 2, settleStatements: 0, fullRewritesProjects: false }],
];
say(table(['lever', 'v1 calls/min', 'webhook-fed', 'polled', 'store statements/s', 'busiest key /min', 'age p50 / p99', 'instances'],
  levers.map(([name, sp, set, c]) => {
    const e = evaluate(sp, peak, c ?? costs, set);
    return [name, fmt(e.sync.callsPerMin), fmt(e.sync.hookedCallsPerMin), fmt(e.sync.polledCallsPerMin), fmt(e.writesPerSec),
      fmt(e.sync.maxKeyCallsPerMin), `${fmt(e.sync.ageP50Ms / 1000, 1)} s / ${fmt(e.sync.ageP99Ms / 1000, 1)} s`, fmt(e.packed.instances)];
  })));
say();
process.stdout.write(`${out.join('\n')}\n`);
