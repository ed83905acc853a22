/**
 * npm run bench:replica-memory — the memory a render held by the replica costs, in one process: TeamReplicas filled
 * with N renders (BENCH_RENDERS, 200 000) of the simulator's world (its ids, titles — unicode and 250-character ones
 * included — statuses and signed output URLs), split over BENCH_TEAMS teams (2) of 100 projects each, measured
 * between full collections: heap used and RSS before, after the load (as the store's load path leaves a team:
 * applied, then compacted), and after what reads keep (the newest-first order, every record view, a title order and a
 * date order). Bytes a render both ways, and the replica's own estimate (`approxBytes`).
 *
 * The world is generated once by a child process into a JSON-lines file in the temporary directory (kept for later
 * runs), so none of the simulator's memory is in the measured process; the measured process reads it a slice at a time.
 * usage: node --expose-gc dist/bench/replica-memory.bench.js   (BENCH_RENDERS, BENCH_TEAMS, BENCH_SEED)
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readSync, renameSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadMappings } from '../src/config/mappings.js';
import { recordBuilder } from '../src/replica/team/records.js';
import { TeamReplica } from '../src/replica/team/team-replica.js';
import { SimClock } from '../src/sim/clock.js';
import { World } from '../src/sim/world.js';
import type { IdMapStore } from '../src/store/idmap.js';
import { IdTranslator } from '../src/translate/ids.js';
import type { V1Project, V1Render } from '../src/v1/schemas.js';

const N = Number(process.env.BENCH_RENDERS ?? 200_000);
const TEAMS = Number(process.env.BENCH_TEAMS ?? 2);
const SEED = Number(process.env.BENCH_SEED ?? 1);
const PROJECTS = 100;
const NOW = 1_750_000_000_000;
const file = join(tmpdir(), `replica-memory-${N}-${TEAMS}-${SEED}.jsonl`);

type Line = { p: V1Project } | { r: V1Render };

/** Child: the world's projects and renders as v1 shows them, one JSON object a line. */
function generate(): void {
  const clock = new SimClock('manual', NOW);
  const world = new World(clock, SEED, {
    teams: TEAMS, projectsPerTeam: PROJECTS, templatesPerProject: 1, rendersPerProject: Math.ceil(N / TEAMS / PROJECTS), people: 8,
  });
  const part = `${file}.${process.pid}`;
  writeFileSync(part, '');
  let lines: string[] = [];
  const put = (l: Line) => {
    lines.push(JSON.stringify(l));
    if (lines.length >= 2000) {
      appendFileSync(part, `${lines.join('\n')}\n`);
      lines = [];
    }
  };
  for (const p of world.projects.values()) put({ p: world.projectView(p) });
  let n = 0;
  for (const r of world.renders.values()) if (n++ < N) put({ r: world.renderView(r) });
  appendFileSync(part, `${lines.join('\n')}\n`);
  renameSync(part, file);
}

/** The file's lines, a slice at a time (little garbage lives across slices). */
function eachLine(each: (l: Line) => void, most = Number.POSITIVE_INFINITY): void {
  const fd = openSync(file, 'r');
  const buf = Buffer.alloc(1 << 20);
  let carry = '';
  let n = 0;
  try {
    for (;;) {
      const got = readSync(fd, buf, 0, buf.length, null);
      if (got === 0) break;
      const text = carry + buf.toString('utf8', 0, got);
      const parts = text.split('\n');
      carry = parts.pop() as string;
      for (const s of parts) {
        if (s === '') continue;
        if (n++ >= most) return;
        each(JSON.parse(s) as Line);
      }
    }
  } finally {
    closeSync(fd);
  }
}

