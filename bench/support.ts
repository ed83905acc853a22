/**
 * What the process benchmarks share: the simulator and the gateway as separate processes (compiled JavaScript, the
 * gateway with the production node flags and the default log level), the simulator's admin routes, the gateway's
 * operator routes, the kernel's view of a process's memory, autocannon at 16 connections, and a throwaway PostgreSQL.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { PRODUCTION_ENV, PRODUCTION_NODE_FLAGS } from './production-flags.js';

export const log = (s: string) => process.stderr.write(`${s}\n`);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const freePort = () => new Promise<number>((resolve) => {
  const s = createServer();
  s.listen(0, '127.0.0.1', () => { const a = s.address(); s.close(() => resolve(typeof a === 'object' && a ? a.port : 0)); });
});
/** The gateway's operator token in every benchmark (GATEWAY_ADMIN_TOKEN). */
export const OPERATOR = 'bench-operator-token-0123456789';

export interface SimPerson { email: string | null; api_key: string; teams: { id: string }[] }
export interface Sim { proc: ChildProcess; url: string; people: SimPerson[] }
/** The simulator on a free loopback port, manual clock, seed 1; `args` are more of its CLI's flags. */
export async function startSim(scale: string, args: readonly string[] = [], nodeFlags: readonly string[] = []): Promise<Sim> {
  const port = await freePort();
  const proc = spawn(process.execPath, [...nodeFlags, 'dist/src/sim/cli.js', '--port', String(port), '--scale', scale, '--clock', 'manual', '--seed', '1', ...args],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    proc.stdout!.on('data', (d: Buffer) => { if (d.toString().includes('v1 simulator on')) resolve(); });
    proc.once('exit', (code) => reject(new Error(`the simulator exited (${code})`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return { proc, url, people: (await (await fetch(`${url}/_sim/keys`)).json()) as SimPerson[] };
}
export const simStats = async (sim: Sim) => ((await (await fetch(`${sim.url}/_sim/stats`)).json()) as { total: number; requests: Record<string, number> });
export const resetSimStats = async (sim: Sim) => { await fetch(`${sim.url}/_sim/stats/reset`, { method: 'POST' }); };

/** Every page of a v1 list (`path` with its query, 60 a page, the simulator's short pages included): pages and items. */
export async function walkPages(sim: Sim, key: string, path: string): Promise<{ n: number; items: { id: string }[] }> {
  let n = 0;
  const items: { id: string }[] = [];
  let cursor: string | null = null;
  do {
    const url = `${sim.url}${path}&limit=60${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = (await (await fetch(url, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: { id: string }[]; next_cursor: string | null };
    n++;
    items.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return { n, items };
}

export interface Gateway { proc: ChildProcess; base: string; token: string; dir: string; env: Record<string, string | undefined> }
/**
 * The gateway on a free port, configured by environment like a deployment (`extra` overrides, e.g. DATABASE_URL), a
 * user bench@example.com bound to `key` (and `others`) added first by the CLI unless `reuse` names the folder of a
 * previous one; logged in. GW_FLAGS="…" passes node flags (e.g. --cpu-prof).
 */
export async function startGateway(sim: Sim, key: string, extra: Record<string, string> = {}, reuse?: string,
  others: readonly { email: string; key: string }[] = []): Promise<Gateway> {
  const dir = reuse ?? mkdtempSync(join(tmpdir(), 'bench-gateway-'));
  const env = {
    ...process.env, ...PRODUCTION_ENV, NODE_ENV: 'production', V1_BASE_URL: sim.url, DATABASE_URL: join(dir, 'gateway.db'), ENCRYPTION_KEY: '33'.repeat(32),
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret', LOGIN_STALL_MS: '0', HOST: '127.0.0.1', GATEWAY_ADMIN_TOKEN: OPERATOR,
    UPSTREAM_CALL_BUDGET: '100000', ...extra,
  };
  if (!reuse) for (const u of [{ email: 'bench@example.com', key }, ...others]) {
    const added = spawnSync(process.execPath, ['dist/src/cli/main.js', 'users', 'add', '--email', u.email, '--key-stdin', '--password', 'bench-password'],
      { env, encoding: 'utf8', input: `${u.key}\n` });
    if (added.status !== 0) throw new Error(`users add failed: ${added.stderr}${added.stdout}`);
  }
  const port = await freePort();
  const flags = (process.env.GW_FLAGS ?? '').split(' ').filter(Boolean);
  const proc = spawn(process.execPath, [...PRODUCTION_NODE_FLAGS, ...flags, 'dist/src/main.js'], { env: { ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; !(await fetch(`${base}/healthz`).then((r) => r.ok, () => false)); i++) {
    if (i > 400 || proc.exitCode !== null) throw new Error('the gateway did not start');
    await sleep(50);
  }
  return { proc, base, token: await login(base, 'bench@example.com'), dir, env };
}
export async function login(base: string, email: string): Promise<string> {
  const r = (await (await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'bench-password' }) })).json()) as { data: { access_token: string } };
  return r.data.access_token;
}
export const stop = async (p: ChildProcess) => {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise((r) => p.once('exit', r));
  p.kill('SIGTERM');
  await exited;
};
export const get = (g: { base: string; token: string }, url: string, signal?: AbortSignal) =>
  fetch(g.base + url, { headers: { authorization: `Bearer ${g.token}` }, ...(signal ? { signal } : {}) });
/**
 * Reads a streamed answer asked with explain (the operator's token): bytes, status, and the v1 calls this request made
 * itself (its explain, written after the data), whatever the background syncs call meanwhile.
 */
export async function drainExplained(g: { base: string; token: string }, path: string):
  Promise<{ bytes: number; status: number; ownCalls: number; byEndpoint: Record<string, number> }> {
  const r = await fetch(g.base + path, { headers: { authorization: `Bearer ${g.token}`, 'x-gateway-explain': '1', 'x-gateway-operator-token': OPERATOR } });
  let bytes = 0;
  let tail = Buffer.alloc(0);
  for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    tail = Buffer.concat([tail, chunk]).subarray(-262_144);
  }
  const text = tail.toString('utf8');
  const at = text.lastIndexOf(',"explain":');
  const explain = at < 0 ? undefined : (JSON.parse(text.slice(at + ',"explain":'.length, -1)) as { v1_calls?: number; by_endpoint?: Record<string, number> });
  return { bytes, status: r.status, ownCalls: explain?.v1_calls ?? Number.NaN, byEndpoint: explain?.by_endpoint ?? {} };
}
/** Reads an answer (a streamed `limit=-1`) to its last byte: bytes, status. */
export async function drain(g: { base: string; token: string }, path: string, signal?: AbortSignal): Promise<{ bytes: number; status: number }> {
  const r = await get(g, path, signal);
  let bytes = 0;
  for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  return { bytes, status: r.status };
}
export const indexState = async (g: Gateway) =>
  ((await (await fetch(`${g.base}/_gateway/index`, { headers: { authorization: `Bearer ${OPERATOR}` } })).json()) as
    { data: { team: string; state: string; renders: number; sync_calls_last_minute: number }[] }).data;

/** Reads once (the backfill starts) and waits until every team of the key is backfilled; the time it took. */
export async function backfilled(g: Gateway, teams: number): Promise<number> {
  const t = performance.now();
  await (await get(g, '/renders?limit=1')).text();
  for (;;) {
    const s = await indexState(g);
    if (s.length >= teams && s.every((x) => x.state === 'ready')) return performance.now() - t;
    await sleep(100);
  }
}

/** Reads `path` until the replica answers it (after a start, once its teams are loaded back from the store); the time it took. */
export async function untilFromReplica(g: { base: string; token: string }, path: string): Promise<number> {
  const t = performance.now();
  for (;;) {
    const r = await get(g, path);
    await r.arrayBuffer();
    // answered from the replica whole: every team of the reach loaded (not a partial answer while some still load)
    if (r.headers.get('x-gateway-source') === 'index' && !r.headers.get('x-gateway-partial')) return performance.now() - t;
    await sleep(200);
  }
}

/** A field of /proc/<pid>/status in kB (VmHWM: the peak, reset by writing 5 to /proc/<pid>/clear_refs). */
export const procKb = (pid: number, field: 'VmRSS' | 'VmHWM' | 'RssAnon') =>
  Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
/** The middle value of a sample (the upper middle of an even one). */
export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
/** Resets the kernel's peak RSS of a process; false where the kernel has no clear_refs. */
export const resetPeakRss = (pid: number) => {
  if (!existsSync('/proc/self/clear_refs')) return false;
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  return true;
};
/** One sample of the gateway's /metrics (the operator's view). */
export async function metric(g: Gateway, name: string): Promise<number> {
  const text = await (await fetch(`${g.base}/metrics`, { headers: { authorization: `Bearer ${OPERATOR}` } })).text();
  return Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
}
export const heapUsed = (g: Gateway) => metric(g, 'nodejs_heap_size_used_bytes');

/** autocannon, 16 connections; `paths` gives the n-th request's path (distinct queries) when set. */
export async function load(url: string, token: string, seconds: number, paths?: (n: number) => string):
  Promise<{ rps: number; p50: number; p99: number; errors: number; requests: number }> {
  let n = 0;
  const r = await autocannon({
    url, connections: 16, duration: seconds, headers: { authorization: `Bearer ${token}` },
    ...(paths ? { requests: [{ method: 'GET', setupRequest: (req: autocannon.Request) => ({ ...req, path: paths(n++) }) }] } : {}),
  });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx, requests: r.requests.total };
}

// ------------------------------------------------------------------------------------------------ PostgreSQL
/** Where the benchmarks keep what they install once (Directus) and their PostgreSQL's data folder. */
export const BENCH_HOME = process.env.BENCH_DIRECTUS_DIR ?? join(tmpdir(), 'gateway-bench-directus');
const PG_PORT = Number(process.env.BENCH_PG_PORT ?? 55533);

export interface Postgres {
  readonly port: number;
  /** The address of one of its databases, as the user postgres (trust on loopback). */
  url(database: string): string;
  psql(...commands: string[]): string;
  /** Stops the server if this call started it. */
  stop(): void;
}

function pgBin(): string {
  const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort() : [];
  const v = versions.at(-1);
  if (!v) throw new Error('PostgreSQL server binaries not found (apt-get install postgresql)');
  return `/usr/lib/postgresql/${v}/bin`;
}

/** A PostgreSQL in BENCH_HOME/pg on BENCH_PG_PORT (55533), run as the `postgres` user (it refuses root); initdb once. */
export function startPostgres(): Postgres {
  mkdirSync(BENCH_HOME, { recursive: true });
  chmodSync(BENCH_HOME, 0o777);
  const bin = pgBin();
  const asPostgres = (cmd: string) => execFileSync('su', ['postgres', '-c', cmd], { stdio: 'pipe' }).toString();
  const pgData = join(BENCH_HOME, 'pg');
  if (!existsSync(join(pgData, 'PG_VERSION'))) {
    mkdirSync(pgData, { recursive: true });
    execFileSync('chown', ['postgres:postgres', pgData]);
    asPostgres(`${bin}/initdb -D ${pgData} -A trust -U postgres`);
  }
  let started = false;
  if (spawnSync('su', ['postgres', '-c', `${bin}/pg_isready -h 127.0.0.1 -p ${PG_PORT}`]).status !== 0) {
    asPostgres(`${bin}/pg_ctl -D ${pgData} -o '-p ${PG_PORT} -k ${pgData} -c fsync=off' -l ${pgData}/log.txt -w start`);
    started = true;
  }
  return {
    port: PG_PORT,
    url: (database) => `postgres://postgres@127.0.0.1:${PG_PORT}/${database}`,
    psql: (...commands) => asPostgres(`psql -h 127.0.0.1 -p ${PG_PORT} -U postgres ${commands.map((c) => `-c '${c}'`).join(' ')}`),
    stop() { if (started) spawnSync('su', ['postgres', '-c', `${bin}/pg_ctl -D ${pgData} -m fast stop`]); },
  };
}
