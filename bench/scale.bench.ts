/**
 * npm run bench:scale — issue #28's measures at scale: a simulator world of 1 000 000 renders (10 teams × 100 projects ×
 * 1 000 renders, the `million` preset) backfilled by the gateway on SQLite, then on PostgreSQL, and one table per store
 * with every row of the issue's "Now" and "Targets" tables, the target beside the measure.
 *
 * Users (one gateway, three keys): the organisation's administrator (reaches all 10 teams: starts the backfill and keeps
 * every team being read, so the background sync runs), a "heavy" user whose key reaches one team (the questions,
 * the exports) and a "light" user of another team (small reads: the newest 10 renders of one project).
 *
 * Per store: backfill; the six questions (answer cache off, 16 connections, every request distinct: an always-true
 * `filter[date_created][_lte]` bound one second apart); 8 parallel exports against the light user's reads; the gateway
 * restarted on the same store with its answer cache on, for cache hits while syncs run; a sync window after the
 * simulator's clock moved (the renders in progress end); there, signed URLs last a day, so none is due. Then the export
 * with every URL due, on a world and a store of its own (see exportPass). Event-loop stalls are the gateway's own
 * `nodejs_eventloop_lag_max_seconds` (prom-client's monitorEventLoopDelay, 10 ms resolution, reset at every scrape),
 * scraped every 250 ms from /metrics.
 *
 * Flags (environment): BENCH_SCALE=million|bench|… (a simulator preset; `bench`: 100 000 renders, 10 000 a team);
 * BENCH_STORES=sqlite,pg; BENCH_PG_URL=postgres://… (a server to create the store's database on; else a throwaway one
 * as bench/directus.ts runs it); BENCH_DIRECTUS=1 (the questions against a real Directus 10 on PostgreSQL holding
 * the heavy user's team, and the ratio); BENCH_SECONDS (per question, 10); BENCH_URL_TTL_S (signed URL
 * lifetime in the export's world, 30); BENCH_SYNC_S (each sync window, 20); BENCH_FAIR_S (cap on the 8 exports, 120);
 * BENCH_INDEX_MEMORY_MB (4096); GW_FLAGS (node flags of the gateway); BENCH_PASSES=export (only the export with every URL due)
 * or questions (the backfill and the questions, Directus's too).
 */
import { rmSync } from 'node:fs';
import pg from 'pg';
import { loadLegacyData, startDirectus } from './directus.js';
import {
  backfilled, drain, drainExplained, get, login, load, log, metric, procKb, resetPeakRss, simStats, sleep, startGateway, startPostgres, startSim, stop,
  untilFromReplica, walkPages, type Gateway, type Sim,
} from './support.js';

const SCALE = process.env.BENCH_SCALE ?? 'million';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const TTL_S = Number(process.env.BENCH_URL_TTL_S ?? 30);
const SYNC_S = Number(process.env.BENCH_SYNC_S ?? 20);
const FAIR_S = Number(process.env.BENCH_FAIR_S ?? 120);
const STORES = (process.env.BENCH_STORES ?? 'sqlite,pg').split(',').map((s) => s.trim()).filter(Boolean);
/** `export`: only the export with every URL due (its row alone); `questions`: the backfill and the questions (and Directus's); the default runs every pass. */
const EXPORT_ONLY = process.env.BENCH_PASSES === 'export';
const QUESTIONS_ONLY = process.env.BENCH_PASSES === 'questions';
const started = new Date();

