/**
 * The scale model of docs/scale.md, pure and deterministic (seeded): a population of teams, the replica's background
 * sync simulated tick by tick as src/replica/sync/scheduler.ts runs it (a polled team of whole syncs due as late as its
 * bound allows, one with a quiet-project rotation at the code's own `cadenceFrom` interval, never more often than the
 * budget allows, calls reserved per team and per key per calendar minute, the periodic full reconcile, a team with
 * webhooks trusted and reconciled every WEBHOOK_RECONCILE_MS), then memory, instances, the store and the
 * backfill derived from measured per-unit costs. bench/scale-model.ts runs it and prints the tables.
 */
import { cadenceFrom, fullCallsPerMin } from '../src/replica/sync/freshness.js';
import { phaseHash } from '../src/replica/sync/rotation.js';
import { Rng } from '../src/sim/rng.js';

/**
 * The calls one sync of a team reserves (src/replica/sync/freshness.ts `syncCallsFor`, as of this model): its project list, a
 * head check per project, its renders not yet final (at most two a project). Copied, not imported: the model keeps the
 * rule it was run with while the sync changes.
 */
export const syncCallsFor = (projects: number, moving: number): number => projects + Math.min(moving, 2 * projects) + 1;

/** How often a team's budget lets it be synced (src/replica/sync/freshness.ts `budgetIntervalMs`, copied likewise). */
export function budgetIntervalMs(calls: number, callsPerMin: number): number {
  if (!Number.isFinite(callsPerMin)) return 0;
  const perMinute = Math.floor(callsPerMin / calls);
  return perMinute >= 1 ? Math.ceil(60_000 / perMinute) : Math.ceil(calls / callsPerMin) * 60_000;
}

/** A measured (or assumed) unit cost, with where it comes from. */
export interface Cost {
  readonly value: number;
  readonly unit: string;
  readonly source: string;
}

export const COST_NAMES = [
  'replicaBytesPerRender', 'rssBytesPerRender', 'rssBytesPerRenderNow', 'idleRssMb', 'answerCacheMb', 'instanceMemoryMb', 'memoryHeadroom',
  'storeBytesPerRenderRow', 'storeBytesPerIdPair', 'storeBytesPerRenderVersion', 'storeBytesPerWebhookDelivery', 'storeBytesPerProjectRow',
  'storeWritesPerSecLimit', 'rendersPerBackfillPage', 'backfillUsPerRender', 'reloadUsPerRender', 'v1LatencyMs',
  'v1RateLimitPerKeyPerMin', 'cpuUsPerSyncCall', 'cpuUsPerWebhook', 'cpuUsPerStoreWrite', 'eventLoopBusyLimit',
  'renderDurationS', 'statusChangesPerRender', 'webhookDeliveriesPerRender', 'webhookRetentionH', 'signedUrlLifetimeS', 'outputShare',
] as const;
export type CostName = (typeof COST_NAMES)[number];
export type Costs = Readonly<Record<CostName, Cost>>;

