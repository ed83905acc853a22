import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../src/config/schema.js';

/** docs/configuration.md documents every variable of the config schema in its tables (and names no other there). */
const page = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
// the tables of variables end where the page lists what other programs read
const variablesPart = page.split(/^## Not part of the schema$/m)[0] ?? page;
/** The variables named (in backticks) in the first cell of each table row. */
const documented = new Set(
  variablesPart
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1] as string)),
);
const schemaKeys = Object.keys(ConfigSchema.shape);

describe('docs/configuration.md', () => {
  it('has a table row for every variable of ConfigSchema', () => {
    expect(schemaKeys.length).toBeGreaterThan(50);
    expect(schemaKeys.filter((k) => !documented.has(k))).toEqual([]);
  });

  it('names no variable in its tables that ConfigSchema lacks', () => {
    expect([...documented].filter((k) => !schemaKeys.includes(k))).toEqual([]);
  });
});