async function measure(): Promise<void> {
  const gcf = (globalThis as { gc?: () => void }).gc;
  if (!gcf) throw new Error('run with --expose-gc');
  const gc = () => {
    for (let i = 0; i < 3; i++) gcf();
  };
  const mappings = loadMappings('mappings');
  const ids = new IdTranslator({ imported: async () => [] } as unknown as IdMapStore);
  const builder = recordBuilder({ ids, mappings, timeUnit: 'auto' }, () => ({}), {});
  const fill = (most: number) => {
    const teams = new Map<string, TeamReplica>();
    const team = (id: string) => {
      let t = teams.get(id);
      if (!t) {
        t = new TeamReplica({
          team: { id, name: id, account_id: 'acc', role: 'admin', created_at: 1 }, members: [], state: 'ready', backfilledAt: 1, syncedAt: 1, webhookAt: null,
        }, builder);
        teams.set(id, t);
      }
      return t;
    };
    let renders = 0;
    eachLine((l) => {
      if ('p' in l) team(l.p.team.id).setProject({ project: l.p, templates: [], backfilled: true }, NOW);
      else {
        team(l.r.project.team).apply(l.r, NOW);
        renders++;
      }
    }, most);
    for (const t of teams.values()) t.compact();
    return { teams: [...teams.values()], renders };
  };
  const reads = async (teams: readonly TeamReplica[]) => {
    for (const t of teams) {
      t.newestFirst();
      t.renderRecords();
      const title = (r: number) => t.view(r).title as string;
      const created = (r: number) => t.view(r).date_created as string;
      const orders: [string, (a: number, b: number) => number][] = [
        ['title:asc,id:asc', (a, b) => (title(a) < title(b) ? -1 : title(a) > title(b) ? 1 : 0) || a - b],
        ['date_created:desc,id:asc', (a, b) => (created(a) < created(b) ? 1 : created(a) > created(b) ? -1 : 0) || a - b],
      ];
      // a large team's order is sorted a slice at a time between turns of the event loop: asked until it is kept
      for (const [name, cmp] of orders) while (!t.sortedRows(name, cmp)) await new Promise((r) => setImmediate(r));
    }
  };
  // the same code run once on a few renders first (compiled code, young generation sized), then dropped
  const warm = fill(TEAMS * PROJECTS + 5000);
  await reads(warm.teams);
  warm.teams.length = 0;
  gc();
  const m0 = process.memoryUsage();
  const t0 = Date.now();
  const c0 = process.cpuUsage();
  const held = fill(Number.POSITIVE_INFINITY);
  const loadMs = Date.now() - t0;
  const cpu = process.cpuUsage(c0);
  gc();
  const m1 = process.memoryUsage();
  const c1 = process.cpuUsage();
  await reads(held.teams);
  const readCpu = process.cpuUsage(c1);
  gc();
  const m2 = process.memoryUsage();
  const n = held.renders;
  const per = (a: number, b: number) => Math.round((b - a) / n);
  const estimate = held.teams.reduce((s, t) => s + t.approxBytes, 0);
  const size = held.teams.reduce((s, t) => s + t.size, 0);
  const out = {
    renders: n, held: size, teams: held.teams.length, load_ms: loadMs, load_cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
    orders_cpu_ms: Math.round((readCpu.user + readCpu.system) / 1000),
    loaded: { heap_per_render: per(m0.heapUsed, m1.heapUsed), rss_per_render: per(m0.rss, m1.rss) },
    read: { heap_per_render: per(m0.heapUsed, m2.heapUsed), rss_per_render: per(m0.rss, m2.rss) },
    estimate_per_render: Math.round(estimate / n),
    array_buffers_per_render: per(m0.arrayBuffers, m1.arrayBuffers),
    heap_total_per_render: per(m0.heapTotal, m1.heapTotal),
    rss_mb: { before: Math.round(m0.rss / 1048576), loaded: Math.round(m1.rss / 1048576), read: Math.round(m2.rss / 1048576) },
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
  process.stdout.write(
    `${n} renders in ${held.teams.length} teams: loaded ${out.loaded.heap_per_render} B heap / ${out.loaded.rss_per_render} B RSS a render; ` +
      `with the kept orders and views ${out.read.heap_per_render} B heap / ${out.read.rss_per_render} B RSS; ` +
      `the replica's estimate ${out.estimate_per_render} B (Node ${process.version})\n`,
  );
}

if (process.env.REPLICA_MEMORY_GENERATE === '1') generate();
else {
  if (!existsSync(file)) {
    const r = spawnSync(process.execPath, [...process.execArgv, '--max-old-space-size=4096', fileURLToPath(import.meta.url)], {
      env: { ...process.env, REPLICA_MEMORY_GENERATE: '1' }, stdio: 'inherit',
    });
    if (r.status !== 0) throw new Error('generating the world failed');
  }
  await measure();
}
