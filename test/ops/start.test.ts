import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * `npm start` builds only when something it is built from changed: its prestart, run in a scratch project whose build
 * step records each run (instead of compiling), must skip the build the second time — what makes a restart answer at
 * once — and build again when a source, a tsconfig file or an output changes.
 */
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-start-'));
  if (existsSync('scripts')) cpSync('scripts', join(dir, 'scripts'), { recursive: true });
  mkdirSync(join(dir, 'src', 'sub'), { recursive: true });
  writeFileSync(join(dir, 'src', 'main.ts'), 'export {};\n');
  writeFileSync(join(dir, 'src', 'sub', 'part.ts'), 'export {};\n');
  writeFileSync(join(dir, 'tsconfig.json'), '{}\n');
  writeFileSync(join(dir, 'tsconfig.build.json'), '{"include":["src"]}\n');
  // the build: one line in build.log per run, and an output per source (as tsc writes dist/src/**/*.js)
  writeFileSync(join(dir, 'build.mjs'), `import { appendFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
if (process.env.FAIL_BUILD) process.exit(1);
appendFileSync('build.log', 'built\\n');
for (const f of readdirSync('src', { recursive: true }).filter((f) => f.endsWith('.ts'))) {
  mkdirSync(dirname('dist/src/' + f), { recursive: true });
  writeFileSync('dist/src/' + f.replace(/\\.ts$/, '.js'), '');
}
`);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module', scripts: { build: 'node build.mjs', prestart: pkg.scripts.prestart } }));
  return dir;
}

/** Runs the repository's prestart command in `dir`; returns how many builds have run so far. */
function prestart(dir: string, env: Record<string, string> = {}): { status: number | null; builds: number; out: string } {
  const r = spawnSync('sh', ['-c', pkg.scripts.prestart!], { cwd: dir, env: { ...process.env, ...env }, encoding: 'utf8' });
  const log = join(dir, 'build.log');
  return { status: r.status, builds: existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0, out: r.stdout + r.stderr };
}

const stampStarted = (dir: string) => (JSON.parse(readFileSync(join(dir, 'dist', '.build-stamp'), 'utf8')) as { started: number }).started;
/** Marks a path as changed just after the last build started (never in the future: no wait on the clock). */
const touchAfterBuild = (dir: string, path: string) => {
  const t = new Date(stampStarted(dir) + 1);
  utimesSync(join(dir, path), t, t);
};

describe('npm start', { timeout: 90_000 }, () => {
  /** A scratch project built once by its prestart (the state after a first `npm start`). */
  const built = (test: (dir: string) => void) => () => {
    const dir = project();
    try {
      expect(prestart(dir)).toMatchObject({ status: 0, builds: 1 });
      test(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('skips the build while nothing changed (a second start answers at once)', built((dir) => {
    const second = prestart(dir);
    expect(second).toMatchObject({ status: 0, builds: 1 });
    expect(second.out).toContain('build skipped');
    expect(prestart(dir).builds).toBe(1);
  }));

  it('builds again after a source changed, then skips again', built((dir) => {
    touchAfterBuild(dir, 'src/sub/part.ts');
    expect(prestart(dir)).toMatchObject({ status: 0, builds: 2 });
    expect(prestart(dir).builds).toBe(2);
  }));

  it('builds again after a tsconfig file changed', built((dir) => {
    touchAfterBuild(dir, 'tsconfig.build.json');
    expect(prestart(dir).builds).toBe(2);
  }));

  it('builds again after a source was added or an output removed', built((dir) => {
    appendFileSync(join(dir, 'src', 'sub', 'new.ts'), 'export {};\n');
    touchAfterBuild(dir, 'src/sub/new.ts');
    touchAfterBuild(dir, 'src/sub');
    expect(prestart(dir).builds).toBe(2);
    expect(prestart(dir).builds).toBe(2);
    rmSync(join(dir, 'dist', 'src', 'main.js'));
    expect(prestart(dir).builds).toBe(3);
  }));

  it('a failed build fails the start and is not taken for a build (the next start builds again)', () => {
    const dir = project();
    try {
      const failed = prestart(dir, { FAIL_BUILD: '1' });
      expect(failed.status).not.toBe(0);
      expect(prestart(dir)).toMatchObject({ status: 0, builds: 1 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('its inputs are what the build compiles (tsconfig.build.json includes src/ only); the start command is the one the image runs (malloc setting, node flag)', () => {
    expect((JSON.parse(readFileSync('tsconfig.build.json', 'utf8')) as { include: string[] }).include).toEqual(['src']);
    expect(pkg.scripts.start).toBe('MALLOC_MMAP_THRESHOLD_=131072 node --max-semi-space-size=8 dist/src/main.js');
    expect(resolve(pkg.scripts.prestart!.split(' ').at(-1)!)).toBe(resolve('scripts/build-if-stale.mjs'));
  });
});
