import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMappings } from '../../src/config/mappings.js';
import type { Lookup } from '../../src/query/compile.js';
import { parseQuery } from '../../src/query/parse-query.js';
import { runQuery } from '../../src/query/run.js';
import { derivedUuid } from '../../src/translate/ids.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let token: string;
let projects: { id: string; account: string }[];
/**
 * The same properties hold on both paths: live (the planner over v1, INDEX_ENABLED=false) and the render index (after its
 * backfill; every answer checked to come from it).
 */
function useGateway(mode: 'live' | 'index'): void {
  beforeAll(async () => {
    gw = await startGateway({
      CACHE_TTL_METADATA_MS: '0', CACHE_TTL_RENDER_ACTIVE_MS: '0', CACHE_TTL_RENDER_FINAL_MS: '0', INDEX_ENABLED: String(mode === 'index'),
    }, { scale: 'small' });
    await gw.addUser(0, 'ann@example.com');
    token = await gw.login('ann@example.com');
    projects = (await gw.get('/projects?limit=-1&fields=id,account', token)).body.data;
    if (mode === 'index') {
      await gw.deps.index!.syncNow(gw.s.keys[0]!.teams.map((t) => t.id));
      expect((await gw.get('/renders?limit=1', token)).headers['x-gateway-source']).toBe('index');
    }
  });
  afterAll(async () => gw.close());
}

const q = (params: Record<string, string>) => new URLSearchParams(params).toString();

/** Every render as the legacy API shows it (a streamed merge, no meta), for in-memory references. */
const everything = async () => (await gw.get('/renders?limit=-1&fields=*', token)).body.data as Record<string, unknown>[];
const legacySchemas = loadMappings('mappings').schemas;
const noRelations: Lookup = { one: () => undefined, many: () => [] };
const reference = (all: Record<string, unknown>[], raw: Record<string, unknown>) =>
  runQuery(all, parseQuery(raw, legacySchemas.render!, { schemas: legacySchemas, dynamic: { now: new Date(), userId: 'u', roleId: 'r', user: { id: 'u' } }, limitDefault: 100 }), legacySchemas, noRelations, { numericStrings: true });

/**
 * An independent reference for lists: records built straight from the simulator's world with the legacy status mapping
 * written out here, filtered, sorted and paged by a plain evaluator of the few rules the generated queries use — not the
 * gateway's parser, evaluator or translators (only its uuid derivation, which test/translate pins to fixed vectors).
 */
const STATUS: Record<string, string> = { initializing: 'draft', ready: 'ready', queued: 'ready', processing: 'processing', finalizing: 'encoding', complete: 'complete', failed: 'failed' };
type Plain = { id: string; status: string; title: string; date_created: string; project: string; account: string };
const worldRenders = (): Plain[] => {
  const reach = new Set(gw.s.keys[0]!.teams.map((t) => t.id));
  return [...gw.s.sim.world.renders.values()].filter((r) => reach.has(r.teamId)).map((r) => ({
    id: derivedUuid('render', r.id), status: STATUS[r.status]!, title: r.name,
    date_created: new Date(Math.floor(r.createdAt / 1000) * 1000).toISOString(), project: derivedUuid('project', r.projectId), account: derivedUuid('account', r.teamId),
  }));
};
const collator = new Intl.Collator('en', { sensitivity: 'variant' });
interface ListCase { status?: string[]; project?: string; account?: string; title?: string; sort?: string; limit: number; page?: number; offset?: number; meta?: string }
function plainList(all: Plain[], c: ListCase): { data: Record<string, string>[]; meta?: Record<string, number> } {
  const kept = all.filter((r) => (!c.status || c.status.includes(r.status)) && (!c.project || r.project === c.project) && (!c.account || r.account === c.account)
    && (!c.title || r.title.toLowerCase().includes(c.title.toLowerCase())));
  const keys = (c.sort ?? '-date_created').split(',').map((k) => ({ field: k.replace(/^-/, '') as keyof Plain, desc: k.startsWith('-') }));
  const cmp = (f: keyof Plain, a: string, b: string) => (f === 'title' || f === 'status' ? collator.compare(a, b) : a < b ? -1 : a > b ? 1 : 0);
  kept.sort((a, b) => {
    for (const k of keys) { const d = cmp(k.field, a[k.field], b[k.field]); if (d !== 0) return k.desc ? -d : d; }
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0; // the id is the last tie-break
  });
  const offset = c.limit !== -1 && c.page !== undefined && c.offset === undefined ? c.limit * (c.page - 1) : c.offset ?? 0;
  const page = c.limit === -1 ? kept.slice(offset) : kept.slice(offset, offset + c.limit);
  const data = page.map((r) => ({ id: r.id, status: r.status, title: r.title, date_created: r.date_created }));
  const metaKeys = c.meta === '*' ? ['total_count', 'filter_count'] : c.meta ? [c.meta] : [];
  const counts: Record<string, number> = { total_count: all.length, filter_count: kept.length };
  return metaKeys.length ? { data, meta: Object.fromEntries(metaKeys.map((k) => [k, counts[k]!])) } : { data };
}

