import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true })
  .flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));

describe('src/ shape', () => {
  it('has no line over 160 characters', () => {
    const long = files('src').flatMap((f) => readFileSync(f, 'utf8').split('\n').flatMap((l, i) => ([...l].length > 160 ? [`${f}:${i + 1}`] : [])));
    expect(long).toEqual([]);
  });

  it('has no file over 400 lines (issue 40: one job a file)', () => {
    const big = files('src').flatMap((f) => {
      const lines = readFileSync(f, 'utf8').replace(/\n$/, '').split('\n').length;
      return lines > 400 ? [`${f}: ${lines}`] : [];
    });
    expect(big).toEqual([]);
  });
});
