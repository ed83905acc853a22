import { describe, expect, it } from 'vitest';
import { BIN, runNode, type Run } from '../helpers/bin.js';

/** `legacy-gateway --help` and each command's own help (the compiled bin), and the simulator's (`npm run sim -- --help`). */

function run(args: string[], o: { sim?: boolean } = {}): Promise<Run> {
  const argv = o.sim ? ['--import', 'tsx', 'src/sim/cli.ts', ...args] : [BIN, ...args];
  // (no store or v1 is needed for a help: none is given)
  return runNode(argv, { ...process.env, DATABASE_URL: 'mysql://nowhere/help' });
}

describe('help', { timeout: 60_000 }, () => {
  it('legacy-gateway --help: the whole help, exit 0 (without a command: the help and exit 2)', async () => {
    const r = await run(['--help']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^legacy-gateway — the gateway's operator command line/);
    for (const c of ['users import', 'index sync', 'replay FILE.jsonl', 'compare link', 'migrate report']) expect(r.stdout).toContain(c);
    const bare = await run([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toContain('index sync');
  });

  it('each command has its own help, exit 0; a group its commands', async () => {
    const sync = await run(['index', 'sync', '--help']);
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stdout).toContain('index sync [--team team_…]');
    expect(sync.stdout).not.toContain('index verify');
    expect(sync.stdout).not.toContain('users import');
    const users = await run(['users', '--help']);
    expect(users.code).toBe(0);
    for (const c of ['users add', 'users import', 'users list', 'users suspend']) expect(users.stdout).toContain(c);
    expect(users.stdout).not.toContain('tokens create');
    const one = await run(['users', 'import', '--help']);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain('users import FILE.json|FILE.csv');
    expect(one.stdout).not.toContain('users add');
    // a command whose next word is an argument
    const replay = await run(['replay', 'requests.jsonl', '--help']);
    expect(replay.code).toBe(0);
    expect(replay.stdout).toContain('replay FILE.jsonl --legacy URL');
    expect(replay.stdout).not.toContain('users add');
  });

  it('the help of a command that does not exist: exit 2, one line', async () => {
    const r = await run(['user', 'list', '--help']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('unknown command "user list" (legacy-gateway --help lists the commands)\n');
    expect(r.stdout).toBe('');
  });

  it('npm run sim -- --help: the simulator\'s options, exit 0; an unknown option: one line, exit 2', async () => {
    const r = await run(['--help'], { sim: true });
    expect(r.code, r.stderr).toBe(0);
    for (const o of ['--port', '--host', '--seed', '--scale', '--clock', '--url-ttl']) expect(r.stdout).toContain(o);
    expect(r.stderr).toBe('');
    const bad = await run(['--prot', '4010'], { sim: true });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/^Unknown option '--prot'/);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });

  it('npm run sim -- --port P with P in use: one line naming the port, exit 1', async () => {
    const { createServer } = await import('node:net');
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const port = (taken.address() as { port: number }).port;
    try {
      const r = await run(['--port', String(port), '--scale', 'tiny'], { sim: true });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`cannot listen on 127.0.0.1:${port}: already in use (EADDRINUSE); --port takes another\n`);
    } finally {
      taken.close();
    }
  });
});

describe('a group without its command, and -h', { timeout: 60_000 }, () => {
  it('a group that is no command names its commands (exit 2); -h is --help', async () => {
    for (const group of ['users', 'tokens', 'index']) {
      const r = await run([group]);
      expect(r.code, group).toBe(2);
      expect(r.stderr, group).toContain(`"${group}" needs a command: ${group} `);
      expect(r.stderr, group).not.toContain('unknown');
    }
    const h = await run(['-h']);
    expect(h.code, h.stderr).toBe(0);
    expect(h.stdout).toBe((await run(['--help'])).stdout);
    const users = await run(['users', '-h']);
    expect(users.code).toBe(0);
    expect(users.stdout).toContain('legacy-gateway users');
  });
});
