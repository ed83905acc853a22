#!/usr/bin/env node
// `npm start`'s prestart: runs `npm run build` only when the build is missing or older than what it is built from
// (everything under src/, and the tsconfig files), so a restart with nothing changed starts at once.
// The mappings are not inputs: they are read at start-up from MAPPINGS_DIR, never compiled.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = process.cwd();
/** Written after a build that succeeded: the time that build started (a source saved during it is newer). */
const STAMP = join(root, 'dist', '.build-stamp');
const CONFIGS = ['tsconfig.json', 'tsconfig.build.json'];

/** Every directory and file under `dir` (a directory's mtime moves when a file in it is added, removed or renamed). */
function walk(dir, out = []) {
  out.push(dir);
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

/** Why the build must run, or undefined when it is current. */
function staleness() {
  if (!existsSync(STAMP)) return 'no build recorded yet (dist/.build-stamp)';
  let started;
  try { started = JSON.parse(readFileSync(STAMP, 'utf8')).started; } catch { started = undefined; }
  if (typeof started !== 'number') return 'dist/.build-stamp is unreadable';
  const inputs = [...walk(join(root, 'src')), ...CONFIGS.map((f) => join(root, f)).filter((f) => existsSync(f))];
  for (const p of inputs) {
    if (statSync(p).mtimeMs >= started) return `${relative(root, p)} changed since the last build`;
    const m = /^src[\\/](.+)\.ts$/.exec(relative(root, p));
    if (m && !p.endsWith('.d.ts') && !existsSync(join(root, 'dist', 'src', `${m[1]}.js`))) return `dist/src/${m[1]}.js is missing`;
  }
  return undefined;
}

const why = staleness();
if (!why) {
  process.stdout.write('build skipped: dist/ is current (nothing in src/ or the tsconfig files changed since the last build)\n');
  process.exit(0);
}
process.stdout.write(`building: ${why}\n`);
const started = Date.now();
// the npm that runs this script (npm start), else the one on the PATH
const npmCli = /npm-cli\.js$/.test(process.env.npm_execpath ?? '') ? process.env.npm_execpath : undefined;
const build = npmCli
  ? spawnSync(process.execPath, [npmCli, 'run', 'build'], { stdio: 'inherit' })
  : spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
writeFileSync(STAMP, `${JSON.stringify({ started })}\n`);
