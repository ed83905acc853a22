import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/schema.js';

/**
 * The shell commands of README.md and docs/ work with the variables as set: an address of the gateway or the simulator
 * is written `${PORT:-8080}`, with the default docs/configuration.md gives for the variable (and the schema has), never
 * a bare number the variable may have changed — unless the same block chooses that port itself (`--port 8070`).
 */
const pages = ['README.md', ...readdirSync('docs').filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const shellBlocks = (text: string) => [...text.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)].map((m) => m[1] as string);

/** Variable → default, from the rows of docs/configuration.md (`| \`A\` / \`B\` | \`1\` / \`2\` | … |`). */
const tableDefaults = new Map<string, string>();
for (const row of readFileSync('docs/configuration.md', 'utf8').split('\n').filter((l) => l.startsWith('| `'))) {
  const [, names = '', defaults = ''] = row.split('|');
  const vars = [...names.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1] as string);
  const values = defaults.split(' / ').map((d) => /`([^`]*)`/.exec(d)?.[1]);
  vars.forEach((v, i) => { if (values[i] !== undefined) tableDefaults.set(v, values[i] as string); });
}

/** True when the shell would read position `at` of `block` inside single quotes (where `${…}` is not expanded). */
function singleQuoted(block: string, at: number): boolean {
  let single = false;
  let double = false;
  for (let i = 0; i < at; i++) {
    const c = block[i];
    if (c === '\\' && !single) i++;
    else if (c === "'" && !double) single = !single;
    else if (c === '"' && !single) double = !double;
    else if (c === '#' && !single && !double && /\s/.test(block[i - 1] ?? ' ')) { // a comment, to the end of its line
      const nl = block.indexOf('\n', i);
      i = nl < 0 ? at : nl - 1;
    }
  }
  return single;
}

describe('commands in README.md and docs/', () => {
  const addresses = pages.flatMap((page) => shellBlocks(readFileSync(page, 'utf8')).flatMap((block) => {
    const chosen = new Set([...block.matchAll(/--port[ =](\d+)/g)].map((m) => m[1]));
    return [...block.matchAll(/(?:localhost|127\.0\.0\.1):(\$\{[^}]*\}|\d+)/g)]
      .map((m) => ({ page, text: m[0], port: m[1] as string, chosen, quoted: singleQuoted(block, m.index) }));
  }));

  it('found the addresses to check (the demo block of README.md among them)', () => {
    expect(addresses.filter((a) => a.page === 'README.md').length).toBeGreaterThan(5);
  });

  it('write every port as ${VARIABLE:-default} with the configuration table\'s default, or as a port the block itself chose', () => {
    const wrong = addresses.filter((a) => {
      const v = /^\$\{([A-Z_]+):-(\d+)\}$/.exec(a.port);
      if (v) return tableDefaults.get(v[1]!) !== v[2];
      return !a.chosen.has(a.port);
    });
    expect(wrong.map((a) => `${a.page}: ${a.text}`)).toEqual([]);
    // and the shell expands them: not inside single quotes
    expect(addresses.filter((a) => a.port.startsWith('$') && a.quoted).map((a) => `${a.page}: ${a.text}`)).toEqual([]);
  });

  it('the table\'s defaults of the port variables are the schema\'s', () => {
    const demo = loadConfig({});
    expect(tableDefaults.get('PORT')).toBe(String(demo.PORT));
    expect(tableDefaults.get('SIM_PORT')).toBe(String(demo.SIM_PORT));
  });
});