for (const mode of ['live', 'index'] as const) {
  describe(`${mode} path`, () => {
    useGateway(mode);
    describe('the planned path returns exactly what an independent reference over the simulator\'s world returns', () => {
      it('holds for random queries (merge, scan with a bounded buffer, streamed scans with meta)', async () => {
        const world = worldRenders();
        expect(world.length).toBeGreaterThan(100);
        const statuses = ['draft', 'ready', 'processing', 'encoding', 'complete', 'failed', 'deleted'];
        await fc.assert(fc.asyncProperty(
          fc.record({
            status: fc.option(fc.subarray(statuses, { minLength: 1, maxLength: 2 }), { nil: undefined }),
            project: fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined }),
            account: fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined }),
            title: fc.option(fc.constantFrom('render', 'Ü', 'Promo', 'zzz'), { nil: undefined }),
            sort: fc.constantFrom(undefined, 'date_created', '-date_created', '-date_created,id', 'title', '-title,date_created', 'status'),
            limit: fc.oneof(fc.integer({ min: -1, max: 70 }), fc.constantFrom(2001, 2500)), // past 2000 a scan keeps JSON bytes
            page: fc.integer({ min: 1, max: 4 }),
            offset: fc.option(fc.integer({ min: 0, max: 300 }), { nil: undefined }),
            meta: fc.constantFrom(undefined, undefined, 'filter_count', 'total_count', '*'),
          }),
          async (c) => {
            const and: unknown[] = [];
            if (c.status) and.push({ status: { _in: c.status } });
            if (c.project !== undefined) and.push({ project: { _eq: projects[c.project % projects.length]!.id } });
            if (c.account !== undefined) and.push({ account: { _eq: projects[c.account % projects.length]!.account } });
            if (c.title) and.push({ title: { _icontains: c.title } });
            const params: Record<string, string> = { limit: String(c.limit), fields: 'id,status,title,date_created' };
            if (c.offset !== undefined) params.offset = String(c.offset);
            else params.page = String(c.page);
            if (and.length) params.filter = JSON.stringify({ _and: and });
            if (c.sort) params.sort = c.sort;
            if (c.meta) params.meta = c.meta;
            const planned = await gw.get(`/renders?${q(params)}`, token);
            expect(planned.status).toBe(200);
            const expected = plainList(world, {
              ...(c.status ? { status: c.status } : {}), ...(c.project !== undefined ? { project: projects[c.project % projects.length]!.id } : {}),
              ...(c.account !== undefined ? { account: projects[c.account % projects.length]!.account } : {}), ...(c.title ? { title: c.title } : {}),
              ...(c.sort ? { sort: c.sort } : {}), limit: c.limit, ...(c.offset !== undefined ? { offset: c.offset } : { page: c.page }), ...(c.meta ? { meta: c.meta } : {}),
            });
            expect(planned.body.data).toEqual(expected.data);
            expect(planned.body.meta).toEqual(expected.meta);
          },
        ), { numRuns: 60 });
      });
    });

    describe('aggregates folded page by page equal the in-memory reference over every record', () => {
      it('holds for random aggregate / groupBy queries, narrowed or not', async () => {
        const all = await everything();
        await fc.assert(fc.asyncProperty(
          fc.record({
            aggregate: fc.constantFrom('count=*', 'countDistinct=project', 'min=date_created', 'max=date_created', 'count=title', 'countDistinct=status'),
            groupBy: fc.constantFrom(undefined, 'status', 'project', 'status,account', 'year(date_created)'),
            status: fc.option(fc.constantFrom('complete', 'failed', 'processing'), { nil: undefined }),
            account: fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined }),
            title: fc.option(fc.constantFrom('render', 'Promo', 'zzz'), { nil: undefined }),
            meta: fc.constantFrom(undefined, 'total_count', 'filter_count', '*'),
          }),
          async (c) => {
            const [fn, field] = c.aggregate.split('=') as [string, string];
            const and: unknown[] = [];
            if (c.status) and.push({ status: { _eq: c.status } });
            if (c.account !== undefined) and.push({ account: { _eq: projects[c.account % projects.length]!.account } });
            if (c.title) and.push({ title: { _icontains: c.title } });
            const params: Record<string, string> = { [`aggregate[${fn}]`]: field, limit: '-1' };
            if (c.groupBy) params.groupBy = c.groupBy;
            if (and.length) params.filter = JSON.stringify({ _and: and });
            if (c.meta) params.meta = c.meta;
            const planned = await gw.get(`/renders?${q(params)}`, token);
            expect(planned.status).toBe(200);
            const { [`aggregate[${fn}]`]: _, filter, ...rest } = params;
            const expected = reference(all, { ...rest, ...(filter ? { filter: JSON.parse(filter) } : {}), aggregate: { [fn]: field } });
            expect(planned.body.data).toEqual(expected.data);
            expect(planned.body.meta).toEqual(expected.meta);
          },
        ), { numRuns: 30 });
      });
    });
  });
}

