import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

// Every source file is named in docs/architecture.md — by its path under src/, or by its file name in the folder
// table's row of its top folder — so a newcomer reading the doc finds every file's job (the reading tests' miss).
const root = join(import.meta.dirname, '..', '..');
const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []);
}

/** The folder table's row of a top folder (`| \`src/replica/\` | …`), or '' when it has none. */
function rowOf(top: string): string {
  const start = doc.split('\n').filter((l) => l.startsWith('| `src/'));
  return start.filter((l) => l.split('|')[1]!.includes(`src/${top}/`)).join('\n');
}

export function unnamed(files: string[]): string[] {
  return files.filter((rel) => {
    if (doc.includes(rel)) return false;
    const parts = rel.split('/');
    if (parts.length === 1) return true;
    const row = rowOf(parts[0]!);
    const inRow = parts.slice(1).join('/');
    const name = parts.at(-1)!;
    return !(row.includes('`' + inRow + '`') || row.includes(inRow) || row.includes('`' + name + '`'));
  });
}

describe('docs/architecture.md names every source file', () => {
  const src = join(root, 'src');
  const files = sources(src).map((f) => relative(src, f).split(sep).join('/'));

  it('finds the source files (the walk itself works)', () => {
    expect(files.length).toBeGreaterThan(250);
    expect(files).toContain('read/items.ts');
  });

  it('has no source file it never names', () => {
    expect(unnamed(files)).toEqual([]);
  });

  it('would report a file it never names', () => {
    expect(unnamed(['auth/never-heard-of.ts', 'read/items.ts'])).toEqual(['auth/never-heard-of.ts']);
  });
});