/** An always-true bound, different for every request n (no two requests alike, nothing answered twice). */
const FUTURE = Date.UTC(2100, 0, 1);
const bound = (n: number) => `filter[date_created][_lte]=${new Date(FUTURE + n * 1000).toISOString()}`;
const QUESTIONS = [
  { name: 'count grouped by status', short: 'count', q: 'aggregate[count]=*&groupBy[]=status', now: '150–290 ms (2–4.5 req/s)', target: 5 },
  { name: 'filtered list newest 20 (`filter[status][_eq]=complete&sort=-date_created&limit=20`)', short: 'list', q: 'filter[status][_eq]=complete&sort=-date_created&limit=20', now: '—', target: 6 },
  { name: '`sort=title&page=50&limit=20`', short: 'title', q: 'sort=title&page=50&limit=20', now: '359–667 ms', target: 10 },
  { name: 'filter + `meta=filter_count` (`filter[status][_eq]=complete&meta=filter_count`)', short: 'filter_count', q: 'filter[status][_eq]=complete&meta=filter_count', now: '121 ms', target: 10 },
  // (issue 44: what an integration's search box asks, counted)
  { name: 'title substring + count (`filter[title][_contains]=render 7&meta=filter_count&limit=20`)', short: 'title substring', q: 'filter[title][_contains]=render%207&meta=filter_count&limit=20',
    now: '1 074 ms (#44, 1M world)', target: 5 },
  { name: 'search + count (`search=holiday&meta=filter_count&limit=20`)', short: 'search', q: 'search=holiday&meta=filter_count&limit=20', now: '1 242 ms (#44, 1M world)', target: 5 },
] as const;
type Load = Awaited<ReturnType<typeof load>>;

/** The worst event-loop stall of the gateway over a window: its own monitorEventLoopDelay, read from /metrics. */
class StallWatch {
  private worst = 0;
  private timer: NodeJS.Timeout | undefined;
  constructor(private readonly g: Gateway) {}
  async start(): Promise<void> {
    await metric(this.g, 'nodejs_eventloop_lag_max_seconds'); // what came before the window
    this.worst = 0;
    const scrape = () => metric(this.g, 'nodejs_eventloop_lag_max_seconds').then((s) => { if (s * 1000 > this.worst) this.worst = s * 1000; }, () => undefined);
    this.timer = setInterval(() => void scrape(), 250);
  }
  async stop(): Promise<number> {
    clearInterval(this.timer);
    const last = await metric(this.g, 'nodejs_eventloop_lag_max_seconds');
    return Math.max(this.worst, last * 1000);
  }
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.min(s.length - 1, Math.floor(q * s.length))] as number) : NaN;
};
const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
const callsOf = (before: Record<string, number>, after: Record<string, number>) => {
  const d = (k: string) => (after[k] ?? 0) - (before[k] ?? 0);
  const total = Object.keys(after).reduce((n, k) => n + d(k), 0);
  return { total, byId: d('GET /v1/renders/:id'), pages: d('GET /v1/renders'), other: total - d('GET /v1/renders/:id') - d('GET /v1/renders') };
};

/** Sequential reads until `until()`, their latencies (ms) and how many the answer cache answered. */
async function reads(g: { base: string; token: string }, path: (n: number) => string, until: () => boolean): Promise<{
  lat: number[]; hits: number; errors: number; slowest: { ms: number; source: string } | undefined;
}> {
  const lat: number[] = [];
  let hits = 0;
  let errors = 0;
  let slowest: { ms: number; source: string } | undefined;
  for (let n = 0; !until(); n++) {
    const t = performance.now();
    const r = await get(g, path(n));
    await r.arrayBuffer();
    const ms = performance.now() - t;
    lat.push(ms);
    // where the slowest read was answered from (the replica, partly while teams load, or live)
    const source = `${r.headers.get('x-gateway-source') ?? '?'}${r.headers.get('x-gateway-partial') ? ' (partial)' : ''}`;
    if (n > 0 && (!slowest || ms > slowest.ms)) slowest = { ms, source };
    if (r.headers.get('x-gateway-answer-cache') === 'hit') hits++;
    if (!r.ok) errors++;
  }
  return { lat, hits, errors, slowest };
}

/** Directus's figures for the questions, measured once (same seed, same team on every store). */
let directus: { q: Load[] } | { skipped: string } = { skipped: 'not run (BENCH_DIRECTUS=1 runs it)' };

/** The questions' part of a pass (all there is with BENCH_PASSES=questions). */
interface Asked {
  store: string;
  teamRenders: number;
  world: number;
  backfill: { ms: number; calls: number; stall: number };
  questions: (Load & { calls: number })[];
}
interface Measured extends Asked {
  store: string;
  teamRenders: number;
  world: number;
  backfill: { ms: number; calls: number; stall: number };
  questions: (Load & { calls: number })[];
  sync: { stall: number; callsPerMin: number };
  fair: { alone: number[]; during: number[]; finished: number; statuses: number[]; ms: number; stall: number; errors: number };
  hits: { lat: number[]; hits: number; stall: number; loadMs: number; slowest: { ms: number; source: string } | undefined };
}
interface Exported {
  ms: number; bytes: number; status: number; ownCalls: number; byEndpoint: Record<string, number>; rssKb: number; peakKb: number; calls: ReturnType<typeof callsOf>; walk: { render: number; project: number }; stall: number; waitedS: number;
}

