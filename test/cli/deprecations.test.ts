import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { run } from '../../src/cli/main.js';
import { ManualClock } from '../../src/lib/clock.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * `legacy-gateway deprecations list | set --file | clear | progress`, run in process (src/cli/main.ts's `run`, as the bin
 * calls it) on the SQLite store of a running gateway: the gateway follows what the command sets once it sees the
 * store changed (its change bus's poll, run at once here instead of waited for).
 */
const clock = new ManualClock(Date.UTC(2026, 2, 1, 10));
let sim: RunningSim;
let gw: TestGateway;
let dir: string;

beforeAll(async () => {
  sim = await startSim();
  gw = await startGateway({}, {}, { sim, clock });
  await gw.addUser(0, 'cli@example.com');
  dir = join(gw.config.DATABASE_URL, '..');
  Object.assign(process.env, TEST_ENV, { V1_BASE_URL: sim.url, DATABASE_URL: gw.config.DATABASE_URL, LOG_LEVEL: 'silent' });
});
afterAll(async () => {
  await gw?.close();
  await sim?.sim.close();
});

async function cli(...args: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => { stdout += String(c); return true; });
  try {
    return { code: await run(args), stdout };
  } finally {
    spy.mockRestore();
  }
}
/** The gateway looks at the store now (SQLite: the data_version poll) and reads the rules again if it changed. */
const follow = async () => { await gw.deps.bus.sync(); await gw.deps.deprecations.idle(); };
const renders = async () => gw.app.inject({ method: 'GET', url: '/renders?limit=1', headers: { authorization: `Bearer ${await gw.login('cli@example.com')}` } });

describe('legacy-gateway deprecations', () => {
  const rule = { id: 'renders-list', match: { route: 'GET /renders' }, deprecation: '2026-01-01T00:00:00Z', sunset: '2026-06-30T00:00:00Z',
    link: 'https://docs.example.com/moving', brownouts: [{ start: '2026-03-01T09:55:00Z', minutes: 15 }] };

  it('set --file: the running gateway applies the rules; list prints them', async () => {
    const file = join(dir, 'rules.json');
    writeFileSync(file, JSON.stringify({ rules: [rule] }));
    const set = await cli('deprecations', 'set', '--file', file);
    expect(set).toEqual({ code: 0, stdout: 'set 1 rule: renders-list\n' });
    await follow();
    const res = await renders();
    expect(res.statusCode).toBe(410);
    expect(res.headers.sunset).toBe('Tue, 30 Jun 2026 00:00:00 GMT');
    const list = await cli('deprecations', 'list');
    expect(list.stdout).toBe('renders-list  GET /renders  *  enforce  deprecated 2026-01-01T00:00:00Z  sunset 2026-06-30T00:00:00Z  ' +
      'brownouts 2026-03-01T09:55:00Z 15 min  https://docs.example.com/moving\n');
    expect(JSON.parse((await cli('deprecations', 'list', '--json')).stdout)).toEqual({ rules: [rule] });
  });

  it('a bad file sets nothing and names the field', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ rules: [{ ...rule, match: { route: 'GET /renderz' } }] }));
    await expect(cli('deprecations', 'set', '--file', file)).rejects.toThrow(/nothing was set: rules\.0\.match\.route: "GET \/renderz" is not a legacy route/);
    writeFileSync(file, '{"rules": [');
    await expect(cli('deprecations', 'set', '--file', file)).rejects.toThrow(/bad\.json is not JSON/);
    await expect(cli('deprecations', 'set')).rejects.toThrow('deprecations set needs --file rules.json');
    expect(JSON.parse((await cli('deprecations', 'list', '--json')).stdout).rules.map((r: { id: string }) => r.id)).toEqual(['renders-list']);
  });

  it('progress shows each client\'s calls and the days left; clear removes every rule', async () => {
    clock.set(Date.UTC(2026, 2, 2, 10));
    expect((await renders()).statusCode).toBe(200);
    await gw.deps.deprecations.flush();
    const p = await cli('deprecations', 'progress');
    expect(p.stdout).toMatch(/^renders-list {2}GET \/renders {2}\* {2}enforce {2}\d+ days left \(sunset 2026-06-30T00:00:00Z\)\n {4}user:[0-9a-f-]+~other {2}2 calls {2}1 refused/);
    // one client, named as the report names it; a text that names no client is refused, not answered "no calls"
    const client = /(user:[0-9a-f-]+~other)/.exec(p.stdout)![1]!;
    expect((await cli('deprecations', 'progress', '--client', client)).stdout).toContain(`${client}  2 calls`);
    await expect(cli('deprecations', 'progress', '--client', 'bogus')).rejects.toThrow(/user:<uuid>.*"bogus"/);
    expect(await cli('deprecations', 'clear')).toEqual({ code: 0, stdout: 'cleared: no deprecation rules\n' });
    await follow();
    expect((await renders()).headers.deprecation).toBeUndefined();
    expect((await cli('deprecations', 'list')).stdout).toBe('no deprecation rules\n');
  });

  it('is in the whole help; deprecations --help lists its commands without opening a store', async () => {
    const all = await cli('--help');
    for (const c of ['deprecations list', 'deprecations set --file rules.json', 'deprecations clear', 'deprecations progress']) expect(all.stdout).toContain(c);
    const url = process.env.DATABASE_URL;
    process.env.DATABASE_URL = 'mysql://nowhere/help';
    try {
      const own = await cli('deprecations', '--help');
      expect(own.code).toBe(0);
      expect(own.stdout).toMatch(/^legacy-gateway deprecations\n/);
      expect(own.stdout).toContain('deprecations set --file rules.json');
      expect(own.stdout).not.toContain('users add');
    } finally {
      process.env.DATABASE_URL = url;
    }
  });
});
