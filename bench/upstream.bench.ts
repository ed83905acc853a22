/**
 * npm run bench:upstream — the live path (INDEX_ENABLED=false; the render index: bench:index): v1 calls per canonical legacy query, cold and warm, beside the minimum the v1
 * API allows, with 20 ms added to every v1 call (10 teams × 20 projects × 500 renders).
 *
 * Three kinds of process, so each figure belongs to what it names: the simulator runs apart; every query
 * gets a fresh gateway (`node dist/src/main.js`, configured by environment like a deployment) whose peak
 * RSS is read from the kernel (VmHWM, reset just before the query); the body is read by curl. This
 * harness's own work (walking v1 for the minimum, hashing the password) is never in a measured process.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PRODUCTION_ENV, PRODUCTION_NODE_FLAGS } from './production-flags.js';
import { freePort } from './support.js';

const simPort = await freePort();
const simUrl = `http://127.0.0.1:${simPort}`;
const sim = spawn(process.execPath, ['dist/src/sim/cli.js', '--port', String(simPort), '--scale', 'bench', '--clock', 'manual', '--seed', '1'], { stdio: ['ignore', 'pipe', 'inherit'] });
await new Promise<void>((resolve) => sim.stdout!.on('data', (d: Buffer) => { if (d.toString().includes('v1 simulator on')) resolve(); }));
const j = async (path: string, init?: RequestInit) => (await fetch(simUrl + path, init)).json() as Promise<any>;
const latency = (ms: number) => j('/_sim/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ latency_ms: ms }) });
const people = await j('/_sim/keys');
const org = people.find((p: any) => p.email === 'org-admin@sim.example');

const dir = mkdtempSync(join(tmpdir(), 'bench-'));
const env = {
  ...process.env, ...PRODUCTION_ENV, NODE_ENV: 'production', V1_BASE_URL: simUrl, DATABASE_URL: join(dir, 'gateway.db'), ENCRYPTION_KEY: '22'.repeat(32),
  JWT_SECRET: 'bench-secret-bench-secret-bench-secret', LOG_LEVEL: 'silent', UPSTREAM_CALL_BUDGET: '100000', LOGIN_STALL_MS: '0',
  CACHE_MAX_ENTRIES: '100000', HOST: '127.0.0.1',
  // the live path (what a read costs while a team's index is not backfilled, or with INDEX_ENABLED=false): bench:index measures the index
  INDEX_ENABLED: 'false',
};
const added = spawnSync(process.execPath, ['dist/src/cli/main.js', 'users', 'add', '--email', 'bench@example.com', '--password', 'bench-password', '--key', org.api_key], { env, encoding: 'utf8' });
if (added.status !== 0) throw new Error(`users add failed: ${added.stderr}${added.stdout}`);

interface Gateway { proc: ChildProcess; base: string; token: string }
async function startGateway(): Promise<Gateway> {
  const port = await freePort();
  const proc = spawn(process.execPath, [...PRODUCTION_NODE_FLAGS, ...(process.env.GW_FLAGS ? process.env.GW_FLAGS.split(' ') : []), 'dist/src/main.js'], { env: { ...env, PORT: String(port) }, stdio: ['ignore', process.env.GW_FLAGS ? 'inherit' : 'ignore', 'inherit'] });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const ok = await fetch(`${base}/server/health`).then((r) => r.ok, () => false);
    if (ok) break;
    if (i > 200) throw new Error('the gateway did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  const login = await (await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'bench@example.com', password: 'bench-password' }) })).json() as any;
  return { proc, base, token: login.data.access_token };
}
async function stopGateway(g: Gateway): Promise<void> {
  const exited = new Promise((r) => g.proc.once('exit', r));
  g.proc.kill('SIGTERM');
  await exited;
}
const get = async (g: Gateway, url: string) => {
  const res = await fetch(g.base + url, { headers: { authorization: `Bearer ${g.token}` } });
  return { status: res.status, body: await res.text() };
};

/** The kernel's view of a process's memory (Linux): resident now and the peak since the last reset. */
const procStatus = (pid: number, field: 'VmRSS' | 'VmHWM') => {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};
const canMeasure = existsSync('/proc/self/clear_refs');

