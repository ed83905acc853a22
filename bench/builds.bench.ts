/**
 * Builds side by side — DIRS="<checkout> <checkout> …" node dist/bench/builds.bench.js (after `npx tsc -p
 * tsconfig.bench.json` here and `npx tsc` in each checkout, e.g. a `git worktree` of an older commit with this
 * node_modules linked in): one simulator (the demo world), one gateway per checkout, each built from that checkout's
 * dist/ with the answer cache off, all running at once; ROUNDS (4) interleaved rounds of SECS (6) seconds of Q (the title
 * order's third page) against each, the order reversed every other round. Prints req/s and the gateway's CPU a request
 * (from /proc: Linux), round by round and the median. Machines drift by a third within the hour: only builds measured
 * in one run are compared (docs/benchmarks.md, "The hot path", 2026-12-02).
 */
import { readFileSync } from 'node:fs';
import { backfilled, load, log, median, startGateway, startSim, stop, type Gateway } from './support.js';

const q = process.env.Q ?? 'sort=title&limit=20&page=3';
const rounds = Number(process.env.ROUNDS ?? 4);
const secs = Number(process.env.SECS ?? 6);
const dirs = (process.env.DIRS ?? process.cwd()).split(' ').filter(Boolean);
const here = process.cwd();

/** The process's CPU time so far, in clock ticks (100 a second): utime + stime of /proc/<pid>/stat. */
const ticks = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(f[11]) + Number(f[12]);
};

const sim = await startSim('demo');
const person = sim.people[0]!;
const runs: { dir: string; g: Gateway; rps: number[]; cpu: number[]; requests: number }[] = [];
try {
  for (const dir of dirs) {
    process.chdir(dir); // (the gateway is started from the checkout's dist/)
    const g = await startGateway(sim, person.api_key, { ANSWER_CACHE_MB: '0' });
    await backfilled(g, person.teams.length);
    runs.push({ dir, g, rps: [], cpu: [], requests: 0 });
  }
  process.chdir(here);
  for (const x of runs) x.requests += (await load(`${x.g.base}/renders?${q}`, x.g.token, 3)).requests; // warm-up
  for (let r = 0; r < rounds; r++) {
    for (const x of r % 2 ? [...runs].reverse() : runs) {
      const before = ticks(x.g.proc.pid!);
      const a = await load(`${x.g.base}/renders?${q}`, x.g.token, secs);
      x.rps.push(a.rps);
      x.requests += a.requests;
      x.cpu.push(((ticks(x.g.proc.pid!) - before) * 10_000) / a.requests);
      log(`round ${r + 1} ${x.dir}: ${a.rps.toFixed(0)} req/s${a.errors ? `, ${a.errors} errors` : ''}`);
    }
  }
  for (const x of runs) {
    console.log(`${x.dir}: req/s ${x.rps.map((v) => v.toFixed(0)).join(' / ')} (median ${median(x.rps).toFixed(0)}); ` +
      `µs of CPU a request ${x.cpu.map((v) => v.toFixed(0)).join(' / ')} (median ${median(x.cpu).toFixed(0)}); pid ${x.g.proc.pid}, ` +
      `${x.requests} requests in all`);
  }
} finally {
  process.chdir(here);
  for (const x of runs) await stop(x.g.proc);
  await stop(sim.proc);
}
