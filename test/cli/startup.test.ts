import { spawn } from 'node:child_process';
import { existsSync, linkSync, realpathSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

/**
 * How the compiled gateway (dist/src/main.js) and `legacy-gateway` start or refuse to: a store location checked before
 * anything is created, a port taken or a database down said in one line naming its variable, a mistyped variable named.
 */
// (the secrets of test/helpers/gateway.ts's TEST_ENV: that module loads the whole app, which this test runs compiled)
const TEST_ENV = { ENCRYPTION_KEY: '11'.repeat(32), JWT_SECRET: 'test-secret-test-secret-test-secret-0123', GATEWAY_ADMIN_TOKEN: 'operator-token-0123456789' };
const MAIN = resolve('dist/src/main.js');
const BIN = resolve('dist/src/cli/main.js');
const base: Record<string, string> = {
  ...(process.env as Record<string, string>), MAPPINGS_DIR: resolve('mappings'), LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: '0',
};
// demo mode: no V1_BASE_URL and none of its secrets
for (const k of ['V1_BASE_URL', 'ENCRYPTION_KEY', 'JWT_SECRET', 'GATEWAY_ADMIN_TOKEN', 'DATABASE_URL', 'METRICS_PORT']) delete base[k];
base.SIM_PORT = '0';
const deployed = (dir: string) => ({ ...base, ...TEST_ENV, V1_BASE_URL: 'http://127.0.0.1:9', DATABASE_URL: join(dir, 'gateway.db') });

interface Run { code: number | null; stdout: string; stderr: string }
/** Runs a compiled entry point in `cwd`; a gateway that starts instead of failing is stopped when it says it listens. */
function run(file: string, args: string[], env: Record<string, string>, cwd: string): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [file, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (/Server listening at|Demo mode: /.test(stdout)) child.kill('SIGTERM');
    });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}
const oneLine = (r: Run) => {
  expect(r.stderr.endsWith('\n'), r.stderr).toBe(true);
  expect(r.stderr.trimEnd().split('\n'), r.stderr).toHaveLength(1);
  expect(r.stderr).not.toMatch(/\n\s+at /);
};