/** The simulator's people: the organisation's administrator, and two keys reaching one team each (two teams). */
function cast(sim: Sim) {
  const org = sim.people.find((p) => p.email === 'org-admin@sim.example')!;
  const single = sim.people.filter((p) => p !== org && p.teams.length === 1);
  const heavy = single[0]!;
  const light = single.find((p) => p.teams[0]!.id !== heavy.teams[0]!.id) ?? single[1]!;
  return { org, heavy, light };
}
const gatewayEnv = (databaseUrl: string | undefined): Record<string, string> =>
  ({ INDEX_MEMORY_MB: process.env.BENCH_INDEX_MEMORY_MB ?? '4096', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) });
const advanceClock = (sim: Sim, ms: number) =>
  fetch(`${sim.url}/_sim/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: ms }) });

/** Directus, once: the heavy user's team as the gateway `g` answers it, asked the same questions. */
async function measureDirectus(g: Gateway): Promise<void> {
  if (process.env.BENCH_DIRECTUS !== '1' || !('skipped' in directus)) return;
  try {
    log('starting Directus…');
    const dx = await startDirectus(log);
    try {
      log(`Directus loaded: ${JSON.stringify(await loadLegacyData(dx, { base: g.base, token: await login(g.base, 'heavy@example.com') }))}`);
      const q: Load[] = [];
      for (const [i, x] of QUESTIONS.entries()) q.push(await load(`${dx.base}/items/renders`, dx.token, SECONDS, (n) => `/items/renders?${x.q}&${bound(i * 10_000_000 + n)}`));
      directus = { q };
    } finally {
      await dx.stop();
    }
  } catch (e) {
    directus = { skipped: `Directus failed: ${(e as Error).message}` };
  }
}

/** Everything but the export with every URL due: the simulator's URLs last a day here, so none is ever due. */
async function mainPass(store: string, databaseUrl: string | undefined): Promise<Measured | Asked> {
  log(`${store}: starting the simulator (${SCALE})…`);
  const sim: Sim = await startSim(SCALE, ['--url-ttl', '86400'], ['--max-old-space-size=8192']);
  const gateways: Gateway[] = [];
  try {
    const { org, heavy, light } = cast(sim);
    const extra = gatewayEnv(databaseUrl);
    const gw = await startGateway(sim, org.api_key, { ...extra, ANSWER_CACHE_MB: '0' }, undefined,
      [{ email: 'heavy@example.com', key: heavy.api_key }, { email: 'light@example.com', key: light.api_key }]);
    gateways.push(gw);
    const H = { base: gw.base, token: await login(gw.base, 'heavy@example.com') };
    const L = { base: gw.base, token: await login(gw.base, 'light@example.com') };

    // ---- backfill
    const watch = new StallWatch(gw);
    await watch.start();
    const backfillMs = await backfilled(gw, org.teams.length);
    const backfill = { ms: backfillMs, calls: (await simStats(sim)).total, stall: await watch.stop() };
    const total = async (g: { base: string; token: string }) =>
      ((await (await get(g, '/renders?limit=0&meta=total_count')).json()) as { meta: { total_count: number } }).meta.total_count;
    const world = await total(gw);
    const teamRenders = await total(H);
    log(`${store}: ${world} renders backfilled in ${(backfillMs / 1000).toFixed(1)} s (${backfill.calls} v1 calls); the heavy user's team holds ${teamRenders}`);

    // ---- the questions, answer cache off, distinct
    const questions: Measured['questions'] = [];
    for (const [i, q] of QUESTIONS.entries()) {
      const check = await get(H, `/renders?${q.q}&${bound(-1 - i)}`);
      if (!check.ok) throw new Error(`${q.q}: ${check.status} ${(await check.text()).slice(0, 300)}`);
      await check.arrayBuffer();
      const before = (await simStats(sim)).total;
      const r = await load(`${gw.base}/renders`, H.token, SECONDS, (n) => `/renders?${q.q}&${bound(i * 10_000_000 + n)}`);
      questions.push({ ...r, calls: (await simStats(sim)).total - before });
      log(`${store}: ${q.name}: p50 ${r.p50} ms, ${r.rps.toFixed(0)} req/s`);
    }
    if (QUESTIONS_ONLY) {
      await measureDirectus(gw);
      return { store, teamRenders, world, backfill, questions };
    }

    // the administrator's by-id read every 2 s keeps all teams being read: the background syncs them all
    const someId = ((await (await get(H, '/renders?limit=1&fields=id')).json()) as { data: { id: string }[] }).data[0]!.id;
    const keepRead = (g: { base: string; token: string }, until: () => boolean) => (async () => {
      while (!until()) { await (await get(g, `/renders/${someId}`)).arrayBuffer().catch(() => undefined); await sleep(2_000); }
    })();

    // ---- fairness: the light user's small reads alone, then while the heavy user runs 8 exports at once
    const project = ((await (await get(L, '/projects?limit=1&fields=id')).json()) as { data: { id: string }[] }).data[0]!.id;
    const small = (n: number) => `/renders?filter[project][_eq]=${project}&sort=-date_created&limit=10&${bound(n)}`;
    const aloneEnd = Date.now() + 5_000;
    const alone = (await reads(L, small, () => Date.now() >= aloneEnd)).lat;
    const abort = new AbortController();
    const cap = setTimeout(() => abort.abort(), FAIR_S * 1000);
    await watch.start();
    const f0 = performance.now();
    let running = 8;
    const exports = Array.from({ length: 8 }, () => drain(H, '/renders?limit=-1', abort.signal)
      .catch(() => ({ bytes: 0, status: 0 })).finally(() => { running--; }));
    const during = await reads(L, (n) => small(1_000_000 + n), () => running === 0);
    const done = await Promise.all(exports);
    clearTimeout(cap);
    const fair = { alone, during: during.lat, errors: during.errors, finished: done.filter((d) => d.status === 200).length, statuses: done.map((d) => d.status),
      ms: performance.now() - f0, stall: await watch.stop() };
    log(`${store}: 8 exports: ${fair.finished} complete in ${(fair.ms / 1000).toFixed(1)} s`);
    await stop(gw.proc);

    // ---- answer-cache hits while syncs run: the same store, the gateway restarted with its answer cache on
    const gc = await startGateway(sim, org.api_key, extra, gw.dir);
    gateways.push(gc);
    const L2 = { base: gc.base, token: await login(gc.base, 'light@example.com') };
    const loadMs = await untilFromReplica(gc, `/renders/${someId}`); // the administrator's read: every team loaded back
    const watch2 = new StallWatch(gc);
    await watch2.start();
    const hitEnd = Date.now() + SYNC_S * 1000;
    const [h] = await Promise.all([reads(L2, () => small(-1), () => Date.now() >= hitEnd), keepRead(gc, () => Date.now() >= hitEnd)]);
    const hits = { lat: h.lat.slice(1), hits: h.hits, stall: await watch2.stop(), loadMs, slowest: h.slowest };

    // ---- a sync window that finds changes: the simulator's clock moves a minute, the renders in progress end
    await advanceClock(sim, 60_000);
    const c0 = (await simStats(sim)).total;
    await watch2.start();
    const syncEnd = Date.now() + SYNC_S * 1000;
    await keepRead(gc, () => Date.now() >= syncEnd);
    const sync = { stall: Math.max(await watch2.stop(), hits.stall), callsPerMin: (((await simStats(sim)).total - c0) * 60) / SYNC_S };

    await measureDirectus(gc);
    return { store, teamRenders, world, backfill, questions, sync, fair, hits };
  } finally {
    for (const g of gateways) { await stop(g.proc); rmSync(g.dir, { recursive: true, force: true }); }
    await stop(sim.proc);
  }
}

