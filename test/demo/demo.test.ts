import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

interface Demo { child: ChildProcess; out: string; simUrl: string; stop(): Promise<void> }

/** Starts `src/main.ts` in demo mode on the store in `dir`; ready when the banner is printed (an event, not a poll of the clock). */
async function startDemo(dir: string, port: number): Promise<Demo> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env, V1_BASE_URL: '', PORT: String(port), HOST: '127.0.0.1', SIM_PORT: '0', SIM_SCALE: 'tiny', DATABASE_URL: join(dir, 'demo.db'),
      LOG_LEVEL: 'info', LOGIN_STALL_MS: '0', CACHE_TTL_RENDER_ACTIVE_MS: '0', GATEWAY_ADMIN_TOKEN: undefined,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const seen = (d: Buffer) => { out += d; if (out.includes('Demo user:')) resolve(); };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.once('exit', (code) => reject(new Error(`the demo exited with ${code}: ${out}`)));
  });
  const exited = new Promise((r) => child.once('exit', r));
  return {
    child, out,
    simUrl: /"url":"(http:\/\/127\.0\.0\.1:\d+)"[^\n]*v1 simulator started/.exec(out)![1]!,
    async stop() { child.kill('SIGTERM'); await exited; },
  };
}

/** The real start path (src/main.ts) in demo mode: built-in simulator, embedded SQLite, demo user. */
describe('demo mode end to end', () => {
  let out = '';
  let simUrl = '';
  let demo: Demo;
  const dir = mkdtempSync(join(tmpdir(), 'gw-demo-'));
  const port = 20000 + Math.floor(Math.random() * 20000);
  const base = `http://127.0.0.1:${port}`;
  beforeAll(async () => {
    demo = await startDemo(dir, port);
    ({ out, simUrl } = demo);
  });
  afterAll(async () => {
    await demo?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * The demo's reads come from the render index, which the simulator's webhooks keep current: each step waits until the
   * simulator has had every event of the render answered (an event the test observes, not a sleep of a guessed length).
   */
  const deliveriesSettled = async (legacyId: string) => {
    for (let i = 0; i < 200; i++) {
      const all = (await (await fetch(`${simUrl}/_sim/webhooks/deliveries`)).json()) as { delivered: boolean; attempts: { status: number | null; error?: string }[] }[];
      // answered: delivered, or an attempt that came back (refused or failed) — not one still on its way
      if (all.every((d) => d.delivered || d.attempts.some((a) => a.status !== null || a.error !== undefined))) return;
      await new Promise((r) => setImmediate(r));
    }
    throw new Error(`webhook deliveries for ${legacyId} did not settle`);
  };

  it('prints the demo user and a curl line, then serves a logged-in demo user: reads, a render created and completed', async () => {
    expect(out).toContain('Demo user: demo@example.com / demo-password');
    expect(out).toMatch(/curl -s -X POST http:\/\/localhost:\d+\/auth\/login/);
    // the operator token the banner points at is the one the demo runs with
    const secretsFile = join(dir, 'demo-secrets.json');
    expect(out).toContain(`Operator token (for /_gateway/*): GATEWAY_ADMIN_TOKEN in ${secretsFile}`);
    const operator = JSON.parse(readFileSync(secretsFile, 'utf8')).GATEWAY_ADMIN_TOKEN as string;
    expect((await fetch(`${base}/_gateway/index`, { headers: { authorization: `Bearer ${operator}` } })).status).toBe(200);
    const login = await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'demo@example.com', password: 'demo-password' }) });
    expect(login.status).toBe(200);
    const token = ((await login.json()) as any).data.access_token as string;
    const auth = { authorization: `Bearer ${token}` };
    const renders = (await (await fetch(`${base}/renders?limit=5`, { headers: auth })).json()) as any;
    expect(renders.data).toHaveLength(5);
    const project = ((await (await fetch(`${base}/projects?limit=1&fields=id,account`, { headers: auth })).json()) as any).data[0];
    const created = await fetch(`${base}/renders`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ project: project.id, account: project.account, data: { title: 'Demo render' } }) });
    expect(created.status).toBe(200);
    const render = ((await created.json()) as any).data;
    expect(render.status).toBe('draft');
    const seen = new Set<string>();
    let last: any;
    // the demo simulator's clock is moved forward (its admin route), a step at a time: no waiting on the wall clock
    for (let i = 0; i < 80; i++) {
      last = ((await (await fetch(`${base}/renders/${render.id}`, { headers: auth })).json()) as any).data;
      seen.add(last.status);
      if (last.status === 'complete') break;
      await fetch(`${simUrl}/_sim/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: 1500 }) });
      await deliveriesSettled(render.id);
    }
    expect(last.status).toBe('complete');
    expect(last.download_ready).toBe(true);
    expect(last.output.master).toMatch(/^https:\/\/.+\.mov\?/);
    expect(last.output.high).toMatch(/^https:\/\//);
    expect(last.data).toEqual({ title: 'Demo render' });
    expect(seen.size).toBeGreaterThan(2);
  });
});

/**
 * A restarted demo keeps its simulator world (kept beside the store) and says so: a render made before the restart is
 * still itself, and a render made after it gets a new id — never the id the restarted simulator's generator handed out
 * the first time. A store whose world is gone is refused (exit 78), naming what to do.
 */
describe('demo mode across restarts', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-demo-restart-'));
  const port = 20000 + Math.floor(Math.random() * 20000);
  const base = `http://127.0.0.1:${port}`;
  const running: Demo[] = [];
  const start = async () => { const d = await startDemo(dir, port); running.push(d); return d; };
  afterAll(async () => {
    for (const d of running) if (d.child.exitCode === null && d.child.signalCode === null) await d.stop(); // a failed step leaves none behind
    rmSync(dir, { recursive: true, force: true });
  });

  const session = async () => {
    const login = await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'demo@example.com', password: 'demo-password' }) });
    expect(login.status).toBe(200);
    const auth = { authorization: `Bearer ${((await login.json()) as any).data.access_token as string}` };
    const project = ((await (await fetch(`${base}/projects?limit=1&fields=id,account`, { headers: auth })).json()) as any).data[0];
    return {
      create: async (title: string) => {
        const res = await fetch(`${base}/renders`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ project: project.id, account: project.account, data: { title } }) });
        expect(res.status).toBe(200);
        return ((await res.json()) as any).data.id as string;
      },
      title: async (id: string) => ((await (await fetch(`${base}/renders/${id}?fields=id,data`, { headers: auth })).json()) as any).data.data.title as string,
    };
  };

  it('create, restart, create: two different uuids, the first render unchanged; a store without its world is refused', async () => {
    const first = await start();
    expect(first.out).toMatch(/v1 simulator: a new world \([0-9a-f-]{36}, seed 1, scale tiny\), kept in \S+demo-v1-world\.jsonl across restarts/);
    const before = await (await session()).create('Made before the restart');
    await first.stop();

    const second = await start();
    expect(second.out).toContain('v1 simulator: the world kept in');
    const s = await session();
    const after = await s.create('Made after the restart');
    expect(after).not.toBe(before);
    expect(await s.title(before)).toBe('Made before the restart');
    expect(await s.title(after)).toBe('Made after the restart');
    await second.stop();

    // the world is gone (its journal removed): the store it filled is refused, not mixed with a new world
    const journal = join(dir, 'demo-v1-world.jsonl');
    expect(existsSync(journal)).toBe(true);
    rmSync(journal);
    const refused = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, V1_BASE_URL: '', PORT: String(port), HOST: '127.0.0.1', SIM_PORT: '0', SIM_SCALE: 'tiny', DATABASE_URL: join(dir, 'demo.db'), LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    refused.stderr!.on('data', (d: Buffer) => { stderr += d; });
    const code = await new Promise((r) => refused.once('exit', r));
    expect(code).toBe(78);
    expect(stderr).toMatch(/^this store was filled from the v1 simulator world [0-9a-f-]{36} \(seed 1, scale tiny\); the simulator now runs world /);
    expect(stderr).toContain('or start afresh: stop the demo, remove');
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});