let taken: Server;
let takenPort = 0;
beforeAll(async () => {
  taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
  takenPort = (taken.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((r) => taken.close(() => r())));

describe('DATABASE_URL is checked before anything is created', { timeout: 60_000 }, () => {
  it('a scheme the gateway does not serve: exit 78 naming it, no folder, no store, no demo secrets, no password printed', async () => {
    for (const [file, args] of [[MAIN, []], [BIN, ['users', 'list']]] as const) {
      const cwd = mkdtempSync(join(tmpdir(), 'gw-start-scheme-'));
      const r = await run(file, [...args], { ...base, DATABASE_URL: 'mysql://u:s3cret-pw@localhost/db' }, cwd);
      expect(r.code, `${file}: ${r.stderr}`).toBe(78);
      expect(r.stderr).toContain('DATABASE_URL: mysql:// is not a store the gateway serves');
      expect(r.stdout + r.stderr).not.toContain('s3cret-pw');
      expect(readdirSync(cwd), file).toEqual([]);
    }
  });

  it('an SQLite file in a folder that does not exist: exit 78 naming the folder, which is not created', async () => {
    for (const [file, args] of [[MAIN, []], [BIN, ['users', 'list']]] as const) {
      const cwd = mkdtempSync(join(tmpdir(), 'gw-start-folder-'));
      const missing = join(cwd, 'typo', 'gateway.db');
      const r = await run(file, [...args], { ...base, DATABASE_URL: missing }, cwd);
      expect(r.code, `${file}: ${r.stdout}${r.stderr}`).toBe(78);
      expect(r.stderr).toContain(`DATABASE_URL: the folder ${join(cwd, 'typo')} does not exist`);
      expect(existsSync(join(cwd, 'typo')), file).toBe(false);
      expect(readdirSync(cwd), file).toEqual([]);
    }
  });
});

describe('a port taken or a database down: one line naming the variable, no stack trace', { timeout: 60_000 }, () => {
  it('PORT in use (and a mistyped variable warned at start with the nearest setting)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-start-port-'));
    const r = await run(MAIN, [], { ...deployed(dir), PORT: String(takenPort), INDEX_ENABLEDD: 'false', PROT: '9000' }, dir);
    expect(r.code).toBe(1);
    oneLine(r);
    expect(r.stderr).toBe(`PORT=${takenPort} on HOST=127.0.0.1 is already in use (EADDRINUSE): another process listens there; set PORT to a free port\n`);
    expect(r.stdout).toContain('INDEX_ENABLEDD is not a setting of the gateway and is ignored: did you mean INDEX_ENABLED?');
    expect(r.stdout).toContain('PROT is not a setting of the gateway and is ignored: did you mean PORT?');
  });

  it('PORT in use in demo mode: said before the demo writes its secrets, store or world (nothing left behind)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-start-demoport-'));
    const r = await run(MAIN, [], { ...base, SIM_SCALE: 'tiny', PORT: String(takenPort) }, dir);
    expect(r.code).toBe(1);
    oneLine(r);
    expect(r.stderr).toBe(`PORT=${takenPort} on HOST=127.0.0.1 is already in use (EADDRINUSE): another process listens there; set PORT to a free port\n`);
    expect(readdirSync(dir)).toEqual([]); // no ./data: no demo secrets, no store
  });

  it('METRICS_PORT in use', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-start-metrics-'));
    const r = await run(MAIN, [], { ...deployed(dir), METRICS_PORT: String(takenPort), METRICS_HOST: '127.0.0.1' }, dir);
    expect(r.code).toBe(1);
    oneLine(r);
    expect(r.stderr).toMatch(new RegExp(`^METRICS_PORT=${takenPort} on METRICS_HOST=127\\.0\\.0\\.1 is already in use \\(EADDRINUSE\\)`));
  });

  it("SIM_PORT in use (the demo's simulator)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-start-sim-'));
    const r = await run(MAIN, [], { ...base, SIM_SCALE: 'tiny', SIM_PORT: String(takenPort), DATABASE_URL: join(dir, 'demo.db') }, dir);
    expect(r.code).toBe(1);
    oneLine(r);
    expect(r.stderr).toMatch(new RegExp(`^SIM_PORT=${takenPort} \\(on 127\\.0\\.0\\.1\\) is already in use \\(EADDRINUSE\\)`));
  });

  it('a PostgreSQL that refuses connections: the gateway and the command line name DATABASE_URL, never its password', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-start-pg-'));
    const env = { ...deployed(dir), DATABASE_URL: 'postgres://gw:pg-s3cret@127.0.0.1:1/gateway' };
    for (const [file, args] of [[MAIN, []], [BIN, ['users', 'list']]] as const) {
      const r = await run(file, [...args], env, dir);
      expect(r.code, file).toBe(1);
      oneLine(r);
      expect(r.stderr).toBe('DATABASE_URL: PostgreSQL at 127.0.0.1:1/gateway refused the connection (ECONNREFUSED): is PostgreSQL running there?\n');
      expect(r.stdout).not.toContain('pg-s3cret');
    }
  });

  it('a PostgreSQL host that accepts and never answers: one line naming DATABASE_URL and DATABASE_CONNECT_TIMEOUT_MS, no wait without end', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-start-pgmute-'));
    const sockets = new Set<import('node:net').Socket>();
    const mute = createServer((socket) => { sockets.add(socket); }); // reads the start-up message, answers nothing
    await new Promise<void>((r) => mute.listen(0, '127.0.0.1', () => r()));
    const port = (mute.address() as { port: number }).port;
    try {
      const env = { ...deployed(dir), DATABASE_URL: `postgres://gw:pg-s3cret@127.0.0.1:${port}/gateway`, DATABASE_CONNECT_TIMEOUT_MS: '300' };
      for (const [file, args] of [[MAIN, []], [BIN, ['users', 'list']]] as const) {
        const r = await run(file, [...args], env, dir);
        expect(r.code, `${file}: ${r.stderr}`).toBe(1);
        oneLine(r);
        expect(r.stderr).toBe(`DATABASE_URL: PostgreSQL at 127.0.0.1:${port}/gateway did not answer in time (DATABASE_CONNECT_TIMEOUT_MS)\n`);
      }
      expect(sockets.size).toBeGreaterThan(0); // the gateway did connect: the wait was for an answer
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => mute.close(() => r()));
    }
  });

  it('a PostgreSQL that answers but has no such database (the suite\'s own server): named with its cause', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-start-pgdb-'));
    const server = new URL(inject('pgUrl'));
    server.pathname = '/gw_no_such_database';
    server.password = 'pg-s3cret';
    for (const [file, args] of [[MAIN, []], [BIN, ['users', 'list']], [BIN, ['migrate']]] as const) {
      const r = await run(file, [...args], { ...deployed(dir), DATABASE_URL: server.toString() }, dir);
      expect(r.code, `${file} ${args.join(' ')}: ${r.stderr}`).toBe(1);
      oneLine(r);
      expect(r.stderr).toBe(`DATABASE_URL: PostgreSQL at 127.0.0.1:${server.port}/gw_no_such_database has no such database (3D000)\n`);
    }
  });
});

