import { describe, expect, it } from 'vitest';
import { recordsOf } from '../../src/migrate/records-of.js';
import type { IdMapStore } from '../../src/store/idmap.js';
import { IdTranslator } from '../../src/translate/ids.js';
import type { V1Project, V1Render } from '../../src/v1/schemas.js';
import { mappings } from '../query/fixtures.js';

/**
 * The proof's second reader (the legacy records of what the v1 calls returned) lists a one-to-many field as the gateway
 * and Directus do: the first QUERY_LIMIT_DEFAULT children in primary-key order — it listed every child in the calls'
 * order, so a proven `fields=renders` differed from the gateway's answer on order and length (held-out check of issue 39).
 */
const ids = new IdTranslator({ imported: async () => [] } as unknown as IdMapStore);
const T0 = 1_700_000_000;
const project: V1Project = { id: 'proj_a', name: 'A', team: { id: 'team_a', name: 'T' }, created_by: null, created_at: T0, updated_at: null, thumbnail_url: null };
const renders: V1Render[] = Array.from({ length: 150 }, (_, i) => ({
  id: `rend_${String(i).padStart(4, '0')}`, name: `r${i}`, status: 'complete', type: 'cloud', project: { id: 'proj_a', team: 'team_a' },
  created_by: null, created_at: T0 + i, updated_at: null,
}));

describe('recordsOf', () => {
  it('a nested list: the first limitDefault children by primary key; every child for a walk', () => {
    const { lookup, records } = recordsOf(new Map<string, unknown[]>([['projects', [project]], ['renders', [...renders].reverse()]]), 'project', {
      ids, mappings, timeUnit: 's', limitDefault: 100,
    });
    const p = records[0]!;
    const uuids = renders.map((r) => ids.derive('render', r.id)).sort();
    expect(lookup.many('render', p, 'renders', 'project').map((r) => r.id)).toEqual(uuids.slice(0, 100));
    expect(new Set(lookup.manyAll!('render', p, 'renders', 'project').map((r) => r.id))).toEqual(new Set(uuids));
    // the account's projects, through the same rule (the child's field naming the parent)
    expect(lookup.many('project', { id: p.account }, 'projects', 'account').map((r) => r.id)).toEqual([p.id]);
  });
});