describe('explain, budget and caches (the live planner)', () => {
  useGateway('live');
  it('explains the plan and the v1 work to operators', async () => {
    const r = await gw.get(`/renders?limit=3&filter[status][_eq]=complete`, token, { 'x-gateway-explain': '1', 'x-gateway-operator-token': TEST_ENV.GATEWAY_ADMIN_TOKEN });
    expect(r.body.explain.plan).toMatchObject({ strategy: 'merge', pushdown: { status: 'complete', order: 'desc' } });
    expect(r.body.explain.v1_calls).toBeGreaterThan(0);
    expect(r.body.explain).toHaveProperty('records_scanned');
    // streamed answers carry it after the data, once the counts are known
    const streamed = await gw.get(`/renders?limit=-1&fields=id`, token, { 'x-gateway-explain': '1', 'x-gateway-operator-token': TEST_ENV.GATEWAY_ADMIN_TOKEN });
    expect(streamed.body.explain.plan).toMatchObject({ strategy: 'merge', stopAfter: null });
    expect(streamed.body.explain.records_scanned).toBeGreaterThanOrEqual(streamed.body.data.length); // projects listed too
    const scanned = await gw.get(`/renders?limit=-1&sort=title&meta=total_count&fields=id`, token, { 'x-gateway-explain': '1', 'x-gateway-operator-token': TEST_ENV.GATEWAY_ADMIN_TOKEN });
    expect(scanned.body.meta.total_count).toBe(streamed.body.data.length);
    expect(scanned.body.explain).toMatchObject({ plan: { strategy: 'scan' } });
    expect(scanned.body.explain.v1_calls).toBeGreaterThan(0);
    expect((await gw.get(`/renders?limit=-1&fields=id`, token, { 'x-gateway-explain': '1' })).body.explain).toBeUndefined();
    const plain = await gw.get(`/renders?limit=3`, token, { 'x-gateway-explain': '1' });
    expect(plain.body.explain).toBeUndefined(); // not an operator
  });

  it('refuses a query past the call budget with a 400 telling how to narrow it', async () => {
    const small = await startGateway({ UPSTREAM_CALL_BUDGET: '5', INDEX_ENABLED: 'false' }, { scale: 'small' });
    try {
      await small.addUser(0, 'ann@example.com');
      const t = await small.login('ann@example.com');
      const before = (await (await fetch(`${small.s.url}/_sim/stats`)).json() as any).total;
      const r = await small.get('/renders?limit=-1', t);
      expect(r.status).toBe(400);
      expect(r.body.errors[0].extensions.code).toBe('INVALID_QUERY');
      expect(r.body.errors[0].message).toMatch(/more than 5 calls.*filter on project or account/);
      const after = (await (await fetch(`${small.s.url}/_sim/stats`)).json() as any).total;
      expect(after - before).toBeLessThanOrEqual(5);
    } finally { await small.close(); }
  });

  it('warm: no v1 calls for team, project and template metadata; caches never shared between keys', async () => {
    const warm = await startGateway({ INDEX_ENABLED: 'false' }, { scale: 'small' });
    try {
      await warm.addUser(0, 'ann@example.com');
      await warm.addUser(1, 'bo@example.com');
      const ta = await warm.login('ann@example.com');
      const tb = await warm.login('bo@example.com');
      const stats = async () => (await (await fetch(`${warm.s.url}/_sim/stats`)).json() as any).requests as Record<string, number>;
      await warm.get('/templates?limit=-1', ta);
      await fetch(`${warm.s.url}/_sim/stats/reset`, { method: 'POST' });
      await warm.get('/templates?limit=-1', ta);
      await warm.get('/projects?limit=-1&fields=id,title', ta);
      expect(await stats()).toEqual({});
      await warm.get('/templates?limit=-1', tb); // another key: its own partition, so real calls
      expect((await stats())['GET /v1/teams']).toBe(1);
    } finally { await warm.close(); }
  });
});

