import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importUsers } from '../../src/admin/operations.js';
import { parseCsv } from '../../src/lib/csv.js';
import { usersCommand } from '../../src/cli/users-command.js';
import { loadConfig } from '../../src/config/schema.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { createLogger } from '../../src/log/logger.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/** `users import` reports where it is while it works (the slow steps: keys checked with v1, plaintext passwords hashed). */
const SECRETS = { ENCRYPTION_KEY: '11'.repeat(32), JWT_SECRET: 'test-secret-test-secret-test-secret-0123', GATEWAY_ADMIN_TOKEN: 'operator-token-0123456789' };
let sim: RunningSim;
let deps: Deps;
const dir = mkdtempSync(join(tmpdir(), 'gw-import-progress-'));
beforeAll(async () => {
  sim = await startSim();
  deps = await createDeps(loadConfig({ ...SECRETS, V1_BASE_URL: sim.url, DATABASE_URL: join(dir, 'gateway.db'), LOG_LEVEL: 'silent' }), createLogger('silent'));
});
afterAll(async () => { await deps.close(); await sim.sim.close(); });

const csv = (from: number, n: number) => ['id,email,password,v1_key', ...Array.from({ length: n }, (_, i) =>
  `00000000-0000-4000-9000-${String(from + i).padStart(12, '0')},p${from + i}@example.com,plain-password-${i},${sim.keys[i % 2]!.api_key}`)].join('\n');

describe('users import progress', { timeout: 60_000 }, () => {
  it('is told of every key checked and every password hashed, not only of each 500 rows written', async () => {
    const seen: string[] = [];
    const r = await importUsers(deps, parseCsv(csv(0, 3)), { onProgress: (done, total, phase) => seen.push(`${phase} ${done}/${total}`) });
    expect(r).toMatchObject({ imported: 3, problems: [] });
    expect(seen).toEqual([
      'checking keys 1/2', 'checking keys 2/2',
      'hashing passwords 1/3', 'hashing passwords 2/3', 'hashing passwords 3/3',
      'writing 3/3',
    ]);
  });

  it('the command prints lines with counts, rate and what is left while it runs (ticked by the test, a manual clock)', async () => {
    const file = join(dir, 'users.csv');
    writeFileSync(file, csv(100, 4));
    const lines: string[] = [];
    let now = 0;
    const schedule = (tick: () => void) => {
      let on = true;
      const again = () => { if (!on) return; now += 1000; tick(); setImmediate(again); };
      setImmediate(again);
      return () => { on = false; };
    };
    const out = process.stdout.write.bind(process.stdout);
    (process.stdout as { write: unknown }).write = () => true;
    let code: number;
    try {
      code = await usersCommand(deps, 'users', 'import', file, {}, undefined, undefined, { progress: { sink: { write: (s: string) => lines.push(s) }, now: () => now, schedule } });
    } finally {
      (process.stdout as { write: unknown }).write = out;
    }
    expect(code).toBe(0);
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(l).toMatch(/^users import: (checking rows|checking keys|hashing passwords|writing) \d\/\d (keys|rows)(, [\d.]+ (keys|rows)\/s)?, \d left( \(about [\d.]+ (s|min|h)\))?\n$/);
    expect(lines.some((l) => /^users import: hashing passwords \d\/4 rows/.test(l))).toBe(true);
  });
});