/**
 * `limit=-1` over the heavy user's team with every URL due, on a world of its own: the simulator's clock stands still at
 * its start and its URLs last BENCH_URL_TTL_S, so once the heavy user's team is backfilled the harness waits until every
 * URL is in its last 5 s (due however it was seen, none expired), then moves the clock to the wall clock (URLs fetched
 * again are fresh) and streams the team.
 */
async function exportPass(store: string, databaseUrl: string | undefined): Promise<Exported> {
  log(`${store}: the export with every URL due, on a world of its own (signed URLs last ${TTL_S} s)…`);
  const sim: Sim = await startSim(SCALE, ['--url-ttl', String(TTL_S)], ['--max-old-space-size=8192']);
  let gw: Gateway | undefined;
  try {
    const origin = ((await (await fetch(`${sim.url}/_sim/world`)).json()) as { origin: number }).origin;
    const { heavy } = cast(sim);
    // one walk of the heavy user's team: every render page of every project
    // (and of its project list: the projects' signed thumbnails are answered too, as posters of renders without a still)
    const projectPages = await walkPages(sim, heavy.api_key, `/v1/projects?team_id=${heavy.teams[0]!.id}`);
    let renderPages = 0;
    for (const p of projectPages.items) renderPages += (await walkPages(sim, heavy.api_key, `/v1/renders?project_id=${p.id}`)).n;
    const walk = { render: renderPages, project: projectPages.n };
    gw = await startGateway(sim, heavy.api_key, { ...gatewayEnv(databaseUrl), ANSWER_CACHE_MB: '0' });
    await backfilled(gw, 1);
    const dueAt = origin + TTL_S * 1000 - 4_000;
    const waitedS = Math.max(0, (dueAt - Date.now()) / 1000);
    if (waitedS > 0) log(`${store}: waiting ${waitedS.toFixed(0)} s until every signed URL is due…`);
    await sleep(dueAt - Date.now());
    await advanceClock(sim, Date.now() - origin);
    const pid = gw.proc.pid as number;
    const s0 = (await simStats(sim)).requests;
    const rssKb = procKb(pid, 'VmRSS');
    const hasPeak = resetPeakRss(pid);
    const watch = new StallWatch(gw);
    await watch.start();
    const t0 = performance.now();
    // asked with explain: the export's own v1 calls are read from it (the simulator's count includes the background syncs')
    const exp = await drainExplained(gw, '/renders?limit=-1');
    const ms = performance.now() - t0;
    const stall = await watch.stop();
    const e = { ms, ...exp, rssKb, peakKb: hasPeak ? procKb(pid, 'VmHWM') : NaN, calls: callsOf(s0, (await simStats(sim)).requests), walk, stall, waitedS };
    log(`${store}: limit=-1 in ${(ms / 1000).toFixed(1)} s, ${e.calls.total} v1 calls`);
    return e;
  } finally {
    if (gw) { await stop(gw.proc); rmSync(gw.dir, { recursive: true, force: true }); }
    await stop(sim.proc);
  }
}