describe('run outside the gateway\'s folder', { timeout: 60_000 }, () => {
  it('mapping files not found: one line naming the folder looked in and MAPPINGS_DIR, exit 78', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'gw-start-elsewhere-'));
    const env: Record<string, string> = { ...deployed(cwd) };
    delete env.MAPPINGS_DIR;
    for (const [file, args] of [[MAIN, []], [BIN, ['users', 'list']]] as const) {
      const r = await run(file, [...args], env, cwd);
      expect(r.code, file).toBe(78);
      expect(r.stderr).toBe(`invalid mappings: no mapping files in ${join(cwd, 'mappings')} (MAPPINGS_DIR=./mappings, read from the current ` +
        'folder): run it from the gateway\'s folder, or set MAPPINGS_DIR to the gateway\'s mappings folder\n');
    }
  });
});

describe('the command line names a mistyped variable', { timeout: 60_000 }, () => {
  it('on stderr, before its own output, and still runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-start-cli-'));
    mkdirSync(join(dir, 'data'));
    const r = await run(BIN, ['users', 'list'], { ...deployed(dir), DATABASE_URL: join(dir, 'data', 'g.db'), INDEX_ENABLEDD: 'false' }, dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('warning: INDEX_ENABLEDD is not a setting of the gateway and is ignored: did you mean INDEX_ENABLED?\n');
  });
});

