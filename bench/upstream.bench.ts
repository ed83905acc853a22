/**
 * npm run bench:upstream — v1 calls per canonical legacy query, cold and warm, beside the minimum the v1
 * API allows, with 20 ms added to every v1 call. The simulator runs in its own process (10 teams × 20
 * projects × 500 renders) so the gateway's memory is measured alone.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.js';
import { hashPassword } from '../src/auth/passwords.js';
import { loadConfig } from '../src/config/schema.js';
import { createDeps } from '../src/deps.js';
import { DEFAULT_ROLE } from '../src/store/users.js';
import { createLogger } from '../src/log/logger.js';

const port = 20000 + Math.floor(Math.random() * 20000);
const simUrl = `http://127.0.0.1:${port}`;
const sim = spawn(process.execPath, ['dist/src/sim/cli.js', '--port', String(port), '--scale', 'bench', '--clock', 'manual', '--seed', '1'], { stdio: ['ignore', 'pipe', 'inherit'] });
await new Promise<void>((resolve) => sim.stdout!.on('data', (d: Buffer) => { if (d.toString().includes('v1 simulator on')) resolve(); }));
const j = async (path: string, init?: RequestInit) => (await fetch(simUrl + path, init)).json() as Promise<any>;
await j('/_sim/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ latency_ms: 20 }) });
const people = await j('/_sim/keys');
const org = people.find((p: any) => p.email === 'org-admin@sim.example');
const dir = mkdtempSync(join(tmpdir(), 'bench-'));
const config = loadConfig({
  V1_BASE_URL: simUrl, DATABASE_URL: join(dir, 'g.db'), ENCRYPTION_KEY: '22'.repeat(32), JWT_SECRET: 'bench-secret-bench-secret-bench-secret', LOG_LEVEL: 'silent',
  UPSTREAM_CALL_BUDGET: '100000', LOGIN_STALL_MS: '0', CACHE_MAX_ENTRIES: '100000',
});
const deps = await createDeps(config, createLogger('silent'));
const app = await buildApp(deps);
await deps.users.create({ email: 'bench@example.com', passwordHash: await hashPassword('bench-password'), role: DEFAULT_ROLE, v1Key: org.api_key, v1UserId: org.user_id });
const token = (await app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'bench@example.com', password: 'bench-password' } })).json().data.access_token;
const base = await app.listen({ port: 0, host: '127.0.0.1' });
/** Real HTTP, the body read as it streams (its size is counted, the text is kept only when small). */
const get = async (url: string) => {
  const res = await fetch(base + url, { headers: { authorization: `Bearer ${token}` } });
  const reader = res.body!.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (let r = await reader.read(); !r.done; r = await reader.read()) { bytes += r.value.length; if (bytes < 5_000_000) chunks.push(r.value); }
  const text = bytes < 5_000_000 ? Buffer.concat(chunks).toString() : '';
  return { statusCode: res.status, bytes, body: text, json: () => JSON.parse(text) };
};

