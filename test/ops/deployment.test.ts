import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

describe('deployment', () => {
  it('the image runs the gateway with the node flags of npm start (the benchmarks measure those)', () => {
    const start = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/);
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync('Dockerfile', 'utf8'))?.[1];
    expect(cmd).toBeDefined();
    const argv = JSON.parse(cmd!) as string[];
    expect(argv).toEqual(start);
    expect(argv).toContain('--max-semi-space-size=8');
    expect(argv.at(-1)).toBe('dist/src/main.js');
  });
});
