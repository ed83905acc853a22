import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What one program run in a sandbox may spend. */
export interface SandboxLimits {
  /** Wall time, then the program is killed. */
  readonly timeoutMs: number;
  /** Bytes of standard output (and of standard error), then the program is killed. */
  readonly outputBytes: number;
}

export type SandboxRun = { readonly ok: true; readonly stdout: string } | { readonly ok: false; readonly why: string };

/**
 * Runs a program in a scratch folder with only the environment it is given (no variable of the gateway's own: its keys
 * and secrets are not passed on), within a time and an output cap. Never throws for the program's failure: says why.
 */
export function runSandboxed(file: string, args: readonly string[], cwd: string, env: Readonly<Record<string, string>>, limits: SandboxLimits)
  : Promise<SandboxRun> {
  return new Promise((done) => {
    execFile(file, [...args], {
      cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, LANG: 'C.UTF-8', ...env },
      timeout: limits.timeoutMs, maxBuffer: limits.outputBytes, killSignal: 'SIGKILL', windowsHide: true, encoding: 'utf8',
    }, (err, stdout, stderr) => {
      if (!err) return done({ ok: true, stdout });
      const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: unknown };
      if (e.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') return done({ ok: false, why: `wrote more than ${limits.outputBytes} bytes` });
      if (e.killed) return done({ ok: false, why: `ran longer than ${limits.timeoutMs} ms` });
      if (e.code === 'ENOENT') return done({ ok: false, why: `${file} is not installed here` });
      const said = String(stderr ?? '').trim().split('\n').filter(Boolean).slice(-2).join(' | ');
      return done({ ok: false, why: `exit ${typeof e.code === 'number' ? e.code : '?'}${said ? `: ${said}` : ''}` });
    });
  });
}

/** A scratch folder for `use`, removed afterwards whatever happens. */
export async function withScratch<T>(use: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'gateway-sandbox-'));
  try {
    return await use(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
