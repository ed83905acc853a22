import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * README.md's demo commands run as a new user runs them: the gateway started in demo mode (src/main.ts, the built-in
 * simulator, its own SQLite store under ./data of the folder the commands run in), then each shell block of the "Demo
 * mode" section executed by bash with only PORT set, and what they print compared with what the README says they print.
 * Operator routes take the operator token in either header the docs teach.
 */
const readme = readFileSync('README.md', 'utf8');
const section = readme.slice(readme.indexOf('## Demo mode'), readme.indexOf('## Where to read next'));
const blocks = [...section.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((m) => m[1] as string);

let child: ChildProcess;
let dir: string;
let port: number;
let out = '';
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gw-readme-'));
  mkdirSync(join(dir, 'data'));
  port = 20000 + Math.floor(Math.random() * 20000);
  // tsx from this checkout (the commands run in a folder of their own)
  child = spawn(process.execPath, ['--import', pathToFileURL(resolve('node_modules/tsx/dist/loader.mjs')).href, resolve('src/main.ts')], {
    cwd: dir,
    env: {
      ...process.env, V1_BASE_URL: '', PORT: String(port), HOST: '127.0.0.1', SIM_PORT: '0', SIM_SCALE: 'tiny', DATABASE_URL: undefined,
      MAPPINGS_DIR: resolve('mappings'), LOG_LEVEL: 'warn', LOGIN_STALL_MS: '0', GATEWAY_ADMIN_TOKEN: undefined, NODE_OPTIONS: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((ok, fail) => {
    const seen = (d: Buffer) => { out += d; if (out.includes('Demo user:')) ok(); };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.once('exit', (code) => fail(new Error(`the demo exited with ${code}: ${out}`)));
  });
}, 60_000);
afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Runs README blocks in order in one bash (later blocks use what earlier ones set: $T). */
function run(script: string): { status: number | null; stdout: string; stderr: string } {
  // stderr to a file, as a terminal would take it (`tee /dev/stderr` cannot open the socket Node gives a child)
  const errors = join(dir, 'stderr.txt');
  const r = spawnSync('bash', ['-eo', 'pipefail', '-c', `exec 2>${JSON.stringify(errors)}\n${script}`], {
    cwd: dir, env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port) }, encoding: 'utf8', timeout: 120_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: readFileSync(errors, 'utf8') };
}

describe("README's demo commands, run", () => {
  it('the section has its blocks: the session and the explain example', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    expect(blocks[0]).toContain('/auth/login');
    expect(blocks[1]).toContain('X-Gateway-Explain');
  });

  it('log in, list, count by status, create a render and watch it reach complete', () => {
    const r = run(blocks[0]!);
    expect(r.status, r.stderr).toBe(0);
    // curl prints each answer without a newline: the answers stand side by side
    const lines = r.stdout.trim().split(/(?<=\})(?=\{"data")/).map((l) => JSON.parse(l));
    const [list, counts] = lines as [{ data: Record<string, unknown>[] }, { data: { status: string; count: string }[] }];
    expect(list.data).toHaveLength(2);
    for (const item of list.data) expect(Object.keys(item)).toEqual(['id', 'title', 'status', 'project']);
    expect(counts.data.length).toBeGreaterThan(0);
    for (const g of counts.data) expect(g.count).toMatch(/^\d+$/); // PostgreSQL number strings, as the README shows
    expect(r.stderr).toContain('"complete"');
  }, 150_000);

  it('explain prints what the README says it prints', () => {
    const r = run(`${blocks[0]!.split('\n').slice(0, 2).join('\n')}\n${blocks[1]!}`);
    expect(r.status, r.stderr).toBe(0);
    const explain = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    // every "key":"value" pair the README shows after the block is in the real output
    const shown = section.slice(section.indexOf(blocks[1]!) + blocks[1]!.length);
    const claimed = [...shown.slice(0, shown.indexOf('\n\n', 10)).matchAll(/"([a-z_]+)":"([^"]+)"/g)].map((m) => `"${m[1]}":"${m[2]}"`);
    expect(claimed.length).toBeGreaterThanOrEqual(4);
    const text = JSON.stringify(explain);
    for (const c of claimed) expect(text, c).toContain(c);
  }, 60_000);

  it('operator routes take the operator token in either header; without it, a 403 that says how', () => {
    const op = JSON.parse(readFileSync(join(dir, 'data', 'demo-secrets.json'), 'utf8')).GATEWAY_ADMIN_TOKEN as string;
    const status = (args: string) => run(`curl -s -o /dev/null -w '%{http_code}' ${args}`).stdout;
    for (const path of ['/_gateway/index', '/metrics']) {
      expect(status(`-H "Authorization: Bearer ${op}" localhost:${port}${path}`), path).toBe('200');
      expect(status(`-H "X-Gateway-Operator-Token: ${op}" localhost:${port}${path}`), path).toBe('200');
      expect(status(`-H "X-Gateway-Operator-Token: nope-nope-nope-nope" localhost:${port}${path}`), path).toBe('403');
    }
    const refused = JSON.parse(run(`curl -s localhost:${port}/_gateway/index`).stdout);
    expect(refused.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(refused.errors[0].message).toContain('X-Gateway-Operator-Token');
  });
});