/** The export's row alone (BENCH_PASSES=export). */
function exportRow(store: string, e: Exported): string[] {
  return [`### ${store}: the export with every URL due alone, ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC`, '',
    `${(e.ms / 1000).toFixed(1)} s, peak RSS ${(e.peakKb / 1024).toFixed(0)} MB (${(e.rssKb / 1024).toFixed(0)} MB before), ${e.ownCalls} v1 calls by the export ` +
    `(${Object.entries(e.byEndpoint).map(([k, n]) => `${n} ${k}`).join(', ')}) ` +
    `(one walk: ${e.walk.render} render pages and ${e.walk.project} project list pages; the simulator counted ${e.calls.total}: ${e.calls.byId} by id, ${e.calls.pages} render list pages, ${e.calls.other} other), ` +
    `status ${e.status}, ${(e.bytes / 1048576).toFixed(0)} MB, stall ${ms(e.stall)} ms`, ''];
}

const met = (ok: boolean) => (ok ? '✓' : '✗');

/** The questions' rows, and the Directus ratio's. */
function questionRows(m: Asked): string[] {
  const team = `${m.teamRenders.toLocaleString('en')}-render team`;
  const rows = QUESTIONS.map((q, i) => {
    const r = m.questions[i]!;
    return `| ${q.name}, ${i === 0 ? `${team}, ` : ''}p50 | ${q.now} | ≤ ${q.target} ms | **${r.p50} ms** (p99 ${r.p99} ms, ${r.rps.toFixed(0)} req/s, ${r.requests} requests` +
      `${r.errors ? `, ${r.errors} errors` : ''}; v1 calls meanwhile, the background syncs' included: ${r.calls}) | ${met(r.p50 <= q.target && r.errors === 0)} |`;
  });
  const dx = 'skipped' in directus ? directus.skipped : QUESTIONS.map((_, i) => {
    const d = (directus as { q: Load[] }).q[i]!;
    const g = m.questions[i]!;
    return `${QUESTIONS[i]!.short}: **${(g.rps / d.rps).toFixed(1)}×** req/s (Directus p50 ${d.p50} ms, ${d.rps.toFixed(0)} req/s${d.errors ? `, ${d.errors} errors` : ''})`;
  }).join('; ');
  const dxMet = 'skipped' in directus ? '' : met(QUESTIONS.every((_, i) => m.questions[i]!.rps / (directus as { q: Load[] }).q[i]!.rps >= 40));
  return [...rows, `| the same questions vs a real Directus 10 on PostgreSQL holding the same team, ratio | — | ≥ 40× | ${dx} | ${dxMet} |`];
}

