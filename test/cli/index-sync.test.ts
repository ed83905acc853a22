import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { indexCommand } from '../../src/cli/index-command.js';
import { loadConfig } from '../../src/config/schema.js';
import { createDeps } from '../../src/deps.js';
import { createLogger } from '../../src/log/logger.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/** `legacy-gateway index sync` says which team it did not sync and why, in words that match the cause, and exits 1. */
const SECRETS = { ENCRYPTION_KEY: '11'.repeat(32), JWT_SECRET: 'test-secret-test-secret-test-secret-0123', GATEWAY_ADMIN_TOKEN: 'operator-token-0123456789' };
let sim: RunningSim;

beforeAll(async () => { sim = await startSim(); });
afterAll(async () => sim.sim.close());

/** A store with the given users: a bound simulator person (unless none), and optionally a user whose key v1 does not know. */
async function storeWith(o: { badKey?: boolean; nobody?: boolean }): Promise<Record<string, string>> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-cli-sync-'));
  const env = { ...(process.env as Record<string, string>), ...SECRETS, V1_BASE_URL: sim.url, DATABASE_URL: join(dir, 'gateway.db'), LOG_LEVEL: 'silent' };
  const deps = await createDeps(loadConfig(env), createLogger('silent'));
  const p = sim.keys[0]!;
  if (!o.nobody) await deps.users.create({ email: 'ops@example.com', passwordHash: null, role: 'r', v1Key: p.api_key, v1UserId: p.user_id });
  if (o.badKey) await deps.users.create({ email: 'gone@example.com', passwordHash: null, role: 'r', v1Key: `sk_${'Q'.repeat(32)}`, v1UserId: 'usr_gone' });
  await deps.close();
  return env;
}

const run = runBin;

describe('index sync when a team is not synced', { timeout: 90_000 }, () => {
  it('v1 unreachable: exit 1, "unreachable (ECONNREFUSED)", never "refused"', async () => {
    const env = { ...(await storeWith({})), V1_BASE_URL: 'http://127.0.0.1:9' };
    const r = await run(['index', 'sync'], env);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stderr).toContain('unreachable (ECONNREFUSED)');
    expect(r.stderr).toContain('http://127.0.0.1:9');
    expect(r.stderr).not.toMatch(/\brefused\b/i); // (ECONNREFUSED aside)
    expect(r.stderr).toContain('v1 at http://127.0.0.1:9 (V1_BASE_URL) is unreachable (ECONNREFUSED)');
    // the teams named: the same words, in one line, nothing synced
    const named = await run(['index', 'sync', '--team', sim.keys[0]!.teams[0]!.id], env);
    expect(named.code).toBe(1);
    expect(named.stderr).toBe('index sync --team: the teams the bound keys reach could not be listed: v1 at http://127.0.0.1:9 (V1_BASE_URL) ' +
      'is unreachable (ECONNREFUSED); nothing was synced\n');
  });

  it('a key v1 refuses (401): the teams it reaches are not synced, exit 1; the teams other keys reach are', async () => {
    const env = await storeWith({ badKey: true });
    const r = await run(['index', 'sync'], env);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stderr).toMatch(/v1 refused the key of gone@example\.com \(401\)/);
    expect(r.stderr).not.toMatch(/unreachable/);
    for (const t of sim.keys[0]!.teams) expect(r.stdout).toContain(`${t.id}: ready`);
  });

  it("demo mode with the demo not running: the demo's simulator named, and what to do", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-cli-sync-demo-'));
    const secrets = { ENCRYPTION_KEY: '33'.repeat(32), JWT_SECRET: 'd'.repeat(40), GATEWAY_ADMIN_TOKEN: 'demo-operator-token-0123' };
    writeFileSync(join(dir, 'demo-secrets.json'), JSON.stringify(secrets));
    const env: Record<string, string> = { ...(process.env as Record<string, string>), DATABASE_URL: join(dir, 'demo.db'), SIM_PORT: '9', LOG_LEVEL: 'silent' };
    for (const k of ['V1_BASE_URL', 'ENCRYPTION_KEY', 'JWT_SECRET', 'GATEWAY_ADMIN_TOKEN']) delete env[k];
    const deps = await createDeps(loadConfig({ ...secrets, DATABASE_URL: env.DATABASE_URL }), createLogger('silent'), { v1BaseUrl: 'http://127.0.0.1:9' });
    const p = sim.keys[0]!;
    await deps.users.create({ email: 'demo@example.com', passwordHash: null, role: 'r', v1Key: p.api_key, v1UserId: p.user_id });
    await deps.close();
    const r = await run(['index', 'sync'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("v1 at http://127.0.0.1:9 (V1_BASE_URL is unset: the demo's simulator, SIM_PORT=9) is unreachable (ECONNREFUSED) " +
      '— start the demo first (npm start), or set V1_BASE_URL or --v1');
  });

  it('no bound user: says there is nothing to sync and how to add users, exit 0', async () => {
    const r = await run(['index', 'sync'], await storeWith({ nobody: true }));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('nothing to sync: no active user has a v1 key (legacy-gateway users add, users import, users rebind)\n');
  });

  it('every team synced: exit 0', async () => {
    const r = await run(['index', 'sync'], await storeWith({}));
    expect(r.code, r.stderr).toBe(0);
  });
});

