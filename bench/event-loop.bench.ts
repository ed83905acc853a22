/**
 * npm run bench:event-loop — the longest event-loop stall of the gateway while it answers heavy or hostile
 * legacy requests, one at a time (perf_hooks.monitorEventLoopDelay, 5 ms resolution, reset before each). Goal:
 * no request blocks the loop for more than ~100 ms at a time.
 *
 * The simulator (bench scale: 100 000 renders) runs in its own process; the gateway runs in this one, built as
 * main.ts builds it, so the histogram sees its loop. The harness's own part (one fetch at a time) is negligible.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { buildApp } from '../src/app.js';
import { addUser } from '../src/admin/operations.js';
import { loadConfig } from '../src/config/schema.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/log/logger.js';
import { freePort } from './support.js';

const simPort = await freePort();
const simUrl = `http://127.0.0.1:${simPort}`;
const scale = process.env.BENCH_SCALE ?? 'bench';
const sim = spawn(process.execPath, ['dist/src/sim/cli.js', '--port', String(simPort), '--scale', scale, '--clock', 'manual', '--seed', '1'], { stdio: ['ignore', 'pipe', 'inherit'] });
await new Promise<void>((resolve) => sim.stdout!.on('data', (d: Buffer) => { if (d.toString().includes('v1 simulator on')) resolve(); }));
const people = await (await fetch(`${simUrl}/_sim/keys`)).json() as { email: string | null; api_key: string }[];
const org = people.find((p) => p.email === 'org-admin@sim.example') ?? people[0]!;

const dir = mkdtempSync(join(tmpdir(), 'bench-loop-'));
const config = loadConfig({
  V1_BASE_URL: simUrl, DATABASE_URL: join(dir, 'gateway.db'), ENCRYPTION_KEY: '33'.repeat(32), JWT_SECRET: 'bench-secret-bench-secret-bench-secret',
  LOG_LEVEL: 'silent', UPSTREAM_CALL_BUDGET: '100000', LOGIN_STALL_MS: '0', HOST: '127.0.0.1',
});
const deps = await createDeps(config, createLogger('silent'));
await addUser(deps, { email: 'loop@example.com', password: 'bench-password', key: org.api_key });
const app = await buildApp(deps);
const base = await app.listen({ port: 0, host: '127.0.0.1' });
const login = await (await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'loop@example.com', password: 'bench-password' }) })).json() as { data: { access_token: string } };
const token = login.data.access_token;

const nest = (d: number) => { let v: unknown = { _eq: 'x' }; for (let i = 0; i < d; i++) v = { _and: [v] }; return JSON.stringify({ title: v }); };
const QUERIES: [string, string][] = [
  ['fields=*.*.*.*.*.*.* on accounts (refused by MAX_RELATED_ITEMS)', '/accounts?fields=*.*.*.*.*.*.*'],
  ['limit=-1 (streamed)', '/renders?limit=-1'],
  ['limit=-1 with project.* (built whole, budget)', '/renders?limit=-1&fields=id,title,project.title'],
  ['count grouped by status', '/renders?aggregate[count]=*&groupBy=status'],
  ['sort=title&limit=-1 (scan)', '/renders?sort=title&limit=-1&fields=id,title'],
  ['deep page, meta=total_count', '/renders?limit=2500&page=3&meta=total_count'],
  ['$NOW with 14 000 digits', `/renders?filter[date_created][_gt]=$NOW(${'9'.repeat(14_000)}x)`],
  ['filter nested 600 levels under a field', `/renders?filter=${encodeURIComponent(nest(600))}`],
];

const h = monitorEventLoopDelay({ resolution: 5 });
h.enable();
const rows: string[] = [];
let worst = 0;
for (const [name, url] of QUERIES) {
  await new Promise((r) => setTimeout(r, 50));
  h.reset();
  const started = performance.now();
  const res = await fetch(base + url, { headers: { authorization: `Bearer ${token}` } });
  const bytes = (await res.arrayBuffer()).byteLength;
  const ms = performance.now() - started;
  const maxMs = h.max / 1e6;
  worst = Math.max(worst, maxMs);
  rows.push(`| ${name} | ${res.status} | ${(bytes / 1e6).toFixed(1)} MB | ${ms.toFixed(0)} ms | ${maxMs.toFixed(0)} ms | ${(h.percentile(99) / 1e6).toFixed(0)} ms |`);
}
h.disable();
process.stdout.write(`| request | status | body | latency | longest stall | p99 stall |\n|---|---|---|---|---|---|\n${rows.join('\n')}\n`);
process.stdout.write(`Scale ${scale}, Node ${process.version}. Longest event-loop stall over all requests: ${worst.toFixed(0)} ms (goal ≤ ~100 ms).\n`);
await app.close();
await deps.close();
sim.kill('SIGTERM');
rmSync(dir, { recursive: true, force: true });