// learn the ids the way an old client would (on a gateway that is then thrown away)
const first = await startGateway();
const someRender = JSON.parse((await get(first, '/renders?limit=1&fields=id,project,account')).body).data[0];
await stopGateway(first);
const teams = org.teams.length;
const projectsPerTeam = 20;
const renders = 500;
// the fewest calls v1 allows for a full read, measured by walking it directly (v1 pages may be short)
async function walk(path: string): Promise<{ calls: number; items: any[] }> {
  let calls = 0;
  const items: any[] = [];
  let cursor: string | null = null;
  do {
    const page: any = await (await fetch(`${simUrl}${path}&limit=60${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: { authorization: `Bearer ${org.api_key}` } })).json();
    calls++;
    items.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return { calls, items };
}
await latency(0);
let fullRead = 1;
for (const t of org.teams) {
  const p = await walk(`/v1/projects?team_id=${t.id}`);
  fullRead += p.calls;
  for (const proj of p.items) fullRead += (await walk(`/v1/renders?project_id=${proj.id}`)).calls;
}
await latency(20);
const queries: { name: string; url: string; min: number }[] = [
  { name: 'limit=-1', url: '/renders?limit=-1', min: fullRead },
  { name: 'a render by id', url: `/renders/${someRender.id}`, min: 1 },
  { name: "one project's renders, newest first, limit 20", url: `/renders?limit=20&filter[project][_eq]=${someRender.project}`, min: 1 },
  { name: 'all renders newest first, limit 20', url: '/renders?limit=20', min: 1 + teams + teams * projectsPerTeam },
  { name: 'complete renders of one account', url: `/renders?filter[account][_eq]=${someRender.account}&filter[status][_eq]=complete`, min: 1 + projectsPerTeam },
  { name: 'page 5 of 50 per page', url: '/renders?limit=50&page=5', min: 1 + teams + teams * projectsPerTeam },
  { name: 'count grouped by status', url: '/renders?aggregate[count]=*&groupBy=status', min: fullRead },
  // beyond the canonical list: an order v1 cannot give, so every render is read
  { name: 'by title (v1 cannot sort), limit 20', url: '/renders?sort=title&limit=20', min: fullRead },
  { name: 'by title (v1 cannot sort), limit=-1', url: '/renders?sort=title&limit=-1', min: fullRead },
];

async function measure(g: Gateway, url: string) {
  await j('/_sim/stats/reset', { method: 'POST' });
  const pid = g.proc.pid as number;
  const idle = canMeasure ? procStatus(pid, 'VmRSS') : NaN;
  if (canMeasure) writeFileSync(`/proc/${pid}/clear_refs`, '5'); // resets the peak (VmHWM) to the current RSS
  const t = performance.now();
  const res = await new Promise<{ statusCode: number; bytes: number }>((resolve) => {
    const c = spawn('curl', ['-g', '-s', '-o', '/dev/null', '-w', '%{http_code} %{size_download}', '-H', `authorization: Bearer ${g.token}`, g.base + url]);
    let out = '';
    c.stdout.on('data', (d) => { out += d; });
    c.on('exit', () => { const [code, bytes] = out.trim().split(' '); resolve({ statusCode: Number(code), bytes: Number(bytes) }); });
  });
  const ms = performance.now() - t;
  const peak = canMeasure ? procStatus(pid, 'VmHWM') : NaN;
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${(await get(g, url)).body.slice(0, 300)}`);
  const stats = await j('/_sim/stats');
  return { calls: stats.total as number, ms, idle, peak, bytes: res.bytes };
}

const mb = (x: number) => (Number.isNaN(x) ? 'n/a' : `${x.toFixed(0)} MB`);
const rows = ['| query | v1 calls cold | warm | minimum | goal (min + teams + 1) | latency cold | latency warm | RSS before | peak RSS |', '|---|---|---|---|---|---|---|---|---|'];
const only = process.env.BENCH_ONLY;
for (const q of queries.filter((x) => !only || x.name.startsWith(only))) {
  const g = await startGateway();
  const cold = await measure(g, q.url);
  const warm = await measure(g, q.url);
  await stopGateway(g);
  const goal = q.min + teams + 1;
  rows.push(`| ${q.name} | ${cold.calls}${cold.calls <= goal ? '' : ' ✗'} | ${warm.calls} | ${q.min} | ≤ ${goal} | ${cold.ms.toFixed(0)} ms | ${warm.ms.toFixed(0)} ms | ${mb(cold.idle)} | ${mb(cold.peak)} |`);
}
// metadata alone, warm: a second identical page of projects/templates
const g = await startGateway();
await get(g, '/templates?limit=-1');
await get(g, '/projects?limit=-1&fields=id,title');
await j('/_sim/stats/reset', { method: 'POST' });
await get(g, '/templates?limit=-1');
await get(g, '/projects?limit=-1&fields=id,title');
const metaWarm = (await j('/_sim/stats')).total;
await stopGateway(g);
process.stdout.write(`${rows.join('\n')}\n\nWarm team/project/template metadata (GET /templates and /projects again): ${metaWarm} v1 calls.\n` +
  `${teams} teams × ${projectsPerTeam} projects × ${renders} renders (${teams * projectsPerTeam * renders} renders), 20 ms added per v1 call, fan-out 8 (default), Node ${process.version}.\n` +
  'Every query on a fresh gateway process (compiled JavaScript); RSS before = after start-up and login; peak RSS = the kernel\'s high-water mark during the cold query.\n');
sim.kill('SIGTERM');
rmSync(dir, { recursive: true, force: true });
process.exit(0);
