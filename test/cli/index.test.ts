import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { loadConfig } from '../../src/config/schema.js';
import { createDeps } from '../../src/deps.js';
import { createLogger } from '../../src/log/logger.js';
import { startSim, type RunningSim } from '../helpers/sim.js';
import { TEST_ENV } from '../helpers/gateway.js';

/** `legacy-gateway index sync | verify | status`, the compiled bin against a real simulator and SQLite store. */
const dir = mkdtempSync(join(tmpdir(), 'gw-cli-index-'));
let sim: RunningSim;
let env: Record<string, string>;

beforeAll(async () => {
  sim = await startSim();
  env = { ...(process.env as Record<string, string>), ...TEST_ENV, V1_BASE_URL: sim.url, DATABASE_URL: join(dir, 'gateway.db'), LOG_LEVEL: 'silent' };
  const deps = await createDeps(loadConfig(env), createLogger('silent'));
  const p = sim.keys[0]!;
  await deps.users.create({ email: 'ops@example.com', passwordHash: null, role: 'r', v1Key: p.api_key, v1UserId: p.user_id });
  await deps.close();
});
afterAll(async () => sim.sim.close());

const run = (args: string[]) => runBin(args, env);

describe('legacy-gateway index', () => {
  it('sync backfills every team a bound key reaches; verify finds no drift, then the drift v1 makes, until the next sync', async () => {
    const teams = sim.keys[0]!.teams.map((t) => t.id);
    const synced = await run(['index', 'sync']);
    expect(synced.code, synced.stderr).toBe(0);
    for (const t of teams) {
      const renders = [...sim.sim.world.renders.values()].filter((r) => r.teamId === t).length;
      expect(synced.stdout).toContain(`${t}: ready, ${renders} renders`);
    }
    const clean = await run(['index', 'verify']);
    expect(clean.code, clean.stdout + clean.stderr).toBe(0);
    for (const t of teams) expect(clean.stdout).toContain(`${t}: no drift`);
    // a render made directly in v1, and a project made in its dashboard
    const person = sim.sim.world.authenticate(`Bearer ${sim.keys[0]!.api_key}`);
    const project = [...sim.sim.world.projects.values()].find((p) => p.teamId === teams[0])!;
    const made = sim.sim.world.createRender(person, { project_id: project.id, name: 'behind the index' });
    const extra = sim.sim.world.addProject(teams[0]!, 'New in the dashboard');
    const drift = await run(['index', 'verify', '--team', teams[0]!]);
    expect(drift.code).toBe(1);
    expect(drift.stdout).toContain(`missing render  ${made.id}`);
    expect(drift.stdout).toContain(`missing project  ${extra.id}`);
    expect((await run(['index', 'sync', '--team', teams[0]!])).code).toBe(0);
    const again = await run(['index', 'verify', '--team', teams[0]!]);
    expect(again.code, again.stdout).toBe(0);
    const status = await run(['index', 'status']);
    expect(status.code).toBe(0);
    for (const t of teams) expect(status.stdout).toMatch(new RegExp(`${t}\\s+ready`));
  });

  it('verify names the field that differs, with the index\'s value and v1\'s; --repair writes v1\'s truth over a poisoned store', async () => {
    const teams = sim.keys[0]!.teams.map((t) => t.id);
    expect((await run(['index', 'sync', '--team', teams[0]!, '--team', teams[1]!])).code).toBe(0);
    // a store poisoned as a forged webhook could before ownership was checked: a render of team 1 moved into team 0's
    // copy under a project of team 0, renamed, with a far-future updated_at; and a render of team 0 whose status lags
    const all = [...sim.sim.world.renders.values()];
    const victim = sim.sim.world.renderView(all.find((r) => r.teamId === teams[1])!);
    const lagging = sim.sim.world.renderView(all.find((r) => r.teamId === teams[0] && r.status === 'complete')!);
    const home = all.find((r) => r.teamId === teams[0])!;
    const deps = await createDeps(loadConfig(env), createLogger('silent'));
    try {
      const moved = JSON.stringify({ ...victim, name: 'poisoned', project: { id: home.projectId, team: teams[0] }, updated_at: 4_102_444_800 });
      await sql`update index_renders set team_id = ${teams[0]}, project_id = ${home.projectId}, updated_at = ${4_102_444_800}, render = ${moved}
        where render_id = ${victim.id}`.execute(deps.db.kysely);
      await sql`update index_renders set render = ${JSON.stringify({ ...lagging, status: 'processing' })} where render_id = ${lagging.id}`.execute(deps.db.kysely);
    } finally {
      await deps.close();
    }
    const drift = await run(['index', 'verify', '--team', teams[0]!, '--team', teams[1]!]);
    expect(drift.code).toBe(1);
    expect(drift.stdout).toContain(`render differs  ${lagging.id}  status: index "processing", v1 "complete"`);
    expect(drift.stdout).toContain(`${teams[0]}  extra render  ${victim.id}`);
    expect(drift.stdout).toContain(`${teams[1]}  missing render  ${victim.id}`);
    const repaired = await run(['index', 'verify', '--team', teams[0]!, '--team', teams[1]!, '--repair']);
    expect(repaired.code, repaired.stdout + repaired.stderr).toBe(0);
    expect(repaired.stdout).toContain('repaired: 2 renders written from v1, 0 removed');
    const clean = await run(['index', 'verify', '--team', teams[0]!, '--team', teams[1]!]);
    expect(clean.code, clean.stdout).toBe(0);
  });
});
