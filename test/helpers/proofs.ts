import { expect } from 'vitest';
import type { ShapeReport } from '../../src/migrate/report.js';

/** The shape of `key` is proven equal in every language, no step left to the client: its proof. */
export function provenEqual(byKey: ReadonlyMap<string, ShapeReport>, key: string): NonNullable<ShapeReport['proof']> {
  const s = byKey.get(key);
  expect(s, `${key} among ${[...byKey.keys()].join(' | ')}`).toBeDefined();
  const p = s!.proof!;
  const line = `${key}: ${p.result} ${p.reason ?? ''} ${JSON.stringify(p.differences)} partial: ${s!.snippets.partial.join('; ')}`;
  expect(s!.snippets.partial, line).toEqual([]);
  expect(p.result, line).toBe('equal');
  expect(p.snippets?.map((x) => x.result), line).toEqual(['equal', 'equal', 'equal']);
  return p;
}
