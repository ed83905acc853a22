import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/schema.js';
import { createDeps } from '../../src/deps.js';
import { createLogger } from '../../src/log/logger.js';
import { startSim, type RunningSim } from '../helpers/sim.js';
import { TEST_ENV } from '../helpers/gateway.js';

/**
 * How the compiled `legacy-gateway` bin fails: one line on stderr, no stack trace (unless --debug), and an exit code
 * that says what kind of failure it was — 78 configuration, 2 usage, 1 anything else.
 */
const BIN = resolve('dist/src/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'gw-cli-errors-'));
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

interface Run { code: number | null; stdout: string; stderr: string; started?: boolean }
function run(args: string[], o: { env?: Record<string, string>; stdout?: number; until?: RegExp } = {}): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: o.env ?? env, stdio: ['ignore', o.stdout ?? 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let started = false;
    child.stdout?.on('data', (c: Buffer) => { stdout += c.toString(); });
    child.stderr!.on('data', (c: Buffer) => {
      stderr += c.toString();
      // a server that started instead of refusing: stopped, and reported as started
      if (o.until?.test(stderr)) { started = true; child.kill('SIGTERM'); }
    });
    child.on('close', (code) => done({ code, stdout, stderr, started }));
  });
}
const oneLine = (r: Run) => {
  expect(r.stderr.endsWith('\n')).toBe(true);
  expect(r.stderr.trimEnd().split('\n'), r.stderr).toHaveLength(1);
  expect(r.stderr).not.toMatch(/\n\s+at /);
};

describe('legacy-gateway failures', { timeout: 90_000 }, () => {
  it('a write error on stdout (> /dev/full) exits 1 and says so', async () => {
    const fd = openSync('/dev/full', 'w');
    const r = await run(['mappings', 'report'], { stdout: fd });
    closeSync(fd);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^cannot write the output: ENOSPC/);
  });

  it('a missing file: one line naming it, exit 1; --debug adds the stack trace', async () => {
    const missing = join(dir, 'no-such-export.csv');
    const r = await run(['users', 'import', missing]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`cannot open ${missing}: no such file or directory\n`);
    const debug = await run(['users', 'import', missing, '--debug']);
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(/^cannot open .*\nError: ENOENT[^\n]*\n\s+at /);
  });

  it('an unknown flag or a missing argument is a usage error (exit 2); a bad variable a configuration error (exit 78)', async () => {
    const flag = await run(['users', 'list', '--bogus']);
    expect(flag.code).toBe(2);
    oneLine(flag);
    expect(flag.stderr).toMatch(/^Unknown option '--bogus'/);
    const missing = await run(['users', 'import']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe('users import needs a file\n');
    const config = await run(['users', 'list'], { env: { ...env, PORT: 'eighty' } });
    expect(config.code).toBe(78);
    oneLine(config);
    expect(config.stderr).toMatch(/^invalid configuration: PORT: /);
  });

  it('index sync --team naming a team no key reaches: exit 1, one line, and no team row left behind', async () => {
    const r = await run(['index', 'sync', '--team', 'team_nobodyknows']);
    expect(r.code).toBe(1);
    oneLine(r);
    expect(r.stderr).toMatch(/^no bound key reaches team_nobodyknows: nothing was synced/);
    const status = await run(['index', 'status']);
    expect(status.code).toBe(0);
    expect(status.stdout).not.toContain('team_nobodyknows');
  });

  it('the legacy stand-in refuses to start without a reachable v1, naming it and where it came from', async () => {
    const down = await run(['legacy-standin', '--port', '0'], { env: { ...env, V1_BASE_URL: 'http://127.0.0.1:9' }, until: /legacy stand-in on/ });
    expect(down.started).toBe(false);
    expect(down.code).toBe(1);
    oneLine(down);
    expect(down.stderr).toMatch(/^the legacy stand-in needs a reachable v1: http:\/\/127\.0\.0\.1:9 \(V1_BASE_URL\) did not answer/);
    // demo mode (V1_BASE_URL unset): the demo's simulator on SIM_PORT, which is not running
    mkdirSync(join(dir, 'demo'));
    const demoEnv: Record<string, string> = { ...env, V1_BASE_URL: '', SIM_PORT: '9', DATABASE_URL: join(dir, 'demo', 'demo.db') };
    for (const k of ['ENCRYPTION_KEY', 'JWT_SECRET', 'GATEWAY_ADMIN_TOKEN']) delete demoEnv[k];
    const demo = await run(['legacy-standin', '--port', '0'], { env: demoEnv, until: /legacy stand-in on/ });
    expect(demo.started).toBe(false);
    expect(demo.code).toBe(1);
    oneLine(demo);
    expect(demo.stderr).toContain("http://127.0.0.1:9 (V1_BASE_URL is unset: the demo's simulator, SIM_PORT=9) did not answer");
    expect(demo.stderr).toContain('start the demo first (npm start)');
  });

  it('the legacy stand-in on a port already in use: one line naming --port, exit 1', async () => {
    const { createServer } = await import('node:net');
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const port = (taken.address() as { port: number }).port;
    try {
      const r = await run(['legacy-standin', '--port', String(port)], { until: /legacy stand-in on/ });
      expect(r.started).toBe(false);
      expect(r.code).toBe(1);
      oneLine(r);
      expect(r.stderr).toBe(`--port=${port} (on 127.0.0.1) is already in use (EADDRINUSE): another process listens there; set --port to a free port\n`);
    } finally {
      taken.close();
    }
  });

  it("in demo mode, a store is used only with the simulator world it was filled from (another world: exit 78, one line)", async () => {
    mkdirSync(join(dir, 'demo-world'));
    const demoEnv: Record<string, string> = { ...env, V1_BASE_URL: '', DATABASE_URL: join(dir, 'demo-world', 'demo.db') };
    for (const k of ['ENCRYPTION_KEY', 'JWT_SECRET', 'GATEWAY_ADMIN_TOKEN']) delete demoEnv[k];
    const portOf = (s: RunningSim) => new URL(s.url).port;
    // the store's first use beside a running simulator records its world
    expect((await run(['users', 'list'], { env: { ...demoEnv, SIM_PORT: portOf(sim) } })).code).toBe(0);
    expect((await run(['users', 'list'], { env: { ...demoEnv, SIM_PORT: portOf(sim) } })).code).toBe(0);
    // another simulator of the same seed is another world: its new ids would be the stored ones
    const other = await startSim();
    try {
      const r = await run(['users', 'list'], { env: { ...demoEnv, SIM_PORT: portOf(other) } });
      expect(r.code).toBe(78);
      oneLine(r);
      expect(r.stderr).toMatch(new RegExp(`^this store was filled from the v1 simulator world ${sim.sim.identity.world} \\(seed 1, scale tiny\\); ` +
        `the simulator now runs world ${other.sim.identity.world} `));
    } finally {
      await other.sim.close();
    }
  });
});