describe('one gateway serves an SQLite file (several instances need PostgreSQL)', { timeout: 90_000 }, () => {
  /** Starts the compiled gateway and resolves once it listens (the caller stops it). */
  function started(env: Record<string, string>, cwd: string): Promise<import('node:child_process').ChildProcess> {
    return new Promise((ok, fail) => {
      const child = spawn(process.execPath, [MAIN], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('Server listening at')) ok(child);
      });
      child.stderr.on('data', (c: Buffer) => { out += c.toString(); });
      child.on('close', (code) => fail(new Error(`exited ${code}: ${out}`)));
    });
  }
  const stopped = (child: import('node:child_process').ChildProcess) =>
    new Promise<void>((r) => { child.once('close', () => r()); child.kill('SIGTERM'); });

  it('a second gateway on the same file is refused naming the first and PostgreSQL; the command line runs beside it; a stop frees it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-start-claim-'));
    const env = deployed(dir);
    const first = await started(env, dir);
    try {
      const claim = JSON.parse(readFileSync(join(dir, 'gateway.db.instance'), 'utf8')) as { pid: number; host: string };
      expect(claim).toMatchObject({ pid: first.pid, host: hostname() });
      const second = await run(MAIN, [], env, dir);
      expect(second.code, second.stdout + second.stderr).toBe(78);
      oneLine(second);
      expect(second.stderr).toContain(`DATABASE_URL: the SQLite store ${join(dir, 'gateway.db')} is already served by another gateway (process ${first.pid} on ${hostname()}`);
      expect(second.stderr).toContain('several instances need PostgreSQL');
      expect(second.stdout).not.toContain('Server listening at');
      // the refused start took nothing: the first's claim is still there, unchanged
      expect(JSON.parse(readFileSync(join(dir, 'gateway.db.instance'), 'utf8'))).toEqual(claim);
      const cli = await run(BIN, ['users', 'list'], env, dir);
      expect(cli.code, cli.stderr).toBe(0);
    } finally {
      await stopped(first);
    }
    expect(existsSync(join(dir, 'gateway.db.instance'))).toBe(false); // released at the stop
    // the store whole in its file: no WAL left holding part of it (attack pass 17, L2)
    const wal = join(dir, 'gateway.db-wal');
    expect(existsSync(wal) ? statSync(wal).size : 0).toBe(0);
    const again = await run(MAIN, [], env, dir);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('Server listening at');
  });

  it('the same file by another name — a symlink, a hard link — is refused too (attack pass 16, M: both served beside the first)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-start-links-'));
    const env = deployed(dir);
    const first = await started(env, dir);
    try {
      const other = mkdtempSync(join(tmpdir(), 'gw-start-links-other-'));
      symlinkSync(join(dir, 'gateway.db'), join(other, 'sym.db'));
      linkSync(join(dir, 'gateway.db'), join(other, 'hard.db'));
      for (const name of ['sym.db', 'hard.db']) {
        const r = await run(MAIN, [], { ...env, DATABASE_URL: join(other, name) }, other);
        expect(r.code, `${name}: ${r.stdout}${r.stderr}`).toBe(78);
        expect(r.stderr).toContain(`is already served by another gateway (process ${first.pid} on ${hostname()}`);
        // (the claim it names is the one that refused it — the real path's for a symlink, the file's own for a hard link —
        // never one beside the other name)
        const { dev, ino } = statSync(join(dir, 'gateway.db'));
        const refusing = name === 'sym.db' ? `${realpathSync(join(dir, 'gateway.db'))}.instance` : join(tmpdir(), `legacy-gateway-sqlite-${dev}-${ino}.instance`);
        expect(r.stderr).toContain(`claim (${refusing})`);
        expect(r.stdout).not.toContain('Server listening at');
      }
      expect(readdirSync(other).sort()).toEqual(['hard.db', 'sym.db']); // (no claim, no WAL left beside the other names)
      // a hard link with a temporary folder of its own: refused by the claim by inode in /tmp, which every TMPDIR shares
      // (attack pass 16's re-check, M: it served beside the first, each with a WAL of its own; the row inside the store is
      // the last guard, store/instance-row.test.ts)
      const apart = mkdtempSync(join(tmpdir(), 'gw-start-links-apart-'));
      mkdirSync(join(apart, 'tmp'));
      linkSync(join(dir, 'gateway.db'), join(apart, 'hard.db'));
      const hard = await run(MAIN, [], { ...env, DATABASE_URL: join(apart, 'hard.db'), TMPDIR: join(apart, 'tmp') }, apart);
      expect(hard.code, hard.stdout + hard.stderr).toBe(78);
      expect(hard.stderr).toContain(`is already served by another gateway (process ${first.pid} on ${hostname()}`);
      const { dev, ino } = statSync(join(dir, 'gateway.db'));
      expect(hard.stderr).toContain(`claim (${join('/tmp', `legacy-gateway-sqlite-${dev}-${ino}.instance`)})`);
      expect(hard.stdout).not.toContain('Server listening at');
      expect(readdirSync(apart).sort()).toEqual(['hard.db', 'tmp']); // its claim files given back, its WAL and index removed
      expect(readdirSync(join(apart, 'tmp'))).toEqual([]);
      // a prefix twice: libsql reads the `file:` left as a URI of its own (gateway.db), and so does the claim now
      const twice = await run(MAIN, [], { ...env, DATABASE_URL: 'file:file:gateway.db' }, dir);
      expect(twice.code, twice.stdout + twice.stderr).toBe(78);
      expect(existsSync(join(dir, 'file:gateway.db'))).toBe(false);
    } finally {
      await stopped(first);
    }
    // both claims given back at the stop: the file is served again, by any of its names
    const { dev, ino } = statSync(join(dir, 'gateway.db'));
    expect(existsSync(join(tmpdir(), `legacy-gateway-sqlite-${dev}-${ino}.instance`))).toBe(false);
  });

  it('two names of one file, each with a TMPDIR of its own, meet in /tmp: a claim there refuses the second (attack pass 17, F5)', async () => {
    // (two such starts at the same moment both took the row inside the store, read before either had written it through)
    const dir = mkdtempSync(join(tmpdir(), 'gw-start-shared-tmp-'));
    const store = join(dir, 'gateway.db');
    writeFileSync(store, '');
    const apart = mkdtempSync(join(tmpdir(), 'gw-start-shared-tmp-apart-'));
    mkdirSync(join(apart, 'tmp'));
    linkSync(store, join(apart, 'hard.db'));
    const { dev, ino } = statSync(store);
    const shared = join('/tmp', `legacy-gateway-sqlite-${dev}-${ino}.instance`);
    // the first start's claim there: this live process of this host, just made
    writeFileSync(shared, JSON.stringify({ host: hostname(), pid: process.pid, token: 'first', since: Date.now() }));
    try {
      const r = await run(MAIN, [], { ...deployed(dir), DATABASE_URL: join(apart, 'hard.db'), TMPDIR: join(apart, 'tmp') }, apart);
      expect(r.code, r.stdout + r.stderr).toBe(78);
      expect(r.stderr).toContain(`(process ${process.pid} on ${hostname()}`);
      expect(r.stderr).toContain(`claim (${shared})`);
      expect(readdirSync(join(apart, 'tmp'))).toEqual([]); // its own claims given back
    } finally {
      rmSync(shared, { force: true });
    }
  });

  it('two starts at the same moment through two hard links, each with its own TMPDIR: one serves, the other is refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-start-race-'));
    writeFileSync(join(dir, 'gateway.db'), '');
    const names = [1, 2].map((n) => {
      const d = mkdtempSync(join(tmpdir(), `gw-start-race-${n}-`));
      mkdirSync(join(d, 'tmp'));
      linkSync(join(dir, 'gateway.db'), join(d, 'gw.db'));
      return d;
    });
    for (let round = 0; round < 3; round++) {
      const outcomes = await Promise.all(names.map((d) => new Promise<{ child: import('node:child_process').ChildProcess; code: number | null }>((done) => {
        const child = spawn(process.execPath, [MAIN], { env: { ...deployed(d), DATABASE_URL: join(d, 'gw.db'), TMPDIR: join(d, 'tmp') }, cwd: d, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.on('data', (c: Buffer) => { out += c.toString(); if (out.includes('Server listening at')) done({ child, code: null }); });
        child.on('close', (code) => done({ child, code }));
      })));
      const serving = outcomes.filter((o) => o.code === null);
      expect(serving.length, `round ${round}: ${JSON.stringify(outcomes.map((o) => o.code))}`).toBe(1);
      expect(outcomes.filter((o) => o.code === 78).length).toBe(1);
      await stopped(serving[0]!.child);
    }
  }, 90_000);

  it('a process holding the file open by another name, with no claim the start can see, refuses it until it stops (attack pass 18, F5)', async () => {
    // (two containers sharing a volume, each with its own /tmp, the first's row renewals held back in its WAL by a long read:
    // the files name nothing and the row has lapsed; SQLite's lock on the file is what both share)
    const dir = mkdtempSync(join(tmpdir(), 'gw-start-locked-'));
    const store = join(dir, 'gateway.db');
    const holder = spawn(process.execPath, ['-e', `
      const db = new (require(${JSON.stringify(resolve('node_modules/libsql'))}))(${JSON.stringify(store)});
      db.exec('PRAGMA journal_mode = WAL; create table t (x); insert into t values (1)');
      db.prepare('select count(*) from t').get();
      console.log('open'); setInterval(() => {}, 1000);`], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((r) => holder.stdout.once('data', () => r()));
    const apart = mkdtempSync(join(tmpdir(), 'gw-start-locked-apart-'));
    mkdirSync(join(apart, 'tmp'));
    linkSync(store, join(apart, 'hard.db'));
    const env = { ...deployed(dir), DATABASE_URL: join(apart, 'hard.db'), TMPDIR: join(apart, 'tmp') };
    try {
      const r = await run(MAIN, [], env, apart);
      expect(r.code, r.stdout + r.stderr).toBe(78);
      oneLine(r);
      expect(r.stderr).toContain(`the SQLite store ${join(apart, 'hard.db')} is already served by another gateway (another process)`);
      expect(r.stderr).toContain(`claim (SQLite's lock on ${join(apart, 'hard.db')}): it is freed when the process holding the file open stops`);
      expect(r.stdout).not.toContain('Server listening at');
      expect(readdirSync(join(apart, 'tmp'))).toEqual([]); // its claims given back
    } finally {
      await new Promise((r) => { holder.once('close', r); holder.kill('SIGKILL'); });
    }
    // the holder gone (killed: nothing given back but its lock), the same start serves
    const again = await run(MAIN, [], env, apart);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('Server listening at');
  });

  it('a claim left by a process that died, or not renewed for 30 s by another host, is taken over; a live one from another host is not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-start-stale-'));
    const env = deployed(dir);
    const file = join(dir, 'gateway.db.instance');
    // a process of this host that is gone
    const gone = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => gone.once('close', r));
    writeFileSync(file, JSON.stringify({ host: hostname(), pid: gone.pid, token: 'dead', since: Date.now() }));
    const r1 = await run(MAIN, [], env, dir);
    expect(r1.code, r1.stderr).toBe(0);
    expect(r1.stdout).toContain('Server listening at');
    // another host, touched just now: refused
    writeFileSync(file, JSON.stringify({ host: 'elsewhere.example', pid: 1, token: 'live', since: Date.now() }));
    const r2 = await run(MAIN, [], env, dir);
    expect(r2.code).toBe(78);
    expect(r2.stderr).toContain('(process 1 on elsewhere.example, since');
    // the same claim, last touched 60 s ago: lapsed
    const old = new Date(Date.now() - 60_000);
    utimesSync(file, old, old);
    const r3 = await run(MAIN, [], env, dir);
    expect(r3.code, r3.stderr).toBe(0);
    expect(r3.stdout).toContain('Server listening at');
  });
});
