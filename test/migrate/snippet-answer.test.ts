import { describe, expect, it } from 'vitest';
import { loadMappings } from '../../src/config/mappings.js';
import { equivalentOfShape } from '../../src/migrate/instantiate.js';
import { recordsOf } from '../../src/migrate/records-of.js';
import { NOT_PRINTED, snippetData, snippetDifferences } from '../../src/migrate/snippet-answer.js';
import { shapeOf } from '../../src/migrate/shape.js';
import type { QueryNode } from '../../src/query/ast.js';
import { parseQuery } from '../../src/query/parse-query.js';
import { parseQueryString } from '../../src/query/querystring.js';
import type { IdMapStore } from '../../src/store/idmap.js';
import { IdTranslator } from '../../src/translate/ids.js';

const m = loadMappings('mappings');
const newestFirst = { sort: [] } as unknown as QueryNode;
const recs = [{ id: 'a', date_created: '2026-01-01T00:00:00.000Z' }, { id: 'b', date_created: '2026-01-01T00:00:00.000Z' }];

/** A snippet's answer read back, against the gateway's (ties of one instant allowed; nothing more). */
describe('snippetDifferences', () => {
  it('items of one instant in another order are the same answer', () => {
    const got = { ok: true as const, data: [{ id: 'b' }, { id: 'a' }], records: recs };
    expect(snippetDifferences([{ id: 'a' }, { id: 'b' }], got, newestFirst, m, false, recs)).toEqual([]);
  });

  it('items of one instant are a tie of order only: their content is still compared (a join printed null was "equal")', () => {
    const got = { ok: true as const, data: [{ id: 'b', project: { title: 'P' } }, { id: 'a', project: null }], records: recs };
    const legacy = [{ id: 'a', project: { title: 'P' } }, { id: 'b', project: { title: 'P' } }];
    expect(snippetDifferences(legacy, got, newestFirst, m, false, recs).map((d) => d.path)).toEqual(['data[].project']);
    const right = { ...got, data: [{ id: 'b', project: { title: 'P' } }, { id: 'a', project: { title: 'P' } }] };
    expect(snippetDifferences(legacy, right, newestFirst, m, false, recs)).toEqual([]);
    // (another item of that instant where the page ends stands in for the one it replaces; the one both hold is compared)
    const three = [...recs, { id: 'c', date_created: recs[0]!.date_created }];
    const page = { ok: true as const, data: [{ id: 'c', project: { title: 'Q' } }, { id: 'a', project: { title: 'P' } }], records: three };
    expect(snippetDifferences(legacy, page, newestFirst, m, false, three)).toEqual([]);
    // (inside a tie that is not the page's end another item is wrong; an item twice is wrong anywhere)
    const four = [...three, { id: 'd', date_created: '2025-01-01T00:00:00.000Z' }];
    const mid = { ok: true as const, data: [{ id: 'c', project: { title: 'Q' } }, { id: 'a', project: { title: 'P' } }, { id: 'd' }], records: four };
    expect(snippetDifferences([...legacy, { id: 'd' }], mid, newestFirst, m, false, four).length).toBeGreaterThan(0);
    const twice = { ...page, data: [{ id: 'a', project: { title: 'P' } }, { id: 'a', project: { title: 'P' } }] };
    expect(snippetDifferences(legacy, twice, newestFirst, m, false, three).length).toBeGreaterThan(0);
    const wrong = { ...page, data: [{ id: 'c', project: { title: 'Q' } }, { id: 'a', project: null }] };
    expect(snippetDifferences(legacy, wrong, newestFirst, m, false, three).map((d) => d.path)).toEqual(['data[].project']);
  });

  it('a page past the list\'s start may begin with another item of its first instant (the seventh held-out check: "differs" of right snippets)', () => {
    const three = [...recs, { id: 'c', date_created: recs[0]!.date_created }, { id: 'd', date_created: '2025-01-01T00:00:00.000Z' }];
    const legacy = [{ id: 'b' }, { id: 'd' }];
    const got = { ok: true as const, data: [{ id: 'c' }, { id: 'd' }], records: three };
    // (page 2: the instant's items split across the pages by a uuid v1 does not carry — c stands in for b)
    expect(snippetDifferences(legacy, got, { sort: [], offset: 1 } as unknown as QueryNode, m, false, three)).toEqual([]);
    // (the first page: nothing comes before its first run, no stand-in; and never an item of another instant)
    expect(snippetDifferences(legacy, got, { sort: [], offset: 0 } as unknown as QueryNode, m, false, three).length).toBeGreaterThan(0);
    const other = { ...got, data: [{ id: 'd' }, { id: 'd' }] };
    expect(snippetDifferences(legacy, other, { sort: [], offset: 1 } as unknown as QueryNode, m, false, three).length).toBeGreaterThan(0);
  });

  it('an account list without a sort is in uuid order (its default): another order differs, not a tie (held-out check of issue 39)', () => {
    const accounts = { sort: [], resource: 'account' } as unknown as QueryNode;
    const teams = [{ id: 'a', name: 'A' }, { id: 'b', name: 'B' }];
    const got = { ok: true as const, data: [{ id: 'b' }, { id: 'a' }], records: teams };
    expect(snippetDifferences([{ id: 'a' }, { id: 'b' }], got, accounts, m, false, teams).length).toBeGreaterThan(0);
    expect(snippetDifferences([{ id: 'a' }, { id: 'b' }], { ...got, data: [{ id: 'a' }, { id: 'b' }] }, accounts, m, false, teams)).toEqual([]);
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

describe('snippetData: what the snippet printed, translated as the report says — never what the proof derives itself', () => {
  const ids = new IdTranslator({ imported: async () => [] } as unknown as IdMapStore);
  const render = {
    id: 'rend_1', name: 'Teaser', status: 'complete', type: 'cloud', project: { id: 'proj_1', team: 'team_1' }, created_by: null,
    created_at: 1_750_000_000, updated_at: null, output: { master: 'https://x/m.mp4', '1080p': 'https://x/h.mp4', still: 'https://x/s.jpg' },
  };
  const read = (qs: string, printed: unknown[]) => {
    const raw = parseQueryString(qs);
    const q = parseQuery(raw, m.schemas.render!, { schemas: m.schemas, dynamic: { now: new Date(0), userId: null, roleId: null }, limitDefault: 100 });
    const shape = shapeOf({ method: 'GET', route: '/renders', params: Object.keys(raw) }, q, m.schemas);
    const e = equivalentOfShape(shape, m, 100);
    const results = new Map<string, unknown[]>([['renders', [render]], ['projects', [{ id: 'proj_1', name: 'P', team: { id: 'team_1', name: 'T' }, created_by: null, created_at: 1_749_000_000, updated_at: null, thumbnail_url: null }]]]);
    const got = snippetData(printed, shape, q, e, results, (r) => recordsOf(r, 'render', { ids, mappings: m, timeUnit: 'auto' }), m, 1000,
      (type, v1) => ids.toLegacy(type, v1));
    return { got, e };
  };

  it('derived fields the snippet did not print are NOT_PRINTED (the proof derived them: "equal" with no snippet giving them)', () => {
    const { got, e } = read('fields=id,title,status,download_ready,output,process_id', [render]);
    expect(e.clientSteps.filter((s) => s.kind === 'derive').map((s) => s.detail.split(':')[0])).toEqual(['process_id', 'download_ready', 'output']);
    expect(got.ok && got.data).toEqual([{
      id: ids.toLegacy('render', 'rend_1'), title: 'Teaser', status: 'complete', download_ready: NOT_PRINTED, output: { ...render.output }, process_id: NOT_PRINTED,
    }]);
    // what it printed under the legacy name is what is compared (v1's own output names: not the legacy ones)
    const { got: given } = read('fields=id,download_ready', [{ ...render, download_ready: true }]);
    expect(given.ok && given.data).toEqual([{ id: ids.toLegacy('render', 'rend_1'), download_ready: true }]);
  });

  it('a legacy-only value (playback_id: the gateway answers null) is the snippet\'s to give, never filled in by the proof (held-out check of issue 39)', () => {
    const { got, e } = read('fields=id,playback_id', [render]);
    expect(e.clientSteps.find((s) => s.detail.startsWith('playback_id'))?.args).toEqual({ op: 'constant', field: 'playback_id', value: null });
    expect(got.ok && got.data).toEqual([{ id: ids.toLegacy('render', 'rend_1'), playback_id: NOT_PRINTED }]);
    const { got: given } = read('fields=id,playback_id', [{ ...render, playback_id: null }]);
    expect(given.ok && given.data).toEqual([{ id: ids.toLegacy('render', 'rend_1'), playback_id: null }]);
  });

  it('a related object\'s legacy-only value is the snippet\'s to give too (third held-out check: project.* "equal" without it)', () => {
    const project = { id: 'proj_1', name: 'P', team: { id: 'team_1', name: 'T' }, created_by: null, created_at: 1_749_000_000, updated_at: null, thumbnail_url: null };
    const { got, e } = read('fields=id,project.status', [{ ...render, project_object: project }]);
    expect(e.clientSteps.find((s) => s.args?.op === 'constant')?.args).toEqual({ op: 'constant', field: 'status', value: 'active', on: 'projects' });
    expect(got.ok && (got.data as { project: { status: unknown } }[])[0]?.project.status).toBe(NOT_PRINTED);
    const { got: given } = read('fields=id,project.status', [{ ...render, project_object: { ...project, status: 'active' } }]);
    expect(given.ok && (given.data as { project: { status: unknown } }[])[0]?.project.status).toBe('active');
  });

  it('a related object and its list are the snippet\'s to give: never the proof\'s own calls', () => {
    const { got, e } = read('fields=id,project.renders', [render]);
    expect(e.clientSteps.filter((s) => s.kind === 'join').map((s) => s.args?.op)).toEqual(['children', 'relate']);
    // (nothing printed: no project, though the proof's calls read it)
    expect(got.ok && (got.data as { project: unknown }[])[0]?.project).toBeNull();
    const project = { id: 'proj_1', name: 'P', team: { id: 'team_1', name: 'T' }, created_by: null, created_at: 1_749_000_000, updated_at: null, thumbnail_url: null };
    const { got: printed } = read('fields=id,project.renders', [{ ...render, project_object: { ...project, renders: ['rend_1'] } }]);
    expect(printed.ok && (printed.data as { project: { renders: unknown[] } }[])[0]?.project.renders).toEqual([ids.toLegacy('render', 'rend_1')]);
    const { got: bare } = read('fields=id,project.renders', [{ ...render, project_object: project }]);
    expect(bare.ok && (bare.data as { project: { renders: unknown[] } }[])[0]?.project.renders).toEqual([NOT_PRINTED]);
  });
});