/** The gateway's settings the sync follows (src/config/schema.ts defaults). */
export interface Settings {
  readonly stalenessMs: number; // INDEX_MAX_STALENESS_MS
  readonly reconcileMs: number; // INDEX_RECONCILE_MS
  readonly templatesMs: number; // TEMPLATES_RECONCILE_MS
  readonly perTeamPerMin: number; // INDEX_SYNC_CALLS_PER_MIN
  readonly perKeyPerMin: number; // INDEX_SYNC_CALLS_PER_KEY_PER_MIN
  readonly concurrency: number; // INDEX_SYNC_CONCURRENCY
  readonly tickMs: number; // the replica's background tick
  readonly headPage: number; // the first page of a head check (src/replica/sync/sync.ts)
  readonly pageMax: number; // v1's largest page
  /** Quiet projects are head-checked once every this many syncs (1: every sync, as the code does today). */
  readonly quietEvery: number;
  /** A project with a render created within this window counts as active (checked every sync). */
  readonly activeWindowS: number;
  /**
   * How long after its last delivery a team with webhooks counts as webhook-fed (the code: INDEX_RECONCILE_MS);
   * Infinity: a team with webhooks registered always does (not in the code: a lever the model weighs).
   */
  readonly hookTrustMs: number;
  /**
   * WEBHOOK_RECONCILE_MS (issue 43): a team with webhooks registered is trusted — never head-polled, reconciled (a full
   * sync) this often or as often as its budget lets such syncs run; 0: the rule before it (`hookTrustMs`). The receivers
   * are taken as answering (an outage's catch-up is one more sync of the teams it touched: not modelled).
   */
  readonly webhookReconcileMs: number;
  /**
   * Store statements every sync writes whatever it finds (the code: 4 — the lease taken with the sync's start, the team's
   * and the key's budget rows reserved in one upsert, the lease given back with the sync mark, the team announced: a
   * NOTIFY, no row; 7 before issue 43's part 3), and the settle's (1: both budget rows in one upsert, when the real calls
   * differ from the reservation; 2 before).
   */
  readonly bookkeeping: number;
  /** The rows those statements write (the code: 4 — the team row twice, both budget rows; 6 before issue 43's part 3). */
  readonly bookkeepingRows: number;
  readonly settleStatements: number;
  /** Whether a full sync rewrites every project row (the code before issue 43), or only those that changed (the code now). */
  readonly fullRewritesProjects: boolean;
  /**
   * Whether a head check writes a render whose signed URLs alone were signed afresh (the code before issue 43), or keeps
   * them in memory only (the code now: the store's copy is refreshed when read).
   */
  readonly urlRewrites: boolean;
  /**
   * Whether a polled team of whole syncs is synced at half its bound (the code before issue 43's part 2), or as late as
   * its bound allows less a tick and twice its last sync's duration (the code now: `dueAfter`).
   */
  readonly dueAtHalfBound: boolean;
}

export const DEFAULT_SETTINGS: Settings = {
  stalenessMs: 5_000, reconcileMs: 60_000, templatesMs: 60_000, perTeamPerMin: 600, perKeyPerMin: 1_200, concurrency: 2, tickMs: 250,
  headPage: 20, pageMax: 60, quietEvery: 1, activeWindowS: 600, hookTrustMs: 60_000, webhookReconcileMs: 1_200_000,
  bookkeeping: 4, bookkeepingRows: 4, settleStatements: 1, fullRewritesProjects: false, urlRewrites: false,
  dueAtHalfBound: false,
};

export interface PopulationSpec {
  readonly seed: number;
  readonly teams: number;
  readonly totalRenders: number;
  /** σ of the lognormal of renders per team (its median follows from the total). */
  readonly rendersSigma: number;
  readonly rendersPerProjectMedian: number;
  readonly rendersPerProjectSigma: number;
  readonly maxProjectsPerTeam: number;
  /** Teams of one account: 1 + a Pareto draw of this shape, at most accountSizeMax. */
  readonly accountShape: number;
  readonly accountSizeMax: number;
  /** Share of accounts whose teams are all synced with their administrator's one key (the others: a key a team). */
  readonly adminKeyShare: number;
  /** Share of teams with webhooks registered in the v1 dashboard. */
  readonly webhookShare: number;
  /** A team's chance of being among those read is ∝ renders^readSkew. */
  readonly readSkew: number;
}

export interface Team {
  readonly id: number;
  readonly renders: number;
  /** Each project's share of the team's renders and of its new ones (Zipf), largest first. */
  readonly projectShares: readonly number[];
  readonly key: number;
  readonly webhooks: boolean;
  /** Draw for the read set (Efraimidis–Spirakis key: the largest `readShare × teams` are read). */
  readonly readDraw: number;
  /** The team's weight in the renders created (its renders when absent). */
  readonly activity?: number;
}

export interface Population {
  readonly teams: readonly Team[];
  readonly keys: number;
}

/** Renders created a second over the whole population, and the share of teams read within INDEX_ACTIVE_MS. */
export interface Load {
  readonly name: string;
  readonly createdPerSec: number;
  readonly readShare: number;
}

/** The largest of many numbers (0 for none), without spreading them as arguments. */
export function maxOf(xs: Iterable<number>): number {
  let m = 0;
  for (const x of xs) if (x > m) m = x;
  return m;
}

