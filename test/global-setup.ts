import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

/**
 * Starts a throwaway PostgreSQL for the store tests (unless TEST_DATABASE_URL is given): initdb into a
 * temporary folder, run as the `postgres` user when we are root (the server refuses root).
 */
let server: ChildProcess | undefined;
let dir: string | undefined;

function pgBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) if (existsSync(join(root, v, 'bin', 'initdb'))) return join(root, v, 'bin');
  return undefined;
}

const asPostgres = (cmd: string, args: string[]) => (process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] as const : [cmd, args] as const);

export async function setup(project: TestProject): Promise<void> {
  if (process.env.TEST_DATABASE_URL) { project.provide('pgUrl', process.env.TEST_DATABASE_URL); return; }
  if (process.env.TEST_SQLITE_ONLY) { project.provide('pgUrl', ''); return; } // mutation runs: SQLite only
  const bin = pgBin();
  if (!bin) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql (apt-get install postgresql), and TEST_DATABASE_URL is not set');
  dir = mkdtempSync(join(tmpdir(), 'gw-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres', dir]);
  const [c1, a1] = asPostgres(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8']);
  execFileSync(c1, [...a1], { stdio: 'ignore' });
  const pg = (await import('pg')).default;
  // a random port may be taken (another suite, a test server): a server that exits is started again on another one;
  // a busy machine may take a while to start it (up to 60 s)
  for (let attempt = 0; ; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 20000);
    const [c2, a2] = asPostgres(join(bin, 'postgres'), ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off']);
    const proc = spawn(c2, [...a2], { stdio: 'ignore' });
    let exited = false;
    proc.once('exit', () => { exited = true; });
    server = proc;
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const started = Date.now();
    for (;;) {
      const client = new pg.Client({ connectionString: url });
      try { await client.connect(); await client.end(); project.provide('pgUrl', url); return; } catch (e) {
        await client.end().catch(() => {});
        if (exited) break;
        if (Date.now() - started > 60_000) throw new Error(`PostgreSQL did not start: ${(e as Error).message}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    if (attempt >= 5) throw new Error('PostgreSQL exited at start on 6 ports');
  }
}

export async function teardown(): Promise<void> {
  if (server && dir) {
    // runuser does not forward signals: stop the postmaster itself (fast shutdown)
    const pidFile = join(dir, 'data', 'postmaster.pid');
    const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : undefined;
    if (pid) { try { process.kill(pid, 'SIGINT'); } catch { /* already gone */ } }
    for (let i = 0; i < 100 && existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 100));
    server.kill('SIGKILL');
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
}

declare module 'vitest' {
  export interface ProvidedContext { pgUrl: string }
}
