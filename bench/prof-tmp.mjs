// profile the gateway for a list query: demo-scale sim + gateway with --cpu-prof
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
const q = process.argv[2] ?? '/renders?filter[status][_eq]=complete&sort=-date_created&limit=20';
const scale = process.argv[3] ?? 'demo';
const simPort = 39001, gwPort = 39002;
const sim = spawn(process.execPath, ['dist/src/sim/cli.js', '--port', String(simPort), '--scale', scale, '--clock', 'manual'], { stdio: ['ignore', 'pipe', 'inherit'] });
await new Promise((r) => sim.stdout.on('data', (d) => { if (String(d).includes('v1 simulator on')) r(); }));
const people = await (await fetch(`http://127.0.0.1:${simPort}/_sim/keys`)).json();
const person = scale === 'bench' ? people.find((p) => p.email === 'org-admin@sim.example') : people[0];
const dir = mkdtempSync(join(tmpdir(), 'prof-'));
const env = { ...process.env, NODE_ENV: 'production', V1_BASE_URL: `http://127.0.0.1:${simPort}`, DATABASE_URL: join(dir, 'g.db'), ENCRYPTION_KEY: '44'.repeat(32), JWT_SECRET: 'prof-secret-prof-secret-prof-secret-00', LOGIN_STALL_MS: '0', HOST: '127.0.0.1', PORT: String(gwPort), GATEWAY_ADMIN_TOKEN: 'prof-operator-token-0123', INDEX_MEMORY_MB: '4096', UPSTREAM_CALL_BUDGET: '100000' };
spawnSync(process.execPath, ['dist/src/cli/main.js', 'users', 'add', '--email', 'p@example.com', '--password', 'prof-password', '--key', person.api_key], { env });
const gw = spawn(process.execPath, [...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir', '/tmp/prof'] : []), 'dist/src/main.js'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
const base = `http://127.0.0.1:${gwPort}`;
for (let i = 0; !(await fetch(`${base}/healthz`).then((r) => r.ok, () => false)); i++) await new Promise((r) => setTimeout(r, 50));
const token = (await (await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'p@example.com', password: 'prof-password' }) })).json()).data.access_token;
await fetch(base + '/renders?limit=1', { headers: { authorization: `Bearer ${token}` } });
for (;;) { const s = (await (await fetch(`${base}/_gateway/index`, { headers: { authorization: 'Bearer prof-operator-token-0123' } })).json()).data; if (s.length && s.every((x) => x.state === 'ready')) break; await new Promise((r) => setTimeout(r, 100)); }
const check = await fetch(base + q, { headers: { authorization: `Bearer ${token}` } });
console.log('source', check.headers.get('x-gateway-source'), 'calls', check.headers.get('x-gateway-v1-calls'), (await check.text()).slice(0, 120));
const r = await autocannon({ url: base + q, connections: Number(process.env.CONN ?? 16), duration: Number(process.env.DUR ?? 8), headers: { authorization: `Bearer ${token}` } });
console.log('req/s', r.requests.average, 'p50', r.latency.p50, 'errors', r.errors + r.non2xx);
gw.kill('SIGINT'); await new Promise((r) => gw.once('exit', r)); sim.kill();