function normal(rng: Rng): number {
  const u = Math.max(rng.next(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
}

export function zipfShares(n: number): number[] {
  let h = 0;
  for (let i = 1; i <= n; i++) h += 1 / i;
  return Array.from({ length: n }, (_, i) => 1 / (i + 1) / h);
}

/** A seeded population: renders per team lognormal scaled to the total, projects from renders per project, keys, webhooks. */
export function makePopulation(spec: PopulationSpec): Population {
  const rng = new Rng(spec.seed);
  const raw = Array.from({ length: spec.teams }, () => Math.exp(spec.rendersSigma * normal(rng)));
  const sum = raw.reduce((a, b) => a + b, 0);
  const renders = raw.map((x) => Math.max(1, Math.round((x / sum) * spec.totalRenders)));
  const hooked = new Set(shuffle(rng, spec.teams).slice(0, Math.round(spec.webhookShare * spec.teams)));
  const teams: Team[] = [];
  let key = 0;
  let left = 0;
  let sharedKey = false;
  for (let i = 0; i < spec.teams; i++) {
    if (left === 0) {
      left = Math.min(spec.accountSizeMax, 1 + Math.floor(Math.pow(Math.max(rng.next(), 1e-9), -1 / spec.accountShape) - 1));
      sharedKey = rng.chance(spec.adminKeyShare);
      key++;
    } else if (!sharedKey) key++;
    left--;
    const r = renders[i]!;
    const perProject = spec.rendersPerProjectMedian * Math.exp(spec.rendersPerProjectSigma * normal(rng));
    const projects = Math.min(spec.maxProjectsPerTeam, Math.max(1, Math.ceil(r / perProject)));
    const weight = Math.pow(r, spec.readSkew);
    teams.push({ id: i, renders: r, projectShares: zipfShares(projects), key, webhooks: hooked.has(i), readDraw: Math.pow(rng.next(), 1 / weight) });
  }
  return { teams, keys: key };
}

function shuffle(rng: Rng, n: number): number[] {
  const a = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/** The teams read within INDEX_ACTIVE_MS under a load (the largest read draws). */
export function readTeams(p: Population, readShare: number): Team[] {
  const n = Math.round(readShare * p.teams.length);
  return [...p.teams].sort((a, b) => b.readDraw - a.readDraw || a.id - b.id).slice(0, n);
}

// ---------------------------------------------------------------------------------------------------------------------
// The background sync, simulated

/** What the simulated minutes of sync cost, per minute. */
export interface SyncResult {
  readonly callsPerMin: number;
  /** Calls of teams webhook-fed at the time of the sync (reconciliations). */
  readonly hookedCallsPerMin: number;
  /** Calls of teams polled (no webhooks, or webhooks registered but none within INDEX_RECONCILE_MS). */
  readonly polledCallsPerMin: number;
  /** Of the polled calls, those of teams with webhooks registered that were quiet. */
  readonly quietHookCallsPerMin: number;
  readonly syncsPerMin: number;
  readonly refusalsPerMin: number;
  readonly maxKeyCallsPerMin: number;
  readonly maxTeamCallsPerMin: number;
  /** Store statements a second the syncs write (leases, budget rows, sync marks, render rows, head marks, projects). */
  readonly syncWritesPerSec: number;
  /** The rows those statements write (a statement of several renders writes a row each; the announcement none). */
  readonly syncRowsPerSec: number;
  /** Of them, render rows written (new renders and states the sync found). */
  readonly renderRowWritesPerSec: number;
  /** Of them, the statements every sync writes whatever it finds (lease, budget, marks, announcement). */
  readonly bookkeepingWritesPerSec: number;
  /** Of them, project rows a full sync rewrites. */
  readonly projectWritesPerSec: number;
  /** Render rows rewritten because a head page showed them with their signed URLs in the last fifth of their lifetime. */
  readonly urlRefreshRowsPerSec: number;
  readonly urlRefreshStatementsPerSec: number;
  /** A read team's age when its next sync ended (what a reader may see), ms: median and p99 over the read teams. */
  readonly ageP50Ms: number;
  readonly ageP99Ms: number;
  readonly teamsOver60s: number;
  /** Per team: its calls a minute (for per-instance sums). */
  readonly teamCallsPerMin: ReadonlyMap<number, number>;
}

interface TeamState {
  readonly t: Team;
  readonly projects: number;
  readonly rate: number; // renders a second
  readonly moving: number;
  readonly eventRate: number; // deliveries a second
  readonly activeHeads: number; // head checks a sync (today: every project)
  readonly repoll: number; // moving renders not in a head page, read again a sync
  /** Per checked project (largest first), the renders of its head page that carry signed output URLs. */
  readonly headUrls: readonly number[];
  /**
   * A polled team's quiet-project rotation, when the code's cadence (`cadenceFrom`, imported: the rotation's cycle choice is
   * the code's) picks one: its interval, its cycle, its active and quiet projects. Null: whole syncs.
   */
  readonly rotation: { readonly intervalMs: number; readonly cycleMs: number; readonly active: number; readonly quiet: number } | null;
  syncedAt: number;
  busyUntil: number;
  fullAt: number;
  spentUntil: number;
  webhookAt: number;
  nextEvent: number;
  calls: number;
  maxAge: number;
  /** The last sync's duration (ms; -1 before the first): a polled team's next is due as late as its floor allows (`dueAfter`). */
  lastMs: number;
}

/**
 * Simulates `minutes` of the background sync of the read teams (after one minute of warm-up), a tick every
 * `s.tickMs`, as the scheduler does: a team is due at max(floor / 2, floor − tick − twice its last sync's duration,
 * budget interval) (`dueAfter` in src/replica/sync/freshness.ts), floor being
 * INDEX_MAX_STALENESS_MS or, while a delivery arrived within INDEX_RECONCILE_MS (`hookTrustMs`), INDEX_RECONCILE_MS; each sync reserves
 * `syncCallsFor` (+ projects + 2 when full) per team and per key in the calendar minute, and is refused when they do not
 * fit; its real calls are the project list, one head page per project (more when more renders arrived than the page
 * shows), the moving renders not seen in a head page, and on a full sync the templates, team and members.
 */
export function simulateSync(p: Population, read: readonly Team[], load: Load, costs: Costs, s: Settings, minutes = 4): SyncResult {
  const rng = new Rng(7);
  const total = p.teams.reduce((a, t) => a + (t.activity ?? t.renders), 0);
  const D = costs.renderDurationS.value;
  const perKeyTeams = new Map<number, number>();
  for (const t of read) perKeyTeams.set(t.key, (perKeyTeams.get(t.key) ?? 0) + 1);
  const states: TeamState[] = read.map((t) => {
    const rate = (load.createdPerSec * (t.activity ?? t.renders)) / total;
    const moving = rate * D;
    let activeHeads = 0;
    let activeCount = 0;
    let repoll = 0;
    const headUrls: number[] = [];
    for (const w of t.projectShares) {
      const active = 1 - Math.exp(-rate * w * s.activeWindowS);
      activeHeads += active + (1 - active) / s.quietEvery;
      activeCount += active;
      headUrls.push(Math.min(s.headPage, t.renders * w) * costs.outputShare.value * (active + (1 - active) / s.quietEvery));
      const m = moving * w;
      if (m > s.headPage) repoll += Math.min(m - s.headPage, costs.statusChangesPerRender.value);
    }
    const eventRate = t.webhooks ? rate * costs.webhookDeliveriesPerRender.value : 0;
    // a trusted team's reconciles fall anywhere in their interval (the simulated minutes see their share of them)
    const phase = Math.floor(rng.next() * (t.webhooks && s.webhookReconcileMs > 0 ? s.webhookReconcileMs : s.stalenessMs));
    const cpm = Math.min(s.perTeamPerMin, s.perKeyPerMin / Math.max(1, perKeyTeams.get(t.key) ?? 1));
    const rotation = t.webhooks || s.quietEvery !== 1 ? null : rotationOf(t, activeCount, moving, cpm, s);
    return {
      t, projects: t.projectShares.length, rate, moving, eventRate, activeHeads, repoll, headUrls, rotation, syncedAt: -phase, busyUntil: 0, fullAt: -phase,
      spentUntil: 0, webhookAt: -Infinity, nextEvent: eventRate > 0 ? expDraw(rng, eventRate) : Infinity, calls: 0, maxAge: 0, lastMs: -1,
    };
  });
  const teamUsed = new Map<string, number>();
  const keyUsed = new Map<string, number>();
  const warm = 60_000;
  const end = warm + minutes * 60_000;
  let hooked = 0, polled = 0, quietHook = 0, syncs = 0, refusals = 0;
  let writes = 0, rows = 0, bookkeeping = 0, projectWrites = 0, rowWrites = 0, urlRows = 0, urlStatements = 0;
  const keyCalls = new Map<number, number>();
  for (let now = 0; now < end; now += s.tickMs) {
    const counting = now >= warm;
    const minute = Math.floor(now / 60_000);
    for (const st of states) {
      while (st.nextEvent <= now) {
        st.webhookAt = st.nextEvent;
        st.nextEvent += expDraw(rng, st.eventRate);
      }
      if (now < st.busyUntil || now < st.spentUntil) continue;
      const trusted = st.t.webhooks && s.webhookReconcileMs > 0;
      const isHooked = trusted || (st.t.webhooks && (s.hookTrustMs === Infinity || now - st.webhookAt < s.hookTrustMs));
      const floor = isHooked ? Math.max(s.reconcileMs, s.stalenessMs) : s.stalenessMs;
      const rotation = isHooked ? null : st.rotation;
      // a rotation's sync: the active projects' heads and the quiet ones due since the last sync (on average)
      const heads = rotation ? rotation.active + rotation.quiet * Math.min(1, (now - st.syncedAt) / rotation.cycleMs) : st.projects;
      const reserveCalls = rotation ? 1 + Math.round(heads) + Math.min(Math.round(st.moving), 2 * st.projects) : syncCallsFor(st.projects, Math.round(st.moving));
      const cpm = Math.min(s.perTeamPerMin, s.perKeyPerMin / Math.max(1, perKeyTeams.get(st.t.key) ?? 1));
      // (the code's `reconcileCadence` in src/replica/sync/freshness.ts: a full sync every WEBHOOK_RECONCILE_MS; a rotation
      // keeps its interval: `dueAfter`)
      const due = trusted
        ? Math.max(s.webhookReconcileMs, s.stalenessMs, budgetIntervalMs(reserveCalls + fullSyncCalls(st.projects, Infinity, s), cpm))
        : rotation ? rotation.intervalMs : Math.max(floor / 2, st.lastMs < 0 || s.dueAtHalfBound || now - st.fullAt >= s.reconcileMs ? 0
          : floor - s.tickMs - 2 * Math.max(st.lastMs, s.tickMs), budgetIntervalMs(reserveCalls, wholeBudget(cpm, st.projects, s)));
      if (now - st.syncedAt < due) continue;
      const full = trusted || now - st.fullAt >= s.reconcileMs;
      const fullCalls = full ? fullSyncCalls(st.projects, now - st.fullAt, s) : 0;
      const need = Math.min(reserveCalls + fullCalls, s.perTeamPerMin, s.perKeyPerMin);
      const tk = `${st.t.id}:${minute}`;
      const kk = `${st.t.key}:${minute}`;
      if ((teamUsed.get(tk) ?? 0) + need > s.perTeamPerMin || (keyUsed.get(kk) ?? 0) + need > s.perKeyPerMin) {
        st.spentUntil = (minute + 1) * 60_000;
        if (counting) refusals++;
        continue;
      }
      const gapS = (now - st.syncedAt) / 1000;
      const calls = syncCost(rotation ? { ...st, activeHeads: heads } : st, gapS, fullCalls, s);
      teamUsed.set(tk, (teamUsed.get(tk) ?? 0) + calls);
      keyUsed.set(kk, (keyUsed.get(kk) ?? 0) + calls);
      const duration = Math.ceil(calls / s.concurrency) * costs.v1LatencyMs.value;
      // what a reader may see: the age of the last completed sync's start when this one ends
      const age = now + duration - st.syncedAt;
      if (counting) {
        st.maxAge = Math.max(st.maxAge, age);
        st.calls += calls;
        syncs++;
        if (isHooked) hooked += calls;
        else {
          polled += calls;
          if (st.t.webhooks) quietHook += calls;
        }
        keyCalls.set(st.t.key, (keyCalls.get(st.t.key) ?? 0) + calls);
        const found = isHooked ? 0 : renderRowsFound(st, gapS, D, costs);
        rows += found;
        const w = syncWrites(st, gapS, full, found, need !== calls, s);
        const u = s.urlRewrites ? urlRefreshes(st, gapS, costs) : { statements: 0, rows: 0 };
        writes += w.statements + u.statements;
        rowWrites += w.rows + u.rows;
        urlRows += u.rows;
        urlStatements += u.statements;
        bookkeeping += s.bookkeeping + (need !== calls ? s.settleStatements : 0);
        if (full && s.fullRewritesProjects) projectWrites += st.projects;
      }
      st.syncedAt = now;
      st.busyUntil = now + duration;
      st.lastMs = duration;
      if (full) st.fullAt = now;
    }
  }
  const ages = states.map((st) => st.maxAge).sort((a, b) => a - b);
  const q = (f: number) => (ages.length === 0 ? 0 : ages[Math.min(ages.length - 1, Math.floor(f * ages.length))]!);
  const teamCallsPerMin = new Map(states.map((st) => [st.t.id, st.calls / minutes]));
  return {
    callsPerMin: (hooked + polled) / minutes, hookedCallsPerMin: hooked / minutes, polledCallsPerMin: polled / minutes,
    quietHookCallsPerMin: quietHook / minutes, syncsPerMin: syncs / minutes, refusalsPerMin: refusals / minutes,
    maxKeyCallsPerMin: maxOf(keyCalls.values()) / minutes, maxTeamCallsPerMin: maxOf(teamCallsPerMin.values()),
    syncWritesPerSec: writes / (minutes * 60), syncRowsPerSec: rowWrites / (minutes * 60), renderRowWritesPerSec: rows / (minutes * 60),
    bookkeepingWritesPerSec: bookkeeping / (minutes * 60), projectWritesPerSec: projectWrites / (minutes * 60),
    urlRefreshRowsPerSec: urlRows / (minutes * 60), urlRefreshStatementsPerSec: urlStatements / (minutes * 60), ageP50Ms: q(0.5), ageP99Ms: q(0.99),
    teamsOver60s: ages.filter((a) => a > 60_000).length, teamCallsPerMin,
  };
}

/**
 * What a minute's budget leaves whole syncs once the periodic full sync's calls are kept aside (as the code's
 * `wholeIntervalOf` in src/replica/sync/freshness.ts does, with its `fullCallsPerMin`).
 */
const wholeBudget = (callsPerMin: number, projects: number, s: Settings): number =>
  Math.max(1, callsPerMin - fullCallsPerMin({ INDEX_RECONCILE_MS: s.reconcileMs, TEMPLATES_RECONCILE_MS: s.templatesMs }, projects));

/**
 * The calls of one full sync `sinceMs` after the team's last: the team, its members, and the templates of the projects
 * due since (`templatesDue` in src/replica/sync/rotation.ts: each project once every TEMPLATES_RECONCILE_MS, on average).
 */
export const fullSyncCalls = (projects: number, sinceMs: number, s: Pick<Settings, 'templatesMs'>): number =>
  2 + Math.round(projects * Math.min(1, sinceMs / s.templatesMs));

/**
 * The rotation the code's cadence picks for a polled team (`cadenceFrom` in src/replica/sync/freshness.ts) from its
 * projects (ids made up: their phases hashed as the code hashes them), its active ones (the expected number) and its
 * renders not yet final; null when it syncs every project each time.
 */
function rotationOf(t: Team, active: number, moving: number, callsPerMin: number, s: Settings): TeamState['rotation'] {
  const projects = t.projectShares.length;
  const shape = { projects, active: Math.round(active), moving: Math.round(moving) };
  const config = {
    INDEX_MAX_STALENESS_MS: s.stalenessMs, INDEX_RECONCILE_MS: s.reconcileMs, INDEX_ACTIVE_MS: s.activeWindowS * 1000,
    WEBHOOK_RECONCILE_MS: s.webhookReconcileMs, TEMPLATES_RECONCILE_MS: s.templatesMs,
  };
  const hashes = t.projectShares.map((_, i) => phaseHash(`proj_${t.id}_${i}`));
  const c = cadenceFrom(config, shape, hashes, { trusted: false, webhookAt: null }, 0, callsPerMin);
  return c.cycleMs > 0 ? { intervalMs: c.intervalMs, cycleMs: c.cycleMs, active: shape.active, quiet: projects - shape.active } : null;
}

function expDraw(rng: Rng, rate: number): number {
  return (-Math.log(Math.max(rng.next(), 1e-12)) / rate) * 1000;
}

/**
 * The real calls of one sync: project list pages, head pages, re-polls, and a full sync's (`fullCalls`: templates, team,
 * members; `fullSyncCalls`).
 */
export function syncCost(st: Pick<TeamState, 'projects' | 'rate' | 'activeHeads' | 'repoll'> & { t: Pick<Team, 'projectShares'> },
  gapS: number, fullCalls: number, s: Settings): number {
  let extra = 0;
  for (const w of st.t.projectShares) {
    const arrived = st.rate * w * gapS;
    if (arrived <= s.headPage - 1) break; // shares are largest first
    extra += Math.ceil((arrived - (s.headPage - 1)) / s.pageMax);
  }
  const heads = Math.round(st.activeHeads) + extra;
  return Math.ceil(st.projects / s.pageMax) + heads + Math.round(st.repoll) + fullCalls;
}

/** Render rows a polled team's sync writes: renders created since, and each moving render's states it catches. */
function renderRowsFound(st: TeamState, gapS: number, D: number, costs: Costs): number {
  const caught = Math.min(costs.statusChangesPerRender.value, 1 + D / Math.max(gapS, 1e-9));
  return st.rate * gapS * caught;
}

/**
 * The renders a head check rewrites for their signed URLs alone: a render in a head page whose held URLs are in the
 * last fifth of their lifetime is written again with v1's fresh ones (src/replica/sync/sync.ts `differs`), so each head
 * render with outputs is rewritten every 0.8 × the URLs' lifetime while its project is checked; a statement a project.
 */
function urlRefreshes(st: TeamState, gapS: number, costs: Costs): { statements: number; rows: number } {
  const f = Math.min(1, gapS / (0.8 * costs.signedUrlLifetimeS.value));
  let rows = 0;
  let statements = 0;
  for (const n of st.headUrls) {
    rows += n * f;
    statements += 1 - Math.exp(-n * f);
  }
  return { statements, rows };
}

/**
 * Store statements one sync writes, and the rows they write: its lease taken with the start recorded, the budget rows
 * of the team and the key (reserved in one statement, and settled in one when the real calls differ), the lease given
 * back with the sync mark, the team announced to the other instances (a NOTIFY on PostgreSQL, no row; those holding the
 * team read its row again, not counted); a
 * statement per project with renders written (a row a render) and per head mark moved; a full sync rewrites the team
 * row and every project row (refreshProjects `every`).
 */
function syncWrites(st: TeamState, gapS: number, full: boolean, rows: number, settles: boolean, s: Settings): { statements: number; rows: number } {
  let n = s.bookkeeping + (settles ? s.settleStatements : 0);
  let r = s.bookkeepingRows + (settles ? 2 : 0) + rows; // a settle writes the team's and the key's budget rows
  for (const w of st.t.projectShares) {
    const p = 1 - Math.exp(-st.rate * w * gapS);
    if (p < 1e-6) break;
    n += p; // its head mark moves
    r += p;
    if (rows > 0) n += 1 - Math.exp(-rows * w);
  }
  const fullRows = full ? 1 + (s.fullRewritesProjects ? st.projects : 0) : 0;
  return { statements: n + fullRows, rows: r + fullRows };
}

// ---------------------------------------------------------------------------------------------------------------------
// Memory and instances

/** RSS a team costs in memory, MB. */
export const teamMb = (t: Team, costs: Costs): number => (t.renders * costs.rssBytesPerRender.value) / 2 ** 20;

/** What one instance may give its teams, MB: its memory less headroom, the idle process and the answer cache. */
export const instanceCapacityMb = (c: Costs): number =>
  c.instanceMemoryMb.value * (1 - c.memoryHeadroom.value) - c.idleRssMb.value - c.answerCacheMb.value;

export interface Placement {
  readonly instances: number;
  /** Team id → instance. */
  readonly of: ReadonlyMap<number, number>;
  readonly loadMb: readonly number[];
  /** Teams larger than one instance can hold (placed alone, over capacity). */
  readonly oversized: number;
}

/**
 * First-fit decreasing, the fewest instances if teams were placed on purpose: by memory, and when `busy` is given (a
 * team's share of a core its syncs take) by the event loop too (`busyCap` an instance), teams sorted by the larger share.
 */
export function packTeams(teams: readonly Team[], costs: Costs, busy?: ReadonlyMap<number, number>, busyCap = Infinity): Placement {
  const cap = instanceCapacityMb(costs);
  const loadMb: number[] = [];
  const loadBusy: number[] = [];
  const of = new Map<number, number>();
  let oversized = 0;
  const size = (t: Team) => Math.max(teamMb(t, costs) / cap, (busy?.get(t.id) ?? 0) / busyCap);
  for (const t of [...teams].sort((a, b) => size(b) - size(a) || a.id - b.id)) {
    const mb = teamMb(t, costs);
    const b = busy?.get(t.id) ?? 0;
    if (mb > cap) oversized++;
    let i = loadMb.findIndex((l, j) => l + mb <= cap && loadBusy[j]! + b <= busyCap);
    if (i < 0) {
      i = loadMb.push(0) - 1;
      loadBusy.push(0);
    }
    loadMb[i]! += mb;
    loadBusy[i]! += b;
    of.set(t.id, i);
  }
  return { instances: loadMb.length, of, loadMb, oversized };
}

/**
 * As leases fall today: a team goes to whichever instance takes its lease first (uniformly, seeded). The fewest
 * instances for which no instance's teams pass its capacity, from `from` up (at most `limit`).
 */
export function leasePlacement(teams: readonly Team[], costs: Costs, from: number, seed = 11, limit = 4096): Placement {
  const cap = instanceCapacityMb(costs);
  let last: Placement | undefined;
  for (let n = Math.max(1, from); n <= limit; n = Math.max(n + 1, Math.ceil(n * 1.02))) {
    const rng = new Rng(seed);
    const loadMb = new Array<number>(n).fill(0);
    const of = new Map<number, number>();
    for (const t of teams) {
      const i = Math.floor(rng.next() * n);
      loadMb[i]! += teamMb(t, costs);
      of.set(t.id, i);
    }
    const oversized = teams.filter((t) => teamMb(t, costs) > cap).length;
    last = { instances: n, of, loadMb, oversized };
    if (maxOf(loadMb) <= cap || oversized > 0) return last;
  }
  return last!;
}

// ---------------------------------------------------------------------------------------------------------------------
// Backfill, store

/** v1 calls of a team's backfill: its render pages per project, a template call per project, project pages, team, members. */
export function backfillCalls(t: Team, costs: Costs, s: Settings): number {
  let pages = 0;
  for (const w of t.projectShares) pages += Math.max(1, Math.ceil((t.renders * w) / costs.rendersPerBackfillPage.value));
  return pages + t.projectShares.length + Math.ceil(t.projectShares.length / s.pageMax) + 2;
}

/** Bytes in the store: a render row each, an id pair per render answered, render versions of webhook-fed renders, a day of deliveries. */
export function storeBytes(p: Population, load: Load, costs: Costs): { renders: number; total: number; parts: Record<string, number> } {
  const renders = p.teams.reduce((a, t) => a + t.renders, 0);
  const projects = p.teams.reduce((a, t) => a + t.projectShares.length, 0);
  const hookedRenders = p.teams.filter((t) => t.webhooks).reduce((a, t) => a + t.renders, 0);
  const share = hookedRenders / renders;
  const deliveries = load.createdPerSec * share * costs.webhookDeliveriesPerRender.value * costs.webhookRetentionH.value * 3600;
  const parts = {
    renderRows: renders * costs.storeBytesPerRenderRow.value,
    idPairs: renders * costs.storeBytesPerIdPair.value,
    renderVersions: hookedRenders * costs.storeBytesPerRenderVersion.value,
    webhookLedger: deliveries * costs.storeBytesPerWebhookDelivery.value,
    projects: projects * costs.storeBytesPerProjectRow.value,
  };
  return { renders, total: Object.values(parts).reduce((a, b) => a + b, 0), parts };
}

/**
 * Store writes a second of the webhook receiver: per delivery its ledger row and the render's version, then the replica's
 * apply — the render row and the team's webhook time, and a third row bench/scale-model-check.ts measures and the code
 * reading has not placed: 5 a delivery.
 */
export function webhookWritesPerSec(p: Population, load: Load, costs: Costs): { deliveriesPerSec: number; writesPerSec: number } {
  const total = p.teams.reduce((a, t) => a + t.renders, 0);
  const hooked = p.teams.filter((t) => t.webhooks).reduce((a, t) => a + t.renders, 0);
  const deliveriesPerSec = (load.createdPerSec * hooked * costs.webhookDeliveriesPerRender.value) / total;
  return { deliveriesPerSec, writesPerSec: deliveriesPerSec * 5 };
}
