// p50 at bench scale for a few queries, sequential
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const simPort = 39011, gwPort = 39012;
const sim = spawn(process.execPath, ['dist/src/sim/cli.js', '--port', String(simPort), '--scale', 'bench', '--clock', 'manual'], { stdio: ['ignore', 'pipe', 'inherit'] });
await new Promise((r) => sim.stdout.on('data', (d) => { if (String(d).includes('v1 simulator on')) r(); }));
const people = await (await fetch(`http://127.0.0.1:${simPort}/_sim/keys`)).json();
const person = people.find((p) => p.email === 'org-admin@sim.example');
const dir = mkdtempSync(join(tmpdir(), 'prof-'));
const env = { ...process.env, NODE_ENV: 'production', V1_BASE_URL: `http://127.0.0.1:${simPort}`, DATABASE_URL: join(dir, 'g.db'), ENCRYPTION_KEY: '44'.repeat(32), JWT_SECRET: 'prof-secret-prof-secret-prof-secret-00', LOGIN_STALL_MS: '0', HOST: '127.0.0.1', PORT: String(gwPort), GATEWAY_ADMIN_TOKEN: 'prof-operator-token-0123', INDEX_MEMORY_MB: '4096', UPSTREAM_CALL_BUDGET: '100000', LOG_LEVEL: 'warn' };
spawnSync(process.execPath, ['dist/src/cli/main.js', 'users', 'add', '--email', 'p@example.com', '--password', 'prof-password', '--key', person.api_key], { env });
const gw = spawn(process.execPath, [...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir', '/tmp/prof'] : []), 'dist/src/main.js'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
const base = `http://127.0.0.1:${gwPort}`;
for (let i = 0; !(await fetch(`${base}/healthz`).then((r) => r.ok, () => false)); i++) await new Promise((r) => setTimeout(r, 50));
const token = (await (await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'p@example.com', password: 'prof-password' }) })).json()).data.access_token;
await fetch(base + '/renders?limit=1', { headers: { authorization: `Bearer ${token}` } });
for (;;) { const s = (await (await fetch(`${base}/_gateway/index`, { headers: { authorization: 'Bearer prof-operator-token-0123' } })).json()).data; if (s.length >= 10 && s.every((x) => x.state === 'ready')) break; await new Promise((r) => setTimeout(r, 200)); }
for (const q of (process.argv[2] ?? '/renders?aggregate[count]=*&groupBy=status|/renders?filter[status][_eq]=complete&limit=20|/renders?sort=title&limit=20|/renders?limit=20&meta=total_count').split('|')) {
  const lat = [];
  let calls = 0;
  for (let i = 0; i < 120; i++) { const t = performance.now(); const r = await fetch(base + q, { headers: { authorization: `Bearer ${token}` } }); await r.text(); if (i >= 20) lat.push(performance.now() - t); calls += Number(r.headers.get('x-gateway-v1-calls')); }
  lat.sort((a, b) => a - b);
  console.log(q, 'p50', lat[50].toFixed(1), 'ms p90', lat[90].toFixed(1), 'calls', calls);
}
gw.kill('SIGINT'); await new Promise((r) => gw.once('exit', r)); sim.kill();
