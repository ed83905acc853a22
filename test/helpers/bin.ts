import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

/** The compiled operator command line (`npm run build` makes it). */
export const BIN = resolve('dist/src/cli/main.js');

export interface Run { code: number | null; stdout: string; stderr: string }

/** Runs node with `argv` (the bin and its arguments, by default) and collects what it prints and its exit code. */
export function runNode(argv: readonly string[], env: Record<string, string | undefined>, cwd?: string): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(process.execPath, argv, { env, stdio: ['ignore', 'pipe', 'pipe'], ...(cwd ? { cwd } : {}) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** `legacy-gateway <args>` with `env`. */
export const runBin = (args: readonly string[], env: Record<string, string | undefined>): Promise<Run> => runNode([BIN, ...args], env);