function table(m: Measured, e: Exported): string[] {
  const team = `${m.teamRenders.toLocaleString('en')}-render team`;
  const peakMb = e.peakKb / 1024;
  const f = m.fair;
  const fairDuring = `p50 ${ms(quantile(f.during, 0.5))} ms, p95 ${ms(quantile(f.during, 0.95))} ms, p99 ${ms(quantile(f.during, 0.99))} ms`;
  const hitLat = m.hits.lat;
  return [
    `### ${m.store}: ${m.world.toLocaleString('en')} renders (simulator \`${SCALE}\`), ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC`, '',
    '| measure | #28 now | target | measured | met |', '|---|---|---|---|---|',
    ...questionRows(m),
    `| answer-cache hits while a sync runs (answer cache on, gateway restarted on the same store; ${hitLat.length} sequential reads, ${m.hits.hits} hits, ` +
      `${SYNC_S} s, every team kept read) | occasional 1.1–1.6 s stalls | no stall > 50 ms | p50 ${ms(quantile(hitLat, 0.5))} ms, p99 ${ms(quantile(hitLat, 0.99))} ms, ` +
      `**max ${ms(Math.max(...hitLat))} ms**${m.hits.slowest ? ` (answered ${m.hits.slowest.source})` : ''} (every team loaded back from the store in ` +
      `${(m.hits.loadMs / 1000).toFixed(1)} s) | ${met(Math.max(...hitLat) <= 50)} |`,
    `| \`limit=-1\`, ${team}, every URL due (a world of its own, the gateway holding that team alone) | 52–292 s, peak RSS 0.9–1.0 GB, up to ~130 000 v1 calls | ` +
      `≤ 20 s, peak RSS ≤ 300 MB, v1 calls ≤ one walk (${e.walk.render} render pages here, and ${e.walk.project} project list pages) | **${(e.ms / 1000).toFixed(1)} s**, peak RSS ` +
      `**${Number.isNaN(peakMb) ? 'n/a' : `${peakMb.toFixed(0)} MB`}** (${(e.rssKb / 1024).toFixed(0)} MB before), **${e.ownCalls} v1 calls** by the export (${Object.entries(e.byEndpoint).map(([k, n]) => `${n} ${k}`).join(', ')}) ` +
      `(its explain; the simulator counted ${e.calls.total} meanwhile, the background sync's included: ${e.calls.byId} by id, ${e.calls.pages} render list pages, ` +
      `${e.calls.other} other); status ${e.status}, ${(e.bytes / 1048576).toFixed(0)} MB ` +
      `| ${met(e.status === 200 && e.ms <= 20_000 && peakMb <= 300 && e.ownCalls <= e.walk.render + e.walk.project)} |`,
    `| worst event-loop stall during export and sync | (the stalls above) | ≤ 50 ms | export **${ms(e.stall)} ms**, sync **${ms(m.sync.stall)} ms** ` +
      `(backfill ${ms(m.backfill.stall)} ms; sync ${m.sync.callsPerMin.toFixed(0)} v1 calls/min) | ${met(Math.max(e.stall, m.sync.stall) <= 50)} |`,
    `| a light user's reads (newest 10 of one project, sequential) while another user runs 8 exports of a ${team} | p50 2 → 21 ms, p95 117–270 ms (demo) | ` +
      `p50 ≤ 5 ms, p99 ≤ 50 ms | alone p50 ${ms(quantile(f.alone, 0.5))} ms, p99 ${ms(quantile(f.alone, 0.99))} ms → during **${fairDuring}** (${f.during.length} reads` +
      `${f.errors ? `, ${f.errors} errors` : ''}); exports: ${f.finished}/8 complete in ${(f.ms / 1000).toFixed(1)} s${f.finished < 8 ? ` (cap ${FAIR_S} s; statuses ${f.statuses.join(' ')})` : ''}; ` +
      `stall ${ms(f.stall)} ms | ${met(quantile(f.during, 0.5) <= 5 && quantile(f.during, 0.99) <= 50)} |`,
    `| backfill (#29) | 101 s on PostgreSQL, 209 s on SQLite; 22 053 v1 calls (1M) | the minimum calls | ${(m.backfill.ms / 1000).toFixed(1)} s, ${m.backfill.calls} v1 calls | |`,
    '',
    ...(e.waitedS > 0 ? [`The export's world waited ${e.waitedS.toFixed(0)} s after its backfill for every signed URL to be due.`, ''] : []),
  ];
}

