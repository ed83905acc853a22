/**
 * After a restart, how long the first reads wait for the teams of a key's reach to be read from the store, in one
 * process: a store (SQLite file) filled with 10 backfilled teams of the simulator's world, then a new replica over it.
 * `source()` is asked for a single-project read of the last team (the key's reach given by a stand-in session: no v1),
 * timed, with INDEX_LOAD_WAIT_MS as configured; then the time until every load is done (at once), and, on another fresh
 * replica, the ten loads one after another — what a first read waited for before the loads ran at once. The longest
 * stall of the event loop during the first read is printed too (the store's SQLite driver answers synchronously, so a
 * load's parse and apply hold the loop until it yields).
 * Run: npx tsx bench/restart-reads.bench.ts [rendersPerTeam=5000] (KEEP=1 keeps the store file and prints its path)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/schema.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/log/logger.js';
import { SimClock } from '../src/sim/clock.js';
import { World } from '../src/sim/world.js';
import { openDb } from '../src/store/db.js';
import { migrate } from '../src/store/migrations.js';
import { ReplicaStore } from '../src/store/replica-store.js';
import { derivedUuid } from '../src/translate/ids.js';
import type { V1Session } from '../src/v1/client.js';
import type { V1Team } from '../src/v1/schemas.js';

const perTeam = Number(process.argv[2] ?? 5000);
const TEAMS = 10;
const PROJECTS = 20;
const dir = mkdtempSync(join(tmpdir(), 'restart-reads-'));
const url = join(dir, 'gateway.db');
const log = (s: string) => process.stderr.write(`${s}\n`);

const clock = new SimClock('manual', 1_750_000_000_000);
const world = new World(clock, 1, { teams: TEAMS, projectsPerTeam: PROJECTS, templatesPerProject: 1, rendersPerProject: Math.ceil(perTeam / PROJECTS), people: 4 });
const teams: V1Team[] = [...world.teams.values()].map((t) => ({ id: t.id, name: t.name, account_id: t.accountId, role: 'admin', created_at: Math.floor(t.createdAt / 1000) }));

// the store as a backfill leaves it
{
  const db = await openDb(url);
  await migrate(db.kysely);
  const store = new ReplicaStore(db.kysely, () => Date.now());
  for (const team of teams) {
    await store.putTeam(team, []);
    const projects = [...world.projects.values()].filter((p) => p.teamId === team.id).map((p) => world.projectView(p));
    await store.putProjects(team.id, projects);
    for (const p of projects) {
      await store.putTemplates(p.id, []);
      await store.putRenders(team.id, [...world.renders.values()].filter((r) => r.projectId === p.id).map((r) => world.renderView(r)), Date.now());
      await store.markProjectBackfilled(p.id);
    }
    await store.markBackfilled(team.id, Date.now());
    await store.markSynced(team.id, Date.now());
  }
  await db.close();
}
log(`store: ${TEAMS} teams, ${world.renders.size} renders`);

async function replica(wait: string) {
  const config = loadConfig({
    ENCRYPTION_KEY: '11'.repeat(32), JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0', GATEWAY_ADMIN_TOKEN: 'bench-operator-token-0123456789',
    V1_BASE_URL: 'http://127.0.0.1:9', DATABASE_URL: url, INDEX_LOAD_WAIT_MS: wait, INDEX_MAX_STALENESS_MS: '1h', LOG_LEVEL: 'silent',
  });
  return createDeps(config, createLogger('silent'));
}
const session = { partition: 'bench', teams: async () => ({ data: teams }) } as unknown as V1Session;
const last = teams[TEAMS - 1]!;
const project = [...world.projects.values()].find((p) => p.teamId === last.id)!;
const scope = { resource: 'render', ids: null, projects: [derivedUuid('project', project.id)], accounts: null, total: false, manyRelations: false };

for (const wait of ['250', '600000']) {
  const deps = await replica(wait);
  const index = deps.replica!;
  let gap = 0; let lastTick = performance.now();
  const iv = setInterval(() => { const n = performance.now(); gap = Math.max(gap, n - lastTick); lastTick = n; }, 1);
  let t = performance.now();
  const first = await index.source(session, Date.now(), scope);
  log(`  longest event-loop stall during the first read: ${gap.toFixed(0)} ms`);
  clearInterval(iv);
  const firstMs = performance.now() - t;
  const second = await index.source(session, Date.now(), scope);
  while (teams.some((x) => index.team(x.id) === undefined)) await new Promise((r) => setTimeout(r, 5));
  const allMs = performance.now() - t;
  t = performance.now();
  const after = await index.source(session, Date.now(), scope);
  log(`INDEX_LOAD_WAIT_MS=${wait}: first single-project read decided in ${firstMs.toFixed(0)} ms (${first.kind}${first.partial ? ', partial' : ''}),`
    + ` the next ${second.kind}${second.partial ? ' partial' : ''}; every team loaded ${allMs.toFixed(0)} ms after the first read;`
    + ` then ${after.kind}${after.partial ? ' partial' : ''} in ${(performance.now() - t).toFixed(1)} ms`);
  await deps.close();
}

{
  const deps = await replica('250');
  const t = performance.now();
  const each: number[] = [];
  for (const team of teams) {
    const s = performance.now();
    await deps.replica!.load(team.id);
    each.push(performance.now() - s);
  }
  log(`one after another (the first read's wait before): ${(performance.now() - t).toFixed(0)} ms (${each.map((x) => x.toFixed(0)).join(', ')})`);
  await deps.close();
}
if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true }); else log(url);