/** A tick at every turn of the event loop while the work runs (no sleep, no timer of a guessed length), a second a tick. */
function everyTurn(clock: { now: number }) {
  return (tick: () => void) => {
    let on = true;
    const again = () => { if (!on) return; clock.now += 1000; tick(); setImmediate(again); };
    setImmediate(again);
    return () => { on = false; };
  };
}

describe('index sync progress', { timeout: 90_000 }, () => {
  it('index verify --repair: the teams compared, then the extra renders looked up on v1', async () => {
    const env = await storeWith({});
    const [first, second, third] = sim.keys[0]!.teams.map((t) => t.id);
    const teams = [first!, second!];
    const deps = await createDeps(loadConfig(env), createLogger('silent'));
    const lines: string[] = [];
    const clock = { now: 0 };
    const quiet = process.stdout.write.bind(process.stdout);
    (process.stdout as { write: unknown }).write = () => true;
    try {
      expect(await indexCommand(deps, 'sync', [...teams, third!], false)).toBe(0);
      // a render of a third team (not verified) moved into the first team's copy: an extra render there, looked up on v1
      const all = [...sim.sim.world.renders.values()];
      const victim = all.find((r) => r.teamId === third)!;
      const home = all.find((r) => r.teamId === teams[0])!;
      await sql`update index_renders set team_id = ${teams[0]}, project_id = ${home.projectId} where render_id = ${victim.id}`.execute(deps.db.kysely);
      const code = await indexCommand(deps, 'verify', teams, true, { progress: { sink: { write: (s: string) => lines.push(s) }, now: () => clock.now, schedule: everyTurn(clock) } });
      expect(code).toBe(0);
    } finally {
      (process.stdout as { write: unknown }).write = quiet;
      await deps.close();
    }
    expect(lines.some((l) => /^index verify: comparing with v1 [01]\/2 teams, .*\d+ differences so far \(team_\w+\)\n$/.test(l))).toBe(true);
    expect(lines.some((l) => /^index verify: repairing: extra renders looked up [01]\/1 renders, /.test(l))).toBe(true);
  });

  it('lines on stderr while it runs (ticked by the test, a manual clock): renders counted, their rate, the teams left', async () => {
    const env = await storeWith({});
    const deps = await createDeps(loadConfig(env), createLogger('silent'));
    const lines: string[] = [];
    let now = 0;
    let ticks = 0;
    try {
      // a tick at every turn of the event loop while the sync runs (no sleep, no timer of a guessed length)
      const schedule = (tick: () => void) => {
        let on = true;
        const again = () => { if (!on) return; ticks++; now += 1000; tick(); setImmediate(again); };
        setImmediate(again);
        return () => { on = false; };
      };
      const code = await indexCommand(deps, 'sync', undefined, false, { progress: { sink: { write: (s: string) => lines.push(s) }, now: () => now, schedule } });
      expect(code).toBe(0);
    } finally {
      await deps.close();
    }
    const teams = sim.keys[0]!.teams.length;
    expect(ticks).toBeGreaterThan(0);
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(l).toMatch(/^index sync: [\d ]+ renders, (?:[\d .]+ renders\/s, )?team \d+ of \d+ \(team_\w+\), \d+ teams? left\n$/);
    expect(lines.some((l) => l.includes(`team 1 of ${teams}`))).toBe(true);
    expect(lines.some((l) => / (?:[1-9][\d ]*|\d\.\d*[1-9]\d*) renders\/s/.test(l))).toBe(true);
  });
});
