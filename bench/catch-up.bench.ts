/**
 * What a lost change bus costs an instance holding teams, in one process on SQLite: two replicas (A and B) over one
 * store file filled with 10 backfilled teams of the simulator's world; B holds every team. A writes `changed` renders of
 * each team (a newer state each) without B hearing of it; B's poll sees the commits and catches up: the time until it is
 * done and the rows it read, beside what reading the 10 teams whole costs (a fresh replica loading them, as a resync did
 * before). Then the write cost of the change number: putRenders of every render into a store migrated without it
 * (0014) and with it (0015), inserted, then written again in a newer state.
 * Run: npx tsx bench/catch-up.bench.ts [rendersPerTeam=5000] [changedPerTeam=50]
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
import type { Database } from '../src/store/schema.js';
import { supersedesSql } from '../src/store/recency.js';
import { LIFECYCLE_RANK, type V1Render, type V1Team } from '../src/v1/schemas.js';
import { sql, type Kysely } from 'kysely';

const perTeam = Number(process.argv[2] ?? 5000);
const changed = Number(process.argv[3] ?? 50);
const TEAMS = 10;
const PROJECTS = 20;
const dir = mkdtempSync(join(tmpdir(), 'catch-up-'));
const url = join(dir, 'gateway.db');
const log = (s: string) => process.stderr.write(`${s}\n`);

const clock = new SimClock('manual', 1_750_000_000_000);
const world = new World(clock, 1, { teams: TEAMS, projectsPerTeam: PROJECTS, templatesPerProject: 1, rendersPerProject: Math.ceil(perTeam / PROJECTS), people: 4 });
const teams: V1Team[] = [...world.teams.values()].map((t) => ({ id: t.id, name: t.name, account_id: t.accountId, role: 'admin', created_at: Math.floor(t.createdAt / 1000) }));
const rendersOf = (teamId: string): V1Render[] => [...world.renders.values()].filter((r) => r.teamId === teamId).map((r) => world.renderView(r));

/** putRenders as it was before migration 0015 (the same statement without the change number). */
async function putRendersBefore(db: Kysely<Database>, teamId: string, renders: readonly V1Render[], seenAt: number): Promise<void> {
  for (let i = 0; i < renders.length; i += 100) {
    await db.insertInto('index_renders')
      .values(renders.slice(i, i + 100).map((r) => ({
        render_id: r.id, team_id: teamId, project_id: r.project.id, updated_at: r.updated_at ?? r.created_at, rank: LIFECYCLE_RANK[r.status], seen_at: seenAt,
        render: JSON.stringify(r),
      })))
      .onConflict((oc) => oc.column('render_id')
        .doUpdateSet({
          updated_at: sql<number>`excluded.updated_at`, rank: sql<number>`excluded.rank`, seen_at: sql<number>`excluded.seen_at`, render: sql<string>`excluded.render`,
        })
        .where(sql<boolean>`${sql.raw(supersedesSql('index_renders'))}
          and index_renders.team_id = excluded.team_id and index_renders.project_id = excluded.project_id`))
      .execute();
  }
}

/** CPU milliseconds of this process since `from` (SQLite runs in it: steadier than wall time on a busy machine). */
const cpuSince = (from: NodeJS.CpuUsage) => { const c = process.cpuUsage(from); return (c.user + c.system) / 1000; };

/**
 * Fills a store as a backfill leaves it; the time putRenders took (inserts), then writing every render again in a newer
 * state (updates): wall and CPU milliseconds.
 */
