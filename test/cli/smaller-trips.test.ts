import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, runBin, runNode } from '../helpers/bin.js';
import { validReportLink } from '../../src/compare/links.js';
import { loadConfig } from '../../src/config/schema.js';
import { createDeps } from '../../src/deps.js';
import { createLogger } from '../../src/log/logger.js';
import { ClientShapeStore } from '../../src/store/client-shapes.js';

/** The smaller command-line trips of a first trial: compare link in demo mode, migrate report of a client never seen. */
const SECRETS = { ENCRYPTION_KEY: '11'.repeat(32), JWT_SECRET: 'test-secret-test-secret-test-secret-0123', GATEWAY_ADMIN_TOKEN: 'operator-token-0123456789' };
const base: Record<string, string> = { ...(process.env as Record<string, string>), LOG_LEVEL: 'silent' };
for (const k of ['V1_BASE_URL', 'ENCRYPTION_KEY', 'JWT_SECRET', 'GATEWAY_ADMIN_TOKEN', 'DATABASE_URL']) delete base[k];

const run = runBin;

describe('compare link in demo mode', { timeout: 60_000 }, () => {
  it("signs with the demo's own operator token (its secrets file), as the gateway does", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-link-'));
    const token = 'demo-operator-token-0123456789';
    writeFileSync(join(dir, 'demo-secrets.json'), JSON.stringify({ ENCRYPTION_KEY: '22'.repeat(32), JWT_SECRET: 'j'.repeat(40), GATEWAY_ADMIN_TOKEN: token }));
    const r = await run(['compare', 'link'], { ...base, DATABASE_URL: join(dir, 'demo.db') });
    expect(r.code, r.stderr).toBe(0);
    const link = new URL(r.stdout.trim()).searchParams.get('link');
    expect(r.stdout).toMatch(/^http:\/\/localhost:8080\/_gateway\/compare\/view\?link=/);
    expect(validReportLink(token, link, Date.now())).toBe(true);
  });

  it('before the demo has run: one line naming the secrets file and what to do, exit 1; nothing created', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-link-none-'));
    const r = await run(['compare', 'link'], { ...base, DATABASE_URL: join(dir, 'demo.db') });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`compare link signs with the demo's GATEWAY_ADMIN_TOKEN, kept in ${join(dir, 'demo-secrets.json')}, which does not exist yet: ` +
      'start the demo first (npm start) in this folder, or set GATEWAY_ADMIN_TOKEN\n');
  });
});

describe('migrate report --client naming no recorded client', { timeout: 60_000 }, () => {
  let env: Record<string, string>;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-report-client-'));
    env = { ...base, ...SECRETS, V1_BASE_URL: 'http://127.0.0.1:9', DATABASE_URL: join(dir, 'gateway.db') };
    const deps = await createDeps(loadConfig(env), createLogger('silent'));
    const shape = JSON.stringify({ method: 'GET', route: '/renders', params: ['fields', 'limit'] });
    await new ClientShapeStore(deps.db.kysely).apply(['user:11111111-1111-4111-8111-111111111111~curl', 'static:tok_a~python-urllib'].map((client) => ({
      client, userId: '11111111-1111-4111-8111-111111111111', key: 'GET /renders fields,limit', shape, count: 1, errors: 0, msTotal: 1, msMax: 1,
      calls: new Map([[1, 1]]), first: Date.now(), last: Date.now(), compared: 0, differing: 0,
    })));
    await deps.close();
  });

  it('exits 1 naming the client and the known ones (not 0 with an empty table)', async () => {
    const r = await run(['migrate', 'report', '--client', 'user:nope', '--skip-proof'], env);
    expect(r.code, r.stdout).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('no client user:nope among the recorded ones: static:tok_a~python-urllib, user:11111111-1111-4111-8111-111111111111~curl ' +
      '(legacy-gateway migrate report without --client reports them all)\n');
  });

  it('replay: a malformed line is named by its file and line, exit 1, one line, nothing sent', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'gw-replay-line-')), 'requests.jsonl');
    writeFileSync(file, `${JSON.stringify({ method: 'GET', path: '/projects' })}\n{"method":"GET","path":\n`);
    const r = await run(['replay', file, '--legacy', 'http://127.0.0.1:9', '--gateway', 'http://127.0.0.1:10', '--gateway-token', 't'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^replay: nothing was sent: ${file.replace(/[.]/g, '\\.')}:2: not a JSON object \\([^\n]+\\)\n$`));
  });
});

describe('words a command does not take', { timeout: 60_000 }, () => {
  it('are refused with exit 2 naming them, before anything is done', async () => {
    const env = { ...base, DATABASE_URL: join(mkdtempSync(join(tmpdir(), 'gw-words-')), 'store.db') };
    for (const [args, word] of [
      [['migrate', 'reprot', '--client', 'x'], 'reprot'], [['migrate', 'report', 'user:x'], 'user:x'], [['index', 'sync', 'team_x'], 'team_x'],
      [['users', 'list', 'a', 'b'], 'b'],
    ] as const) {
      const r = await run([...args], env);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(`"${word}"`);
      expect(r.stdout, args.join(' ')).not.toContain('up to date');
    }
  });
});

describe('migrate report with v1 unreachable', { timeout: 60_000 }, () => {
  it('exits 1 naming v1 and --skip-proof (every proof would fail); --skip-proof still reports', async () => {
    const env = { ...base, DATABASE_URL: join(mkdtempSync(join(tmpdir(), 'gw-nov1-')), 'store.db'), V1_BASE_URL: 'http://127.0.0.1:9',
      ENCRYPTION_KEY: '11'.repeat(32), JWT_SECRET: 'test-secret-test-secret-test-secret-0123' };
    const r = await run(['migrate', 'report'], env);
    expect(r.code, r.stdout).toBe(1);
    expect(r.stderr).toMatch(/reachable v1.*127\.0\.0\.1:9.*--skip-proof|--skip-proof[\s\S]*127\.0\.0\.1:9/);
    const skipped = await run(['migrate', 'report', '--skip-proof'], env);
    expect(skipped.code, skipped.stderr).toBe(0);
  });
});

describe('a store command where the demo never ran', { timeout: 60_000 }, () => {
  it('says to start the demo first and creates nothing (no ./data, no store, no demo secrets)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-nodemo-'));
    for (const args of [['users', 'list'], ['tokens', 'list'], ['index', 'sync']]) {
      const r = await runNode([BIN, ...args], { ...base, MAPPINGS_DIR: resolve('mappings') }, dir);
      expect(r.code, `${args.join(' ')}: ${r.stdout}`).toBe(1);
      expect(r.stderr, args.join(' ')).toContain('start the demo here first');
      expect(existsSync(join(dir, 'data')), args.join(' ')).toBe(false);
    }
  });
});