/** The questions' table alone (BENCH_PASSES=questions). */
function asked(m: Asked): string[] {
  return [`### ${m.store}: ${m.world.toLocaleString('en')} renders (simulator \`${SCALE}\`), the questions, ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC`, '',
    '| measure | #28 now | target | measured | met |', '|---|---|---|---|---|', ...questionRows(m),
    `| backfill (#29) | | | ${(m.backfill.ms / 1000).toFixed(1)} s, ${m.backfill.calls} v1 calls | |`, ''];
}

// ------------------------------------------------------------------------------------------------ main
const out: string[] = [`## bench:scale — ${started.toISOString().slice(0, 10)}, simulator scale \`${SCALE}\`, Node ${process.version}`, ''];
for (const store of STORES) {
  if (store === 'sqlite') {
    if (EXPORT_ONLY) {
      out.push(...exportRow('SQLite', await exportPass('SQLite', undefined)));
      continue;
    }
    const m = await mainPass('SQLite', undefined);
    out.push(...('fair' in m ? table(m, await exportPass('SQLite', undefined)) : asked(m)));
    continue;
  }
  if (store !== 'pg') throw new Error(`BENCH_STORES: sqlite or pg, not ${store}`);
  let server: ReturnType<typeof startPostgres> | undefined;
  let admin: string;
  try {
    if (process.env.BENCH_PG_URL) admin = process.env.BENCH_PG_URL;
    else { server = startPostgres(); admin = server.url('postgres'); }
    const c = new pg.Client({ connectionString: admin });
    await c.connect();
    await c.end();
  } catch (e) {
    out.push('### PostgreSQL', '', `Skipped: no PostgreSQL reachable (${(e as Error).message.split('\n')[0]}). Set BENCH_PG_URL, or install the server binaries.`, '');
    server?.stop();
    continue;
  }
  const sql = async (q: string) => { const c = new pg.Client({ connectionString: admin }); await c.connect(); try { await c.query(q); } finally { await c.end(); } };
  /** A database of its own for one pass, dropped after it. */
  const inDatabase = async <T>(suffix: string, pass: (url: string) => Promise<T>): Promise<T> => {
    const name = `bench_scale_${process.pid}_${suffix}`;
    const url = new URL(admin);
    url.pathname = `/${name}`;
    await sql(`create database ${name}`);
    try { return await pass(url.toString()); } finally { await sql(`drop database if exists ${name} with (force)`).catch(() => undefined); }
  };
  try {
    if (EXPORT_ONLY) out.push(...exportRow('PostgreSQL', await inDatabase('export', (url) => exportPass('PostgreSQL', url))));
    else {
      const m = await inDatabase('main', (url) => mainPass('PostgreSQL', url));
      out.push(...('fair' in m ? table(m, await inDatabase('export', (url) => exportPass('PostgreSQL', url))) : asked(m)));
    }
  } finally {
    server?.stop();
  }
}
out.push(`Gateway and simulator in separate processes (compiled JavaScript; the gateway with the production node flags); ` +
  `autocannon, 16 connections, ${SECONDS} s per question; the answer cache off except in the cache-hit row.`);
process.stdout.write(`${out.join('\n')}\n`);
process.exit(0);
