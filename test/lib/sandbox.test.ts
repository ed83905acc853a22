import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSandboxed, SCRATCH_STALE_MS, sweepScratch, withScratch } from '../../src/lib/sandbox.js';

/** The proof's sandbox: a program with only the environment given, its whole process group bounded. */
const sh = (script: string, limits = { timeoutMs: 10_000, outputBytes: 1_000_000 }, env: Record<string, string> = {}) =>
  withScratch(async (dir) => {
    writeFileSync(join(dir, 'p.sh'), script);
    return runSandboxed('sh', ['p.sh'], dir, env, limits);
  });

/** Running (a killed process not yet reaped by its new parent is a zombie: not running). */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

describe('runSandboxed', () => {
  it('answers what the program printed; what it left running goes with it (a pipeline of a curl script outlived its sh)', async () => {
    const r = await sh('sleep 300 &\necho "$!"\n', { timeoutMs: 3_000, outputBytes: 1_000_000 });
    expect(r.ok).toBe(true);
    const pid = Number((r as { stdout: string }).stdout.trim());
    expect(pid).toBeGreaterThan(1);
    for (let i = 0; i < 100 && alive(pid); i++) await new Promise((ok) => setTimeout(ok, 10));
    expect(alive(pid)).toBe(false);
  });

  it('kills the whole group past its time, and says so', async () => {
    const r = await sh('sleep 30 | cat\n', { timeoutMs: 200, outputBytes: 1_000_000 });
    expect(r).toEqual({ ok: false, why: 'ran longer than 200 ms' });
  });

  it('stops a program past its output cap', async () => {
    const r = await sh('yes | head -c 100000\n', { timeoutMs: 10_000, outputBytes: 1_000 });
    expect(r).toEqual({ ok: false, why: 'wrote more than 1000 bytes' });
  });

  it('passes only the environment given (none of the gateway\'s own variables)', async () => {
    process.env.SANDBOX_TEST_SECRET = 'gateway-secret';
    try {
      const r = await sh('echo "[$SANDBOX_TEST_SECRET][$GIVEN]"\n', undefined, { GIVEN: 'given' });
      expect(r).toEqual({ ok: true, stdout: '[][given]\n' });
    } finally {
      delete process.env.SANDBOX_TEST_SECRET;
    }
  });

  it('names a program the script needs and this machine lacks; a failure says its exit code and last words', async () => {
    expect(await sh('no_such_program_zz --version\n')).toEqual({ ok: false, why: 'no_such_program_zz is not installed here' });
    expect(await sh('echo oops >&2\nexit 3\n')).toEqual({ ok: false, why: 'exit 3: oops' });
    expect(await withScratch((dir) => runSandboxed('no-such-binary-zz', [], dir, {}, { timeoutMs: 1000, outputBytes: 10 })))
      .toEqual({ ok: false, why: 'no-such-binary-zz is not installed here' });
  });
});

describe('sweepScratch', () => {
  it('removes the scratch folders a dead process left (untouched past SCRATCH_STALE_MS), never a recent one (attack pass 23, L3)', async () => {
    const old = mkdtempSync(join(tmpdir(), 'gateway-sandbox-'));
    writeFileSync(join(old, 'renders.json'), '[{"id":"rend_x"}]');
    const ago = (Date.now() - SCRATCH_STALE_MS - 60_000) / 1000;
    utimesSync(old, ago, ago);
    const recent = mkdtempSync(join(tmpdir(), 'gateway-sandbox-'));
    try {
      await sweepScratch(SCRATCH_STALE_MS);
      expect(existsSync(old)).toBe(false);
      expect(existsSync(recent)).toBe(true);
    } finally {
      rmSync(old, { recursive: true, force: true });
      rmSync(recent, { recursive: true, force: true });
    }
  });
});
