import { describe, expect, it } from 'vitest';
import { loadMappings } from '../../src/config/mappings.js';
import { snippetDifferences } from '../../src/migrate/snippet-answer.js';
import type { QueryNode } from '../../src/query/ast.js';

const m = loadMappings('mappings');
const newestFirst = { sort: [] } as unknown as QueryNode;
const recs = [{ id: 'a', date_created: '2026-01-01T00:00:00.000Z' }, { id: 'b', date_created: '2026-01-01T00:00:00.000Z' }];

/** A snippet's answer read back, against the gateway's (ties of one instant allowed; nothing more). */
describe('snippetDifferences', () => {
  it('items of one instant in another order are the same answer', () => {
    const got = { ok: true as const, data: [{ id: 'b' }, { id: 'a' }], records: recs };
    expect(snippetDifferences([{ id: 'a' }, { id: 'b' }], got, newestFirst, m, false, recs)).toEqual([]);
  });

  it('a snippet that answers more items than the gateway differs, even when the first ones match (review: it was "equal")', () => {
    const got = { ok: true as const, data: [{ id: 'a' }, { id: 'b' }], records: recs };
    expect(snippetDifferences([{ id: 'a' }], got, newestFirst, m, false, recs).length).toBeGreaterThan(0);
    expect(snippetDifferences([], got, newestFirst, m, false, recs).length).toBeGreaterThan(0);
  });

  it('counts are compared as numbers, in any order of groups', () => {
    const got = { ok: true as const, data: [{ status: 'ready', count: 2 }, { status: 'failed', count: 1 }], records: [] };
    expect(snippetDifferences([{ status: 'failed', count: '1' }, { status: 'ready', count: '2' }], got, newestFirst, m, true, [])).toEqual([]);
    expect(snippetDifferences([{ status: 'failed', count: '1' }, { status: 'ready', count: '3' }], got, newestFirst, m, true, []).length).toBeGreaterThan(0);
  });
});
