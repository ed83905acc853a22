/**
 * npm run bench:hotpath — warm GET /renders/:id through the gateway beside two anchors measured in the same run:
 * a Fastify hello-world, and an @fastify/http-proxy pass-through of the same v1 call (key added by the proxy).
 * Every server runs in its own process; autocannon drives them one after the other from this one, BENCH_ROUNDS (3)
 * interleaved rounds of BENCH_SECONDS (5) each, the median round reported.
 * Goals (issue #14): gateway ≥ 0.3× hello-world and ≥ 1.5× the pass-through.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { PRODUCTION_ENV, PRODUCTION_NODE_FLAGS } from './production-flags.js';
import { freePort } from './support.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const children: ChildProcess[] = [];
/** Each server's output goes to a file of its own (a pipe nobody reads would stall its logging). */
const startNode = (args: string[], env: NodeJS.ProcessEnv = process.env, log = 'ignore' as 'ignore' | number) => {
  const c = spawn(process.execPath, args, { env, stdio: ['ignore', log, 'inherit'] });
  children.push(c);
  return c;
};
const waitFor = async (url: string) => {
  for (let i = 0; ; i++) {
    if (await fetch(url).then((r) => r.status < 500, () => false)) return;
    if (i > 400) throw new Error(`${url} did not come up`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

const dir = mkdtempSync(join(tmpdir(), 'bench-hot-'));
const simPort = await freePort();
const simUrl = `http://127.0.0.1:${simPort}`;
startNode(['dist/src/sim/cli.js', '--port', String(simPort), '--scale', 'demo', '--clock', 'manual', '--seed', '1']);
await waitFor(`${simUrl}/_sim/stats`);
const people = await (await fetch(`${simUrl}/_sim/keys`)).json() as { email: string | null; api_key: string; teams: { id: string }[] }[];
const person = people.find((p) => p.teams.length > 0)!;

// the gateway, configured as a deployment
const gwPort = await freePort();
const env = {
  ...process.env, ...PRODUCTION_ENV, NODE_ENV: 'production', V1_BASE_URL: simUrl, DATABASE_URL: join(dir, 'gateway.db'), ENCRYPTION_KEY: '44'.repeat(32),
  JWT_SECRET: 'bench-secret-bench-secret-bench-secret', LOGIN_STALL_MS: '0', HOST: '127.0.0.1', PORT: String(gwPort),
};
const added = spawnSync(process.execPath, ['dist/src/cli/main.js', 'users', 'add', '--email', 'hot@example.com', '--password', 'bench-password', '--key', person.api_key], { env, encoding: 'utf8' });
if (added.status !== 0) throw new Error(`users add failed: ${added.stderr}${added.stdout}`);
// the gateway logs at its default level (info) to a file, as a deployment's log collector would read it
startNode([...PRODUCTION_NODE_FLAGS, ...(process.env.GW_FLAGS ? process.env.GW_FLAGS.split(' ') : []), 'dist/src/main.js'], env, openSync(join(dir, 'gateway.log'), 'w'));
const gw = `http://127.0.0.1:${gwPort}`;
await waitFor(`${gw}/healthz`);
// a second gateway reading v1 live (INDEX_ENABLED=false; its answer cached per key), on a store of its own: one gateway
// serves an SQLite file (a second on the same file is refused at start-up)
const livePort = await freePort();
const liveEnv = { ...env, PORT: String(livePort), INDEX_ENABLED: 'false', DATABASE_URL: join(dir, 'gateway-live.db') };
const addedLive = spawnSync(process.execPath, ['dist/src/cli/main.js', 'users', 'add', '--email', 'hot@example.com', '--password', 'bench-password', '--key', person.api_key],
  { env: liveEnv, encoding: 'utf8' });
if (addedLive.status !== 0) throw new Error(`users add (live) failed: ${addedLive.stderr}${addedLive.stdout}`);
startNode([...PRODUCTION_NODE_FLAGS, 'dist/src/main.js'], liveEnv, openSync(join(dir, 'gateway-live.log'), 'w'));
const gwLive = `http://127.0.0.1:${livePort}`;
await waitFor(`${gwLive}/healthz`);
const login = await (await fetch(`${gw}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'hot@example.com', password: 'bench-password' }) })).json() as { data: { access_token: string } };
const token = login.data.access_token;
const liveLogin = await (await fetch(`${gwLive}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ email: 'hot@example.com', password: 'bench-password' }) })).json() as { data: { access_token: string } };
const liveToken = liveLogin.data.access_token;
// (the live gateway's own listing: a uuid is translated back to its v1 id through the id pairs a gateway has seen, so one
// only the first gateway listed is unknown here — every request of this row was a 403 until 2026-12-01)
const liveOne = await (await fetch(`${gwLive}/renders?limit=1&fields=id&filter[status][_eq]=complete`, { headers: { authorization: `Bearer ${liveToken}` } })).json() as
  { data: { id: string }[] };