// learn the ids the way an old client would (this warms nothing we measure: caches are cleared below)
const someRender = (await get('/renders?limit=1&fields=id,project,account')).json().data[0];
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
await j('/_sim/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ latency_ms: 0 }) });
let fullRead = 1;
for (const t of org.teams) {
  const p = await walk(`/v1/projects?team_id=${t.id}`);
  fullRead += p.calls;
  for (const proj of p.items) fullRead += (await walk(`/v1/renders?project_id=${proj.id}`)).calls;
}
await j('/_sim/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ latency_ms: 20 }) });
const queries: { name: string; url: string; min: number }[] = [
  { name: 'limit=-1 (first, so its peak RSS is its own)', url: '/renders?limit=-1', min: 0 },
  { name: 'a render by id', url: `/renders/${someRender.id}`, min: 1 },
  { name: "one project's renders, newest first, limit 20", url: `/renders?limit=20&filter[project][_eq]=${someRender.project}`, min: 1 },
  { name: 'all renders newest first, limit 20', url: '/renders?limit=20', min: 1 + teams + teams * projectsPerTeam },
  { name: 'complete renders of one account', url: `/renders?filter[account][_eq]=${someRender.account}&filter[status][_eq]=complete`, min: 1 + projectsPerTeam },
  { name: 'page 5 of 50 per page', url: '/renders?limit=50&page=5', min: 1 + teams + teams * projectsPerTeam },
  { name: 'count grouped by status', url: '/renders?aggregate[count]=*&groupBy=status', min: fullRead },
];
queries[0]!.min = fullRead;

async function measure(url: string) {
  await j('/_sim/stats/reset', { method: 'POST' });
  let peak = process.memoryUsage().rss;
  const parts = { heapUsed: 0, external: 0, arrayBuffers: 0 };
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    peak = Math.max(peak, m.rss);
    parts.heapUsed = Math.max(parts.heapUsed, m.heapUsed);
    parts.external = Math.max(parts.external, m.external);
    parts.arrayBuffers = Math.max(parts.arrayBuffers, m.arrayBuffers);
  }, 5);
  const t = performance.now();
  // the body is read by another process (curl), so only the gateway's memory is in this process's RSS
  const res = await new Promise<{ statusCode: number; bytes: number; body: string }>((resolve) => {
    const c = spawn('curl', ['-g', '-s', '-o', '/dev/null', '-w', '%{http_code} %{size_download}', '-H', `authorization: Bearer ${token}`, base + url]);
    let out = '';
    c.stdout.on('data', (d) => { out += d; });
    c.on('exit', () => { const [code, bytes] = out.trim().split(' '); resolve({ statusCode: Number(code), bytes: Number(bytes), body: '' }); });
  });
  const ms = performance.now() - t;
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().rss);
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${(await get(url)).body.slice(0, 300)}`);
  const stats = await j('/_sim/stats');
  const gc = (global as { gc?: () => void }).gc;
  if (process.env.BENCH_MEMORY && gc) { gc(); process.stderr.write(`${url}: heapUsed after the answer and a full GC ${(process.memoryUsage().heapUsed / 1048576).toFixed(0)} MB\n`); }
  if (process.env.BENCH_MEMORY) process.stderr.write(`${url}: peak heapUsed ${(parts.heapUsed / 1048576).toFixed(0)} MB, external ${(parts.external / 1048576).toFixed(0)} MB, arrayBuffers ${(parts.arrayBuffers / 1048576).toFixed(0)} MB\n`);
  return { calls: stats.total as number, ms, peakMb: peak / 1048576, bytes: res.bytes };
}

const rows = ['| query | v1 calls cold | warm | minimum | goal (min + teams + 1) | latency cold | latency warm | peak RSS |', '|---|---|---|---|---|---|---|---|'];
const only = process.env.BENCH_ONLY;
for (const q of queries.filter((x) => !only || x.name.startsWith(only))) {
  deps.cache.clear();
  (global as { gc?: () => void }).gc?.();
  const cold = await measure(q.url);
  const warm = await measure(q.url);
  const goal = q.min + teams + 1;
  rows.push(`| ${q.name} | ${cold.calls}${cold.calls <= goal ? '' : ' ✗'} | ${warm.calls} | ${q.min} | ≤ ${goal} | ${cold.ms.toFixed(0)} ms | ${warm.ms.toFixed(0)} ms | ${cold.peakMb.toFixed(0)} MB |`);
}
// metadata alone, warm: a second identical page of projects/templates
deps.cache.clear();
await get('/templates?limit=-1');
await get('/projects?limit=-1&fields=id,title');
await j('/_sim/stats/reset', { method: 'POST' });
await get('/templates?limit=-1');
await get('/projects?limit=-1&fields=id,title');
const metaWarm = (await j('/_sim/stats')).total;
process.stdout.write(`${rows.join('\n')}\n\nWarm team/project/template metadata (GET /templates and /projects again): ${metaWarm} v1 calls.\n` +
  `${teams} teams × ${projectsPerTeam} projects × ${renders} renders (${teams * projectsPerTeam * renders} renders), 20 ms added per v1 call, fan-out ${config.FANOUT_CONCURRENCY}, Node ${process.version}. Peak RSS is the gateway process, compiled JavaScript (the simulator runs apart).\n`);
await app.close();
await deps.close();
sim.kill('SIGTERM');
rmSync(dir, { recursive: true, force: true });
process.exit(0);
