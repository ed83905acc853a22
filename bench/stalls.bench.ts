/**
 * node dist/bench/stalls.bench.js (after `tsc -p tsconfig.bench.json`) — the longest event-loop stall of the replica's
 * heavy operations, in process, on one team of the simulator's world (BENCH_RENDERS, 100 000 renders) kept in an SQLite
 * store: a team read whole from the store (TeamRegistry.load), the first question in a new sorted order (sort=title:
 * the order sorted once), a `limit=-1` answer written whole (every item serialised), and a sync page of 100 changed
 * renders applied while the team keeps sorted orders. Each is measured by perf_hooks.monitorEventLoopDelay (1 ms
 * resolution; its max) and by a 1 ms interval's longest gap, the larger reported. Run with --expose-gc to collect
 * garbage before each (a collection left over from the last one is not counted against the next).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pino from 'pino';
import { bodyJson } from '../src/lib/item-bytes.js';
import { execute } from '../src/exec/execute.js';
import { jsonArrayEnvelope } from '../src/http/json-stream.js';
import { planQuery } from '../src/plan/plan.js';
import { unlimited } from '../src/query/budget.js';
import { parseQuery } from '../src/query/parse-query.js';
import type { ResourceSchema } from '../src/query/schema.js';
import type { RecordInputs } from '../src/replica/holding/record-inputs.js';
import { TeamRegistry } from '../src/replica/holding/registry.js';
import { openDb } from '../src/store/db.js';
import { migrate } from '../src/store/migrations.js';
import { ReplicaStore } from '../src/store/replica-store.js';
import { TeamSync } from '../src/replica/sync/sync.js';
import { systemClock } from '../src/lib/clock.js';
import { ReplicaSource } from '../src/exec/replica-source.js';
import { ReplicaSnapshot } from '../src/replica/reads/snapshot.js';
import { builderOf, mappings, simWorld } from './sim-team.js';

const N = Number(process.env.BENCH_RENDERS ?? 100_000);
const schemas = mappings.schemas;
const { team, projects, v1 } = simWorld(N);
const builder = builderOf();
const dir = mkdtempSync(join(tmpdir(), 'bench-stalls-'));
const db = await openDb(join(dir, 'store.db'));
await migrate(db.kysely);
const store = new ReplicaStore(db.kysely, () => Date.now());
const teamId = team.id;
await store.putTeam(team, []);
await store.putProjects(teamId, projects);
for (let i = 0; i < v1.length; i += 2000) await store.putRenders(teamId, v1.slice(i, i + 2000), 1);
await store.markBackfilled(teamId, 1);
const inputs = { builder, version: '0' } as unknown as RecordInputs;
const logger = pino({ level: 'silent' });

/**
 * The operation's longest stall, ms (monitorEventLoopDelay's max, or a 1 ms interval's longest gap), and the most CPU
 * time the process spent between two ticks of that interval (on a machine shared with other work the wall-clock stall
 * also counts the time the process waited for a core; the CPU time is what it did meanwhile).
 */
async function stall<T>(run: () => Promise<T>): Promise<{ ms: number; cpu: number; took: number; value: T }> {
  (globalThis as { gc?: () => void }).gc?.();
  await new Promise((r) => setTimeout(r, 20));
  const h = monitorEventLoopDelay({ resolution: 1 });
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  let gap = 0;
  let cpu = 0;
  const tick = () => {
    const now = performance.now();
    const used = process.cpuUsage(lastCpu);
    gap = Math.max(gap, now - last);
    cpu = Math.max(cpu, (used.user + used.system) / 1000);
    last = now;
    lastCpu = process.cpuUsage();
  };
  const probe = setInterval(tick, 1);
  h.enable();
  const t0 = performance.now();
  const value = await run();
  const took = performance.now() - t0;
  tick();
  clearInterval(probe);
  h.disable();
  return { ms: Math.max(gap, h.max / 1e6), cpu, took, value };
}

const rows: string[] = [];
const report = (name: string, x: { ms: number; cpu: number; took: number }) =>
  rows.push(`| ${name} | ${x.took.toFixed(0)} ms | **${x.ms.toFixed(0)} ms** | ${x.cpu.toFixed(0)} ms |`);

const loaded = await stall(() => new TeamRegistry({ store, clock: systemClock, inputs, eviction: { maxBytes: 1e12, busy: () => false, logger } }).load(teamId));
report(`team read whole from the store (${N.toLocaleString('en')} renders)`, loaded);
const t = loaded.value!;
const source = new ReplicaSource(new ReplicaSnapshot([t], 25), { refresh: async () => {}, answered: () => {}, flush: async () => {}, data: async () => new Map(), dataSizes: async () => new Map(), now: 10 });
const ctx = { schemas, dynamic: { now: new Date(), userId: 'u', roleId: 'r', user: { id: 'u' } }, limitDefault: 100 };
const ask = (raw: Record<string, unknown>) => {
  const q = parseQuery(raw, schemas.render as ResourceSchema, ctx);
  return execute('render', q, planQuery(q, 'render', { statusToV1: mappings.status.toV1, schemas }), source, { schemas, budget: unlimited() });
};
report('first newest-first list (the newest-first order built)', await stall(() => ask({ limit: '20' })));
report('first sort=title&limit=20 (the title order sorted)', await stall(() => ask({ sort: 'title', limit: '20' })));
report('first filter + meta=filter_count (the date order sorted)', await stall(async () => bodyJson(await ask({ filter: '{"status":{"_eq":"complete"}}', meta: 'filter_count' }))));
report('limit=-1 written whole', await stall(async () => {
  const res = await ask({ limit: '-1' });
  let bytes = 0;
  for await (const b of jsonArrayEnvelope(res.stream!, logger)) bytes += b.length;
  return bytes;
}));
const sync = new TeamSync({ store, clock: systemClock, logger, concurrency: 4, signedUrlTtlMs: 300_000 });
const page = v1.slice(0, 100).map((r, i) => ({ ...r, name: `${r.name} (renamed)`, updated_at: (r.updated_at ?? r.created_at) + 1000 + i }));
report('a sync page of 100 changed renders applied (3 sorted orders kept)', await stall(() => sync.put(t, page, { renders: [] } as never)));

process.stdout.write(`| operation | took | longest stall | most CPU between two ticks |\n|---|---|---|---|\n${rows.join('\n')}\n`);
process.stdout.write(`Node ${process.version}, one process, SQLite store.\n`);
await db.close();
rmSync(dir, { recursive: true, force: true });
