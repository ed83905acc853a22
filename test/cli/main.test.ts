import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, symlinkSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/schema.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { createLogger } from '../../src/log/logger.js';
import { startSim, type RunningSim } from '../helpers/sim.js';
import { TEST_ENV } from '../helpers/gateway.js';

/**
 * The compiled `legacy-gateway` bin (dist/, built by `npm test` before the suite), run as an operator runs it: through
 * its bin link, into pipes and files, with secrets from standard input or the environment.
 */
const BIN = resolve('dist/src/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'gw-cli-'));
let sim: RunningSim;
let env: Record<string, string>;
let deps: Deps;
const USERS = 3_000;
const PAIRS = 5_500;

beforeAll(async () => {
  sim = await startSim();
  env = { ...(process.env as Record<string, string>), ...TEST_ENV, V1_BASE_URL: sim.url, DATABASE_URL: join(dir, 'gateway.db'), LOG_LEVEL: 'silent' };
  deps = await createDeps(loadConfig(env), createLogger('silent'));
  for (let i = 0; i < USERS; i++) {
    await deps.users.create({ email: `user${i}@example.com`, passwordHash: null, role: 'r', v1Key: 'sk_x', v1UserId: `user_${i}`, status: 'unbound' });
  }
  await deps.idMap.importPairs(Array.from({ length: PAIRS }, (_, i) => ({ type: 'render', uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, v1Id: `rend_${i}` })));
  await deps.close();
  symlinkSync(BIN, join(dir, 'legacy-gateway'));
});
afterAll(async () => sim.sim.close());

interface Run { code: number | null; stdout: string; stderr: string }
/** Runs the bin link; stdout read slowly (a reader that pauses), as `| wc -l` behind a busy consumer would. */
function run(args: string[], o: { stdin?: string; extraEnv?: Record<string, string>; slow?: boolean } = {}): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(join(dir, 'legacy-gateway'), args, { env: { ...env, ...o.extraEnv }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (o.slow) { child.stdout.pause(); setTimeout(() => child.stdout.resume(), 2); }
    });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    child.stdin.end(o.stdin ?? '');
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

describe('the legacy-gateway bin', () => {
  it('prints every line to a slow pipe (users list)', async () => {
    const r = await run(['users', 'list'], { slow: true });
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(USERS);
    expect(r.stdout.endsWith('\n')).toBe(true);
  });

  it('writes a whole CSV into a file, with no banner (ids export > file)', async () => {
    const file = join(dir, 'pairs.csv');
    const fd = openSync(file, 'w');
    const code = await new Promise<number | null>((done) => {
      spawn(join(dir, 'legacy-gateway'), ['ids', 'export'], { env, stdio: ['ignore', fd, 'pipe'] }).on('close', done);
    });
    closeSync(fd);
    expect(code).toBe(0);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines[0]).toBe('legacy_id,v1_id,type,source');
    expect(lines.filter((l) => l.includes(',render,'))).toHaveLength(PAIRS);
    expect(lines.at(-1)).toMatch(/^[0-9a-f-]{36},\w+_\w+,\w+,(imported|derived)$/);
  });

  it('takes the password from standard input and the key from the environment (nothing secret in argv)', async () => {
    const r = await run(['users', 'add', '--email', 'stdin@example.com', '--password-stdin'], { stdin: 'a-long-password\n', extraEnv: { LEGACY_GATEWAY_KEY: sim.keys[0]!.api_key } });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`bound to v1 user ${sim.keys[0]!.user_id}`);
  });

  it('warns when the key\'s v1 person is bound to another user already (its records carry the first one\'s uuid)', async () => {
    const key = sim.keys[3]!;
    const one = await run(['users', 'add', '--email', 'once@example.com', '--password', 'a-long-password', '--key', key.api_key]);
    expect(one.code).toBe(0);
    expect(one.stdout).not.toContain('!');
    const two = await run(['users', 'add', '--email', 'twice@example.com', '--password', 'a-long-password', '--key', key.api_key]);
    expect(two.code).toBe(0);
    const first = /\(([0-9a-f-]{36})\)/.exec(one.stdout)?.[1];
    expect(first).toBeDefined();
    expect(two.stdout).toContain(`! v1 user ${key.user_id} is also bound to ${first}: that person's records carry ${first} as their creator`);
  });

  it('waits for a write lock the gateway holds for seconds (a first backfill) and adds the user whole (attack pass 17, L1)', async () => {
    // (it said "database is locked" after 5 s although the user was made: the id pair, written next, met the lock)
    const holder = spawn(process.execPath, ['-e', `
      const db = new (require(${JSON.stringify(resolve('node_modules/libsql'))}))(${JSON.stringify(join(dir, 'gateway.db'))});
      db.exec('begin immediate'); console.log('held');
      setTimeout(() => { db.exec('commit'); db.close(); }, 8000);`], { stdio: ['ignore', 'pipe', 'inherit'] });
    const gone = new Promise((done) => holder.once('close', done));
    await new Promise<void>((r) => holder.stdout.once('data', () => r()));
    const r = await run(['users', 'add', '--email', 'locked@example.com', '--password', 'a-long-password', '--key', sim.keys[2]!.api_key]);
    await gone;
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const d = await createDeps(loadConfig(env), createLogger('silent'));
    try {
      const u = await d.users.byEmail('locked@example.com');
      expect(u?.v1UserId).toBe(sim.keys[2]!.user_id);
      expect(await d.idMap.v1IdFor('user', u!.id)).toBe(sim.keys[2]!.user_id);
    } finally {
      await d.close();
    }
  }, 40_000);

  it('says what was wrong: a duplicate email, an unknown command, v1 unreachable (with its URL)', async () => {
    const dup = await run(['users', 'add', '--email', 'user1@example.com', '--password', 'a-long-password', '--key', sim.keys[1]!.api_key]);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toBe('a user with email user1@example.com already exists\n');
    const unknown = await run(['users', 'frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^unknown command "users frobnicate"/);
    const down = await run(['users', 'add', '--email', 'x@example.com', '--password', 'a-long-password', '--key', sim.keys[1]!.api_key, '--v1', 'http://127.0.0.1:9']);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('v1 could not be asked about the key (GET /v1/me at http://127.0.0.1:9)');
    expect(down.stderr).not.toContain('refused the key');
    expect(down.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });
});
