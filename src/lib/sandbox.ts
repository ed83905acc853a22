import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What one program run in a sandbox may spend. */
export interface SandboxLimits {
  /** Wall time, then the program and every process it started are killed. */
  readonly timeoutMs: number;
  /** Bytes of standard output (and of standard error), then they are killed. */
  readonly outputBytes: number;
}

export type SandboxRun = { readonly ok: true; readonly stdout: string } | { readonly ok: false; readonly why: string };

/**
 * Runs a program in a scratch folder with only the environment it is given (no variable of the gateway's own: its keys
 * and secrets are not passed on), within a time and an output cap, in a process group of its own: past a cap the whole
 * group is killed (a shell's pipelines and the programs they started with it). Never throws for the program's failure:
 * says why.
 */
export function runSandboxed(file: string, args: readonly string[], cwd: string, env: Readonly<Record<string, string>>, limits: SandboxLimits)
  : Promise<SandboxRun> {
  return new Promise((done) => {
    const child = spawn(file, [...args], {
      cwd, env: { ...env, PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, LANG: 'C.UTF-8' }, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let stopped: string | null = null;
    let settled = false;
    const finish = (r: SandboxRun) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      done(r);
    };
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch { /* already gone */ }
    };
    const stop = (why: string) => {
      stopped ??= why;
      killGroup();
    };
    const timer = setTimeout(() => stop(`ran longer than ${limits.timeoutMs} ms`), limits.timeoutMs);
    child.stdout.on('data', (b: Buffer) => {
      outBytes += b.length;
      if (outBytes > limits.outputBytes) stop(`wrote more than ${limits.outputBytes} bytes`);
      else out.push(b);
    });
    child.stderr.on('data', (b: Buffer) => {
      errBytes += b.length;
      if (errBytes <= 64 * 1024) err.push(b);
    });
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    child.on('error', (e: NodeJS.ErrnoException) => finish({ ok: false, why: e.code === 'ENOENT' ? `${file} is not installed here` : e.message }));
    // whatever it started and left behind goes with it (its pipes close then)
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      killGroup();
    });
    child.on('close', () => {
      if (stopped) return finish({ ok: false, why: stopped });
      const { code, signal } = exit ?? { code: null, signal: null };
      const said = Buffer.concat(err).toString('utf8').trim().split('\n').filter(Boolean).slice(-2).join(' | ');
      if (code === 0) return finish({ ok: true, stdout: Buffer.concat(out).toString('utf8') });
      // a program the script runs is missing (sh: 127, "jq: not found")
      const missing = code === 127 ? /(\S+): (?:command )?not found/.exec(said) : null;
      if (missing) return finish({ ok: false, why: `${missing[1]} is not installed here` });
      return finish({ ok: false, why: `exit ${code ?? signal ?? '?'}${said ? `: ${said}` : ''}` });
    });
  });
}

/** A scratch folder for `use`, removed afterwards whatever happens. */
export async function withScratch<T>(use: (dir: string) => Promise<T>): Promise<T> {
  swept ??= sweepScratch(SCRATCH_STALE_MS).catch(() => undefined);
  const dir = await mkdtemp(join(tmpdir(), 'gateway-sandbox-'));
  try {
    return await use(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A scratch folder untouched this long is stale: a run lasts its time cap (seconds); a process that died mid-run (a
 * report killed) left it behind, with the client's v1 data the snippet read (attack pass 23, L3).
 */
export const SCRATCH_STALE_MS = 10 * 60_000;
let swept: Promise<void> | undefined;

/** Removes the stale scratch folders (once a process, at its first run): those not modified for `maxAgeMs`. */
export async function sweepScratch(maxAgeMs: number, now = Date.now()): Promise<void> {
  for (const name of await readdir(tmpdir())) {
    if (!name.startsWith('gateway-sandbox-')) continue;
    const dir = join(tmpdir(), name);
    const at = await stat(dir).then((x) => x.mtimeMs, () => undefined);
    if (at !== undefined && now - at > maxAgeMs) await rm(dir, { recursive: true, force: true });
  }
}
