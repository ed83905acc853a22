/**
 * npm run bench:import — `legacy-gateway users import` of 100 000 rows with argon2 hashes (what a Directus export holds),
 * 3 distinct v1 keys, against the simulator in its own process; then the rate of hashing plaintext passwords.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './support.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const PLAIN = Number(process.env.BENCH_PLAIN ?? 200);
const HASH = '$argon2id$v=19$m=65536,t=3,p=4$5z0bVsux3V8XB8HIBPEfcw$GQPnIqy4lZ5mfUDMzpmEEOsK9jNODchul9aLQbK4Fe8';
const port = await freePort();
const sim = spawn(process.execPath, ['dist/src/sim/cli.js', '--port', String(port), '--scale', 'tiny', '--clock', 'manual'], { stdio: ['ignore', 'pipe', 'inherit'] });
await new Promise<void>((resolve) => sim.stdout!.on('data', (d: Buffer) => { if (d.toString().includes('v1 simulator on')) resolve(); }));
const url = `http://127.0.0.1:${port}`;
const keys = ((await (await fetch(`${url}/_sim/keys`)).json()) as { api_key: string }[]).slice(0, 3).map((k) => k.api_key);
const dir = mkdtempSync(join(tmpdir(), 'bench-import-'));
const env = { ...process.env, V1_BASE_URL: url, DATABASE_URL: join(dir, 'gateway.db'), ENCRYPTION_KEY: '55'.repeat(32), JWT_SECRET: 'bench-secret-bench-secret-bench-secret' };
const uuid = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const file = (name: string, n: number, pw: (i: number) => string, from = 0) => {
  const lines = ['id,email,password,first_name,last_name,role,v1_key'];
  for (let i = from; i < from + n; i++) lines.push(`${uuid(i)},user${i}@example.com,"${pw(i)}",First${i},Last${i},,${keys[i % 3]}`);
  writeFileSync(join(dir, name), `${lines.join('\n')}\n`);
  return join(dir, name);
};
const run = (path: string) => {
  const started = performance.now();
  const r = spawnSync(process.execPath, ['dist/src/cli/main.js', 'users', 'import', path], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`import failed: ${r.stdout}${r.stderr}`);
  return { seconds: (performance.now() - started) / 1000, out: r.stdout.trim() };
};
const hashed = run(file('hashed.csv', ROWS, () => HASH));
const plain = run(file('plain.csv', PLAIN, (i) => `plaintext-password-${i}`, ROWS));
process.stdout.write(`| import | rows | time | rows/s |\n|---|---|---|---|\n`);
process.stdout.write(`| argon2 hashes as exported, 3 distinct keys | ${ROWS} | ${hashed.seconds.toFixed(1)} s | ${Math.round(ROWS / hashed.seconds)} |\n`);
process.stdout.write(`| plaintext passwords (hashed, 2 at a time) | ${PLAIN} | ${plain.seconds.toFixed(1)} s | ${Math.round(PLAIN / plain.seconds)} |\n`);
process.stdout.write(`${hashed.out.split('\n').at(-1)}\nNode ${process.version}; SQLite store; the whole CLI process timed (start-up and migrations included).\n`);
sim.kill('SIGTERM');
rmSync(dir, { recursive: true, force: true });