const liveRenderUuid = liveOne.data[0]!.id;
const one = await (await fetch(`${gw}/renders?limit=1&fields=id&filter[status][_eq]=complete`, { headers: { authorization: `Bearer ${token}` } })).json() as { data: { id: string }[] };
const renderUuid = one.data[0]!.id;
// the index answers once its backfill is done (the first read started it)
for (let i = 0; ; i++) {
  const r = await fetch(`${gw}/renders/${renderUuid}`, { headers: { authorization: `Bearer ${token}` } });
  await r.text();
  if (r.headers.get('x-gateway-source') === 'index') break;
  if (i > 400) throw new Error('the index was not backfilled');
  await new Promise((res) => setTimeout(res, 50));
}
const v1Render = (await (await fetch(`${simUrl}/v1/renders?project_id=${encodeURIComponent((await (await fetch(`${simUrl}/v1/projects?team_id=${person.teams[0]!.id}`, { headers: { authorization: `Bearer ${person.api_key}` } })).json() as { data: { id: string }[] }).data[0]!.id)}&limit=1`, { headers: { authorization: `Bearer ${person.api_key}` } })).json() as { data: { id: string }[] }).data[0]!.id;

// the anchors, each in its own process
const helloPort = await freePort();
const proxyPort = await freePort();
writeFileSync(join(dir, 'hello.mjs'), `import Fastify from '${process.cwd()}/node_modules/fastify/fastify.js';
const app = Fastify(); app.get('/', async () => ({ hello: 'world' })); await app.listen({ port: ${helloPort}, host: '127.0.0.1' });`);
writeFileSync(join(dir, 'proxy.mjs'), `import Fastify from '${process.cwd()}/node_modules/fastify/fastify.js';
import proxy from '${process.cwd()}/node_modules/@fastify/http-proxy/index.js';
const app = Fastify();
await app.register(proxy, { upstream: '${simUrl}', prefix: '/v1', rewritePrefix: '/v1', http2: false,
  replyOptions: { rewriteRequestHeaders: (_req, h) => ({ ...h, authorization: 'Bearer ${person.api_key}' }) } });
await app.listen({ port: ${proxyPort}, host: '127.0.0.1' });`);
startNode([join(dir, 'hello.mjs')]);
startNode([join(dir, 'proxy.mjs')]);
await waitFor(`http://127.0.0.1:${helloPort}/`);
await waitFor(`http://127.0.0.1:${proxyPort}/v1/renders/${v1Render}`);

type Row = { name: string; rps: number; p50: number; p99: number; non2xx: number; all: number[] };
const targets: [string, string, Record<string, string>][] = [
  ['Fastify hello-world', `http://127.0.0.1:${helloPort}/`, {}],
  ['@fastify/http-proxy pass-through of GET /v1/renders/:id', `http://127.0.0.1:${proxyPort}/v1/renders/${v1Render}`, {}],
  ['gateway (render index): GET /renders/:id', `${gw}/renders/${renderUuid}`, { authorization: `Bearer ${token}` }],
  ['gateway (render index): GET /renders/:id?fields=id,title,project.title', `${gw}/renders/${renderUuid}?fields=id,title,project.title`, { authorization: `Bearer ${token}` }],
  ['gateway (live, answer cached): GET /renders/:id', `${gwLive}/renders/${liveRenderUuid}`, { authorization: `Bearer ${liveToken}` }],
];
// this machine is noisy (a 2-core VM): every server is measured ROUNDS times, the rounds interleaved, and its median
// round reported (the spread beside it)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const runs = targets.map(() => [] as { rps: number; p50: number; p99: number; non2xx: number }[]);
for (const [, url, headers] of targets) await autocannon({ url, connections: CONNECTIONS, duration: 2, headers }); // warm-up (caches, JIT)
for (let round = 0; round < ROUNDS; round++) {
  for (const [i, [, url, headers]] of targets.entries()) {
    const r = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers });
    runs[i]!.push({ rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx });
  }
}
const rows: Row[] = targets.map(([name], i) => {
  const sorted = [...runs[i]!].sort((x, y) => x.rps - y.rps);
  const mid = sorted[Math.floor(sorted.length / 2)]!;
  return { name, ...mid, non2xx: sorted.reduce((n, x) => n + x.non2xx, 0), all: sorted.map((x) => x.rps) };
});
const [hello, pass, gate] = rows as [Row, Row, Row];
process.stdout.write(`| server | req/s (median) | range | p50 | p99 | non-2xx | × hello-world | × pass-through |\n|---|---|---|---|---|---|---|---|\n`);
for (const r of rows) {
  process.stdout.write(`| ${r.name} | ${r.rps.toFixed(0)} | ${(r.all[0] as number).toFixed(0)}–${(r.all.at(-1) as number).toFixed(0)} | ${r.p50} ms | ${r.p99} ms | ` +
    `${r.non2xx} | ${(r.rps / hello.rps).toFixed(2)}× | ${(r.rps / pass.rps).toFixed(2)}× |\n`);
}
process.stdout.write(`${CONNECTIONS} connections, ${ROUNDS} interleaved rounds of ${SECONDS} s per server after a 2 s warm-up, the median round shown; ` +
  `default log level, Node ${process.version}. ` +
  `Goals: gateway ≥ 0.3× hello-world (${(gate.rps / hello.rps).toFixed(2)}×) and ≥ 1.5× pass-through (${(gate.rps / pass.rps).toFixed(2)}×).\n`);
for (const c of children) c.kill('SIGTERM');
await new Promise((r) => setTimeout(r, 500));
rmSync(dir, { recursive: true, force: true });
process.exit(0);
