/**
 * Bytes a render costs in an SQLite store, measured with the store's own code: the simulator's `bench` world (100 000
 * renders, v1 objects as the simulator serves them, signed output URLs included) written through ReplicaStore, then the
 * rows the rest of the gateway keeps per render (an id pair, the webhook ledger's newest state, a delivery), each step's
 * growth of the store after a checkpoint (SQLite: the file; PostgreSQL: pg_database_size), and how many statements a
 * second the store commits: batched, one at a time, and from 8 connections at once. One process, a few minutes; inputs
 * of bench/scale-costs.json.
 * usage: tsc -p tsconfig.bench.json && node dist/bench/scale-store-bytes.js
 *        (BENCH_STORE_SCALE=bench|demo|million; BENCH_STORE_URL=postgres://… a database to fill, else a temporary SQLite file)
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDb } from '../src/store/db.js';
import { migrate } from '../src/store/migrations.js';
import { ReplicaStore } from '../src/store/replica-store.js';
import { IdMapStore } from '../src/store/idmap.js';
import { WebhookLedger } from '../src/store/webhook-events.js';
import { SimClock } from '../src/sim/clock.js';
import { SCALES } from '../src/sim/generator.js';
import { World } from '../src/sim/world.js';
import { uuidV5 } from '../src/lib/uuid.js';
import type { V1Render } from '../src/v1/schemas.js';

const scaleName = process.env.BENCH_STORE_SCALE ?? 'bench';
const scale = SCALES[scaleName];
if (!scale) throw new Error(`unknown scale ${scaleName}`);
const dir = mkdtempSync(join(tmpdir(), 'scale-store-'));
const file = join(dir, 'store.db');
const db = await openDb(process.env.BENCH_STORE_URL ?? file);
await migrate(db.kysely);
const size = async (): Promise<number> => {
  if (db.dialect === 'postgres') {
    await sql`checkpoint`.execute(db.kysely);
    return Number((await sql<{ n: string }>`select pg_database_size(current_database()) as n`.execute(db.kysely)).rows[0]!.n);
  }
  await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db.kysely);
  return statSync(file).size;
};

const world = new World(new SimClock('manual'), 1, scale);
const byTeam = new Map<string, V1Render[]>();
for (const r of world.renders.values()) {
  const v = world.renderView(r);
  let list = byTeam.get(v.project.team);
  if (!list) byTeam.set(v.project.team, (list = []));
  list.push(v);
}
const renders = [...byTeam.values()].reduce((n, l) => n + l.length, 0);
const jsonBytes = [...byTeam.values()].flat().reduce((n, r) => n + Buffer.byteLength(JSON.stringify(r)), 0);

const start = await size();
const index = new ReplicaStore(db.kysely);
for (const p of world.projects.values()) await index.putProjects(p.teamId, [world.projectView(p)]);
const projects = await size();
let t0 = performance.now();
for (const [team, list] of byTeam) await index.putRenders(team, list);
const batchedMs = performance.now() - t0;
const rows = await size();

const ids = new IdMapStore(db.kysely);
const NS = '6f1c8d2e-4b3a-5c7d-8e9f-0a1b2c3d4e5f';
const all = [...byTeam.values()].flat();
await ids.remember(all.map((r) => ({ type: 'render', uuid: uuidV5(r.id, NS), v1Id: r.id, source: 'derived' as const })));
const idPairs = await size();

const ledger = new WebhookLedger(db.kysely);
t0 = performance.now();
for (const r of all) await ledger.newer(r.id, (r.updated_at ?? r.created_at) * 1000, 5);
const singleMs = performance.now() - t0;
const versions = await size();
const deliveries = Math.min(all.length, 50_000);
for (let i = 0; i < deliveries; i++) await ledger.firstDelivery(`hook_${String(i).padStart(24, '0')}`, all[i]!.project.team);
const hooks = await size();
// one render rewritten at a time, as a webhook delivery or a re-poll writes it (upsert of a row the store holds)
const one = all.slice(0, 20_000).map((r) => ({ ...r, updated_at: (r.updated_at ?? r.created_at) + 1 }));
t0 = performance.now();
for (const r of one) await index.putRenders(r.project.team, [r]);
const rewriteMs = performance.now() - t0;
// the same from 8 connections at once (PostgreSQL's pool; SQLite's one connection takes them in turn)
const again = all.slice(20_000, 40_000).map((r) => ({ ...r, updated_at: (r.updated_at ?? r.created_at) + 1 }));
let next = 0;
t0 = performance.now();
await Promise.all(Array.from({ length: 8 }, async () => {
  while (next < again.length) {
    const r = again[next++]!;
    await index.putRenders(r.project.team, [r]);
  }
}));
const parallelMs = performance.now() - t0;

const out = {
  scale: scaleName,
  renders,
  projects: world.projects.size,
  v1JsonBytesPerRender: Math.round(jsonBytes / renders),
  bytesPerRenderRow: Math.round((rows - projects) / renders),
  bytesPerIdPair: Math.round((idPairs - rows) / renders),
  bytesPerRenderVersion: Math.round((versions - idPairs) / renders),
  bytesPerWebhookDelivery: Math.round((hooks - versions) / deliveries),
  bytesPerProjectRow: Math.round((projects - start) / world.projects.size),
  fileBytes: hooks,
  // statements a second on this machine, one connection, autocommit (WAL)
  rendersPerSecBatched: Math.round(renders / (batchedMs / 1000)),
  singleUpsertsPerSec: Math.round(all.length / (singleMs / 1000)),
  renderRewritesPerSec: Math.round(one.length / (rewriteMs / 1000)),
  renderRewritesPerSec8: Math.round(again.length / (parallelMs / 1000)),
  store: db.dialect,
};
process.stdout.write(`${JSON.stringify(out)}\n`);
await db.close();
rmSync(dir, { recursive: true, force: true });
