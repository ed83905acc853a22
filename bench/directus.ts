/**
 * A real Directus 10.10 on a local PostgreSQL 15, both on loopback, for benchmarks that compare the gateway with the
 * engine the legacy service was built on: same data (read from the gateway), same legacy query. Installs Directus
 * once into a cache folder (~3 min), runs PostgreSQL as the `postgres` user (it refuses root) in a folder of its own.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_HOME as HOME, startPostgres } from './support.js';

export interface Directus {
  readonly base: string;
  readonly token: string;
  stop(): Promise<void>;
}

const DX_PORT = Number(process.env.BENCH_DX_PORT ?? 8156);

async function waitFor(url: string, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await fetch(url).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${url} did not answer within ${ms} ms`);
}

/** Installs (once), starts PostgreSQL and Directus, and logs in as the admin. */
export async function startDirectus(log: (s: string) => void): Promise<Directus> {
  const pg = startPostgres();
  pg.psql('drop database if exists bench_directus', 'create database bench_directus');
  const app = join(HOME, 'app');
  mkdirSync(app, { recursive: true });
  if (!existsSync(join(app, 'node_modules', 'directus'))) {
    log('installing Directus 10.10.0 (once, ~3 min)…');
    writeFileSync(join(app, 'package.json'), '{"name":"bench-directus","private":true}');
    execFileSync('npm', ['install', '--no-audit', '--no-fund', 'directus@10.10.0'], { cwd: app, stdio: 'ignore' });
  }
  const env = {
    ...process.env, HOST: '127.0.0.1', PORT: String(DX_PORT), PUBLIC_URL: `http://127.0.0.1:${DX_PORT}`, DB_CLIENT: 'pg', DB_HOST: '127.0.0.1',
    DB_PORT: String(pg.port), DB_DATABASE: 'bench_directus', DB_USER: 'postgres', DB_PASSWORD: '', KEY: '0b7e2f0c-1111-4a8a-9c6f-aaaaaaaaaaaa',
    SECRET: 'bench-directus-secret-0123456789abcdef', ADMIN_EMAIL: 'admin@example.com', ADMIN_PASSWORD: 'bench-admin-pass', TELEMETRY: 'false',
    CACHE_ENABLED: 'false', RATE_LIMITER_ENABLED: 'false', LOG_LEVEL: 'warn', MAX_PAYLOAD_SIZE: '50mb', NODE_ENV: 'production',
  };
  execFileSync('npx', ['directus', 'bootstrap'], { cwd: app, env, stdio: 'ignore' });
  const proc: ChildProcess = spawn('npx', ['directus', 'start'], { cwd: app, env, stdio: 'ignore', detached: true });
  const base = `http://127.0.0.1:${DX_PORT}`;
  await waitFor(`${base}/server/ping`, 120_000);
  const login = (await (await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'admin@example.com', password: 'bench-admin-pass' }) })).json()) as { data: { access_token: string } };
  return {
    base,
    token: login.data.access_token,
    async stop() {
      try { process.kill(-(proc.pid as number), 'SIGTERM'); } catch { /* gone */ }
      pg.stop();
    },
  };
}

/** Directus field types of each legacy field (the gateway's own view: mappings/resources.json). */
const FIELDS: Record<string, Record<string, string>> = {
  accounts: { name: 'text', owner: 'uuid', status: 'string', render_credits: 'json', subscriptions: 'json' },
  projects: { user_created: 'uuid', date_created: 'timestamp', date_updated: 'timestamp', poster: 'text', title: 'text', account: 'uuid', status: 'string', template_reference: 'uuid' },
  renders: { user_created: 'uuid', date_created: 'timestamp', date_updated: 'timestamp', process_id: 'uuid', account: 'uuid', project: 'uuid', title: 'text', playback_id: 'string', download_ready: 'boolean', status: 'string', data: 'json', output: 'json' },
  templates: { date_created: 'timestamp', description: 'text', playback_id: 'string', poster: 'text', title: 'text', slug: 'string', status: 'string' },
};
/** many side, its field, one side, the one side's alias (o2m). */
const LINKS: [string, string, string, string][] = [['projects', 'account', 'accounts', 'projects'], ['renders', 'project', 'projects', 'renders'], ['renders', 'account', 'accounts', 'renders']];

/** Creates the legacy collections in Directus and loads what the gateway answers for them. */
export async function loadLegacyData(dx: Directus, gateway: { base: string; token: string }): Promise<Record<string, number>> {
  const call = async (base: string, token: string, method: string, path: string, body?: unknown) => {
    const r = await fetch(base + path, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
    const text = await r.text();
    if (r.status >= 300 && method !== 'DELETE') throw new Error(`${method} ${path}: ${r.status} ${text.slice(0, 300)}`);
    return text ? (JSON.parse(text) as { data: Record<string, unknown>[] }) : undefined;
  };
  const counts: Record<string, number> = {};
  const rows: Record<string, Record<string, unknown>[]> = {};
  for (const c of Object.keys(FIELDS)) rows[c] = (await call(gateway.base, gateway.token, 'GET', `/${c}?limit=-1`))!.data;
  for (const [c, fields] of Object.entries(FIELDS)) {
    await call(dx.base, dx.token, 'POST', '/collections', { collection: c, meta: {}, schema: {}, fields: [{ field: 'id', type: 'uuid', meta: { hidden: false }, schema: { is_primary_key: true } }] });
    for (const [f, type] of Object.entries(fields)) await call(dx.base, dx.token, 'POST', `/fields/${c}`, { field: f, type, meta: {}, schema: { is_nullable: true } });
  }
  for (const [many, field, one, alias] of LINKS) {
    await call(dx.base, dx.token, 'POST', `/fields/${one}`, { field: alias, type: 'alias', meta: { special: ['o2m'] } });
    await call(dx.base, dx.token, 'POST', '/relations', { collection: many, field, related_collection: one, meta: { one_field: alias }, schema: { on_delete: 'SET NULL' } });
  }
  for (const c of ['accounts', 'projects', 'renders', 'templates']) {
    const keep = ['id', ...Object.keys(FIELDS[c] as object)];
    const data = (rows[c] ?? []).map((x) => Object.fromEntries(keep.map((k) => [k, x[k] ?? null])));
    for (let i = 0; i < data.length; i += 500) await call(dx.base, dx.token, 'POST', `/items/${c}`, data.slice(i, i + 500));
    counts[c] = data.length;
  }
  return counts;
}
