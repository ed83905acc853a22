/**
 * Reads while a backfill meets v1 faults, in one process: the simulator (4 teams of 2 500 renders, or the scale SCALE; on a loopback port) failing 20 %
 * of its answers with a 500 and resetting 5 % of its connections, every answer LATENCY (20) ms late, a gateway over it (SQLite) whose first read starts
 * the backfills, then whole-scope and narrow reads one after another for a few seconds. Printed per setting of
 * V1_RETRY_BUDGET_PER_READ: reads, 503s, the longest run of consecutive 503s (in reads and in ms), how many were
 * answered from the replica (whole or partial) and live, and whether the backfills finished.
 * Run: npx tsx bench/faulty-backfill.bench.ts [seconds=8]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.js';
import { hashPassword } from '../src/auth/passwords.js';
import { loadConfig } from '../src/config/schema.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/log/logger.js';
import { SCALES, type Scale } from '../src/sim/generator.js';
import { createSimulator } from '../src/sim/server.js';
import { DEFAULT_ROLE } from '../src/store/users.js';

const seconds = Number(process.argv[2] ?? 8);
// 4 teams of 25 projects of 100 renders: a whole-scope live read is about 200 v1 calls (the "200-call live walk")
(SCALES as Record<string, Scale>).faulty = { teams: 4, projectsPerTeam: 25, templatesPerProject: 1, rendersPerProject: 100, people: 5 };
const log = (s: string) => process.stderr.write(`${s}\n`);

async function run(spares: string): Promise<void> {
  const sim = createSimulator({ seed: 1, scale: (process.env.SCALE ?? 'faulty') as keyof typeof SCALES, clock: 'manual' });
  const url = await sim.listen(0);
  const dir = mkdtempSync(join(tmpdir(), 'faulty-backfill-'));
  const config = loadConfig({
    ENCRYPTION_KEY: '11'.repeat(32), JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0', GATEWAY_ADMIN_TOKEN: 'bench-operator-token-0123456789',
    V1_BASE_URL: url, DATABASE_URL: join(dir, 'gateway.db'), LOG_LEVEL: 'silent', V1_RETRY_BUDGET_PER_READ: spares, LOGIN_STALL_MS: '0', INDEX_SYNC_CONCURRENCY: '1',
  });
  const deps = await createDeps(config, createLogger('silent'));
  const app = await buildApp(deps);
  await app.ready();
  const person = sim.world.listKeys()[0]!;
  const u = await deps.users.create({ email: 'ann@example.com', passwordHash: await hashPassword('pw-pw-pw-pw'), firstName: 'A', lastName: 'B',
    role: DEFAULT_ROLE, v1Key: person.api_key, v1UserId: person.user_id });
  await deps.idMap.importPairs([{ type: 'user', uuid: u.id, v1Id: person.user_id }]);
  await deps.ids.load();
  const login = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'ann@example.com', password: 'pw-pw-pw-pw' } });
  const token = login.json().data.access_token as string;
  // every answer LATENCY (20) ms late (the backfill spans the measurement)
  sim.faults.set({ latency_ms: Number(process.env.LATENCY ?? 20), rules: [{ kind: 'error500', rate: 0.2 }, { kind: 'reset', rate: 0.0625 }] });
  const project = [...sim.world.projects.values()].find((p) => p.teamId === person.teams[0]!.id)!;
  const { derivedUuid } = await import('../src/translate/ids.js');
  const reads = [
    '/renders?aggregate[count]=*&groupBy[]=status',
    '/renders?meta=filter_count&filter[status][_eq]=complete&limit=5',
    '/renders?sort=title&limit=10',
    `/renders?filter[project][_eq]=${derivedUuid('project', project.id)}&limit=10`,
  ];
  const out = { reads: 0, s503: 0, other: 0, index: 0, partial: 0, live: 0, runReads: 0, runMs: 0 };
  let run = 0;
  let runStart = 0;
  const end = performance.now() + seconds * 1000;
  for (let i = 0; performance.now() < end; i++) {
    const r = await app.inject({ method: 'GET', url: reads[i % reads.length]!, headers: { authorization: `Bearer ${token}` } });
    out.reads++;
    if (r.statusCode === 503) {
      out.s503++;
      if (process.env.VERBOSE) log(`503 ${reads[i % reads.length]}: ${r.body.slice(0, 300)}`);
      if (run === 0) runStart = performance.now();
      run++;
      out.runReads = Math.max(out.runReads, run);
      out.runMs = Math.max(out.runMs, performance.now() - runStart);
      continue;
    }
    run = 0;
    if (r.statusCode !== 200) { out.other++; continue; }
    if (r.headers['x-gateway-source'] === 'live') out.live++;
    else if (r.headers['x-gateway-partial']) out.partial++;
    else out.index++;
  }
  const states = (await deps.replica!.status()).map((t) => t.state);
  log(`V1_RETRY_BUDGET_PER_READ=${spares}: ${JSON.stringify(out)}; teams ${states.join(',')}`);
  await app.close();
  await deps.close();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
}

for (const spares of (process.env.SPARES ?? '0,20').split(',')) await run(spares);
