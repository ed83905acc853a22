/**
 * npm run bench:index — the render index.
 *
 * Part 1, against a real Directus 10.10 on PostgreSQL 15 holding the same data (the demo user's, read from the
 * gateway): the same legacy queries, 16 connections, one after the other in one run; throughput and the ratio.
 * Part 2, 100 000 renders (the simulator's bench scale, one key reaching all 10 teams): backfill calls beside the
 * minimum v1 allows, warm p50 of count-grouped-by-status, the index's memory per render, peak RSS of a streamed
 * `limit=-1`, and the sync's v1 calls per minute for teams being read.
 *
 * Each part runs the simulator and the gateway as separate processes (compiled JavaScript, production settings, the
 * default log level, output discarded). BENCH_SKIP_DIRECTUS=1 skips part 1; BENCH_PART2=0 skips part 2;
 * BENCH_GATEWAY_ONLY=1 runs part 1's queries against the gateway alone (no Directus: a quick loop while tuning);
 * GW_FLAGS="…" passes node flags to the gateway processes; BENCH_ONLY=<name prefix> runs one of part 1's queries.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { loadLegacyData, startDirectus } from './directus.js';
import {
  backfilled, drain, get, heapUsed, indexState, load, log, procKb, resetPeakRss, resetSimStats, simStats, startGateway, startSim, stop, untilFromReplica,
  walkPages, type Gateway,
} from './support.js';

const out: string[] = [];

// ------------------------------------------------------------------------------------------------ part 1
if (process.env.BENCH_SKIP_DIRECTUS !== '1') {
  const sim = await startSim('demo');
  const person = sim.people[0]!;
  const gw = await startGateway(sim, person.api_key);
  const ms = await backfilled(gw, person.teams.length);
  const total = ((await (await get(gw, '/renders?limit=1&meta=total_count')).json()) as { meta: { total_count: number } }).meta.total_count;
  log(`part 1: ${total} renders backfilled in ${ms.toFixed(0)} ms; starting Directus…`);
  const alone = process.env.BENCH_GATEWAY_ONLY === '1';
  let gwOff: Gateway | undefined;
  const dx = alone ? { base: '', token: '', stop: async () => undefined } : await startDirectus(log);
  try {
    if (!alone) log(`Directus loaded: ${JSON.stringify(await loadLegacyData(dx as Awaited<ReturnType<typeof startDirectus>>, gw))}`);
    // the same gateway without its answer cache (ANSWER_CACHE_MB=0), on a store of its own (one gateway serves an SQLite
    // file: on the first one's, it was refused at start-up): every request parses, plans, reads the replica and serialises
    gwOff = await startGateway(sim, person.api_key, { ANSWER_CACHE_MB: '0' });
    await backfilled(gwOff, person.teams.length);
    const queries = [
      ['filtered list', 'filter[status][_eq]=complete&sort=-date_created&limit=20'],
      ['count grouped by status', 'aggregate[count]=*&groupBy=status'],
      ['sort by title, page 3', 'sort=title&limit=20&page=3'],
      ['total_count, relational fields', 'meta=total_count&limit=20&fields=id,title,project.title,project.account.name'],
    ];
    out.push(`### Part 1: the same legacy query against a real Directus 10.10 on PostgreSQL 15, same ${total} renders`, '',
      '| query | gateway req/s | p50 | v1 calls | answer cache off: req/s | p50 | Directus req/s | p50 | ratio | ratio, cache off |',
      '|---|---|---|---|---|---|---|---|---|---|');
    for (const [name, q] of queries) {
      if (process.env.BENCH_ONLY && !name?.startsWith(process.env.BENCH_ONLY)) continue;
      const check = await get(gw, `/renders?${q}`);
      await check.text();
      const calls = check.headers.get('x-gateway-v1-calls');
      const a = await load(`${gw.base}/renders?${q}`, gw.token, 10);
      const off = gwOff!;
      const c = await load(`${off.base}/renders?${q}`, off.token, 10);
      const b = alone ? { rps: Number.NaN, p50: Number.NaN, errors: 0 } : await load(`${dx.base}/items/renders?${q}`, dx.token, 10);
      out.push(`| ${name} | ${a.rps.toFixed(0)} | ${a.p50} ms | ${calls} | ${c.rps.toFixed(0)} | ${c.p50} ms | ${b.rps.toFixed(0)} | ${b.p50} ms | ` +
        `${(a.rps / b.rps).toFixed(1)}× | ${(c.rps / b.rps).toFixed(1)}× |`);
      if (a.errors || b.errors || c.errors) out.push(`|   (errors: gateway ${a.errors}, cache off ${c.errors}, Directus ${b.errors}) | | | | | | | | | |`);
    }
    out.push('');
  } finally {
    await dx.stop();
    if (gwOff) await stop(gwOff.proc);
    await stop(gw.proc);
    rmSync(gw.dir, { recursive: true, force: true });
    if (gwOff) rmSync(gwOff.dir, { recursive: true, force: true });
    await stop(sim.proc);
  }
}

// ------------------------------------------------------------------------------------------------ part 2
if (process.env.BENCH_PART2 !== '0') {
  const sim = await startSim('bench');
  const org = sim.people.find((p) => p.email === 'org-admin@sim.example') ?? sim.people[0]!;
  // the minimum calls a full read of v1 takes (teams list, then every project page and render page of every team)
  let minimum = 1;
  const walk = (path: string) => walkPages(sim, org.api_key, path);
  let projects = 0;
  for (const t of org.teams) {
    const p = await walk(`/v1/projects?team_id=${t.id}`);
    minimum += p.n + 1; // + the members list (account owners)
    projects += p.items.length;
    for (const proj of p.items) minimum += (await walk(`/v1/renders?project_id=${proj.id}`)).n + 1; // + its templates
  }
  await resetSimStats(sim);
  const gw = await startGateway(sim, org.api_key, { INDEX_MEMORY_MB: '2048' });
  const pid = gw.proc.pid as number;
  const heap0 = await heapUsed(gw);
  const rss0 = procKb(pid, 'VmRSS');
  const statsBefore = (await simStats(sim)).total;
  const ms = await backfilled(gw, org.teams.length);
  const backfillCalls = (await simStats(sim)).total - statsBefore;
  const state = await indexState(gw);
  const renders = state.reduce((n, s) => n + s.renders, 0);
  // warm p50 of count grouped by status, one connection, sequential
  const lat: number[] = [];
  let callsSeen = 0;
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    const r = await get(gw, '/renders?aggregate[count]=*&groupBy=status');
    await r.text();
    if (i >= 20) lat.push(performance.now() - t);
    callsSeen += Number(r.headers.get('x-gateway-v1-calls'));
  }
  lat.sort((a, b) => a - b);
  const p50 = lat[Math.floor(lat.length / 2)] as number;
  // memory held by the index (the records built for the reads above included)
  for (let i = 0; i < 3; i++) await (await get(gw, '/renders?sort=title&limit=20')).text();
  const heap1 = await heapUsed(gw);
  const rss1 = procKb(pid, 'VmRSS');
  // a streamed limit=-1 from the index
  const hasClearRefs = resetPeakRss(pid);
  const t0 = performance.now();
  const { bytes } = await drain(gw, '/renders?limit=-1');
  const streamMs = performance.now() - t0;
  const peak = hasClearRefs ? procKb(pid, 'VmHWM') : NaN;
  // the background sync while the teams are read continuously, without webhooks (30 s)
  const until = Date.now() + 30_000;
  while (Date.now() < until) await (await get(gw, '/renders?limit=20')).text();
  const syncs = (await indexState(gw)).map((s) => s.sync_calls_last_minute);
  const perTeam = syncs.reduce((a, b) => a + b, 0) / syncs.length;
  await stop(gw.proc);
  // the same limit=-1 on a fresh gateway process whose index is read back from the store (as after any restart), with
  // no backfill's garbage in its heap: the way bench:upstream measures every query
  const again = await startGateway(sim, org.api_key, { INDEX_MEMORY_MB: '2048' }, gw.dir);
  const againPid = again.proc.pid as number;
  await untilFromReplica(again, '/renders?limit=1');
  const rssLoaded = procKb(againPid, 'VmRSS');
  if (hasClearRefs) resetPeakRss(againPid);
  const t1 = performance.now();
  const { bytes: bytes2 } = await drain(again, '/renders?limit=-1');
  const stream2Ms = performance.now() - t1;
  const peak2 = hasClearRefs ? procKb(againPid, 'VmHWM') : NaN;
  await stop(again.proc);
  const measured = spawnSync(process.execPath, ['--expose-gc', 'dist/bench/index-memory.js'], { env: { ...again.env, INDEX_MEMORY_MB: '100000' }, encoding: 'utf8' });
  if (measured.status !== 0) throw new Error(`index-memory: ${measured.stderr}`);
  const mem = JSON.parse(measured.stdout) as { teams: number; renders: number; bytes: number };
  rmSync(gw.dir, { recursive: true, force: true });
  out.push(`### Part 2: ${renders} renders (${org.teams.length} teams, ${projects} projects), one key reaching all of them`, '',
    '| measure | value |', '|---|---|',
    `| backfill: v1 calls (and the first sync when the backfill outlasts the bound) | ${backfillCalls} (the minimum for a full read with templates and members: ${minimum}) |`,
    `| backfill: time | ${(ms / 1000).toFixed(1)} s |`,
    `| count grouped by status, warm p50 (sequential) | ${p50.toFixed(1)} ms; v1 calls on the request path in 200 requests: ${callsSeen} |`,
    `| V8 heap used after − before backfill and reads (garbage included) | ${((heap1 - heap0) / 1048576).toFixed(0)} MB |`,
    `| the index's own memory (its ${renders} renders loaded from the store and their records built, between two full GCs) | ${(mem.bytes / 1048576).toFixed(0)} MB = ${(mem.bytes / mem.renders).toFixed(0)} bytes per render |`,
    `| RSS after start / after backfill and reads | ${(rss0 / 1024).toFixed(0)} MB / ${(rss1 / 1024).toFixed(0)} MB |`,
    `| limit=-1 streamed from the index, right after the backfill in the same process | ${(bytes / 1048576).toFixed(0)} MB in ${(streamMs / 1000).toFixed(1)} s, peak RSS ${(peak / 1024).toFixed(0)} MB |`,
    `| limit=-1 streamed from the index, fresh process (index read back from the store: RSS ${(rssLoaded / 1024).toFixed(0)} MB) | ${(bytes2 / 1048576).toFixed(0)} MB in ${(stream2Ms / 1000).toFixed(1)} s, peak RSS ${(peak2 / 1024).toFixed(0)} MB |`,
    `| sync v1 calls per minute per team being read, no webhooks (INDEX_MAX_STALENESS_MS=5000) | ${perTeam.toFixed(0)} (budget INDEX_SYNC_CALLS_PER_MIN=600) |`,
    `| … with webhooks arriving (a reconciliation every INDEX_RECONCILE_MS=60000) | about ${(perTeam / 12).toFixed(0)} (one sync a minute instead of every 2.5 s; derived, not measured) |`,
    '');
  await stop(sim.proc);
}
process.stdout.write(`${out.join('\n')}\nNode ${process.version}, ${new Date().toISOString().slice(0, 10)}; gateway and simulator in separate processes, 16 connections for 10 s per query.\n`);
process.exit(0);