describe('scans record only the renders they answer', () => {
  it('a scan for 3 of many records 3 render ids (each resolvable); an aggregate records none unless it answers ids', async () => {
    const fresh = await startGateway({ INDEX_ENABLED: 'false' }, { scale: 'small' });
    try {
      await fresh.addUser(0, 'bo@example.com');
      const t = await fresh.login('bo@example.com');
      const renderPairs = async () => (await fresh.deps.idMap.all()).filter((p) => p.type === 'render');
      const counted = await fresh.get('/renders?aggregate[count]=*&groupBy=status', t);
      expect(counted.status).toBe(200);
      expect(await renderPairs()).toHaveLength(0);
      const page = await fresh.get('/renders?sort=title&limit=3&fields=id,title', t);
      expect(page.body.data).toHaveLength(3);
      const stored = await renderPairs();
      expect(stored.map((p) => p.uuid).sort()).toEqual(page.body.data.map((r: { id: string }) => r.id).sort());
      for (const r of page.body.data) expect((await fresh.get(`/renders/${r.id}?fields=id`, t)).body.data.id).toBe(r.id);
      const deep = await fresh.get('/renders?sort=title&limit=2500&fields=id', t); // compact scan, streamed
      expect((await renderPairs()).length).toBe(deep.body.data.length);
      const grouped = await fresh.get('/renders?aggregate[count]=*&groupBy=id&limit=-1', t);
      expect((await renderPairs()).length).toBe(grouped.body.data.length);
    } finally {
      await fresh.close();
    }
  });
});
