import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** npm start's words: the environment it sets (`NAME=value` before the command), then the command. */
function npmStart(): { env: Record<string, string>; argv: string[] } {
  const words = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/);
  const env: Record<string, string> = {};
  while (words[0] && /^[A-Z_][A-Z0-9_]*=/.test(words[0])) {
    const [name, ...value] = (words.shift() as string).split('=');
    env[name as string] = value.join('=');
  }
  return { env, argv: words };
}

describe('deployment', () => {
  const dockerfile = readFileSync('Dockerfile', 'utf8');

  it('the image runs the gateway with the node flags of npm start (the benchmarks measure those)', () => {
    const cmd = /^CMD (\[.*\])$/m.exec(dockerfile)?.[1];
    expect(cmd).toBeDefined();
    const argv = JSON.parse(cmd!) as string[];
    expect(argv).toEqual(npmStart().argv);
    expect(argv).toContain('--max-semi-space-size=8');
    expect(argv.at(-1)).toBe('dist/src/main.js');
  });

  it('the image sets the environment npm start sets (glibc reads its malloc settings before the process can)', () => {
    const { env } = npmStart();
    expect(env.MALLOC_MMAP_THRESHOLD_).toBe('131072');
    for (const [name, value] of Object.entries(env)) expect(dockerfile).toMatch(new RegExp(`^ENV ${name}=${value}$`, 'm'));
  });
});