async function fill(path: string, target?: string): Promise<{ inserts: number; updates: number; insertsCpu: number; updatesCpu: number }> {
  const db = await openDb(path);
  await migrate(db.kysely, target);
  const store = new ReplicaStore(db.kysely, () => Date.now());
  let ms = 0;
  let insertsCpu = 0;
  for (const team of teams) {
    await store.putTeam(team, []);
    const projects = [...world.projects.values()].filter((p) => p.teamId === team.id).map((p) => world.projectView(p));
    await store.putProjects(team.id, projects);
    for (const p of projects) {
      await store.putTemplates(p.id, []);
      const renders = [...world.renders.values()].filter((r) => r.projectId === p.id).map((r) => world.renderView(r));
      const t = performance.now();
      const c = process.cpuUsage();
      if (target) await putRendersBefore(db.kysely, team.id, renders, Date.now());
      else await store.putRenders(team.id, renders, Date.now());
      ms += performance.now() - t;
      insertsCpu += cpuSince(c);
      await store.markProjectBackfilled(p.id);
    }
    await store.markBackfilled(team.id, Date.now());
    await store.markSynced(team.id, Date.now());
  }
  let updates = 0;
  let updatesCpu = 0;
  for (const team of teams) {
    const renders = rendersOf(team.id).map((r) => ({ ...r, updated_at: (r.updated_at ?? r.created_at) + 1 }));
    const t = performance.now();
    const c = process.cpuUsage();
    if (target) await putRendersBefore(db.kysely, team.id, renders, Date.now());
    else await store.putRenders(team.id, renders, Date.now());
    updates += performance.now() - t;
    updatesCpu += cpuSince(c);
  }
  await db.close();
  return { inserts: ms, updates, insertsCpu, updatesCpu };
}

async function replica() {
  const config = loadConfig({
    ENCRYPTION_KEY: '11'.repeat(32), JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0', GATEWAY_ADMIN_TOKEN: 'bench-operator-token-0123456789',
    V1_BASE_URL: 'http://127.0.0.1:9', DATABASE_URL: url, INDEX_MAX_STALENESS_MS: '1h', LOG_LEVEL: 'silent',
  });
  return createDeps(config, createLogger('silent'));
}

await fill(url);
log(`store: ${TEAMS} teams, ${world.renders.size} renders; ${changed} renders of each team changed by A`);

const a = await replica();
const b = await replica();
let t = performance.now();
for (const team of teams) await b.replica!.load(team.id);
log(`B reads the 10 teams whole (one after another): ${(performance.now() - t).toFixed(0)} ms`);
const held = teams.map((x) => b.replica!.team(x.id)!);

// A's writes B does not hear of
for (const team of teams) {
  const some = rendersOf(team.id).slice(0, changed).map((r) => ({ ...r, name: `${r.name} (changed)`, updated_at: (r.updated_at ?? r.created_at) + 60 }));
  await a.replica!.store.putRenders(team.id, some, Date.now());
}
const store = b.replica!.store;
let rows = 0;
const original = store.changesSince.bind(store);
store.changesSince = async (...args) => { const r = await original(...args); rows += r.rows; return r; };
t = performance.now();
await b.bus.sync();
await b.replica!.idle();
const catchUpMs = performance.now() - t;
const same = teams.every((x, i) => b.replica!.team(x.id) === held[i]);
const current = teams.every((x) => b.replica!.team(x.id)!.render(rendersOf(x.id)[0]!.id)!.render.name.endsWith('(changed)'));
log(`B catches up after the resync: ${catchUpMs.toFixed(0)} ms, ${rows} rows read (teams kept: ${same}, current: ${current})`);

// what a resync cost before: the teams read whole again
const c = await replica();
t = performance.now();
await Promise.all(teams.map((x) => c.replica!.load(x.id)));
log(`a replica reading the 10 teams whole (at once): ${(performance.now() - t).toFixed(0)} ms`);
await a.close();
await b.close();
await c.close();

// the write cost of the change number (SQLite)
for (let round = 0; round < 2; round++) {
  const before = await fill(join(dir, `w14-${round}.db`), '0014_index_sync_budget');
  const after = await fill(join(dir, `w15-${round}.db`));
  const f = (x: number, cpu: number) => `${x.toFixed(0)} ms (${cpu.toFixed(0)} ms CPU)`;
  log(`putRenders of ${world.renders.size} renders, inserted: ${f(before.inserts, before.insertsCpu)} without the change number (0014), `
    + `${f(after.inserts, after.insertsCpu)} with it`);
  log(`  written again in a newer state (updates): ${f(before.updates, before.updatesCpu)} without, ${f(after.updates, after.updatesCpu)} with it`);
}
rmSync(dir, { recursive: true, force: true });
