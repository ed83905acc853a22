import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
      await gw.deps.replica!.syncNow(gw.s.keys[0]!.teams.map((t) => t.id));
      expect((await gw.get('/renders?limit=1', token)).headers['x-gateway-source']).toBe('index');
    }
  });
  afterAll(async () => gw.close());
}

const q = (params: Record<string, string>) => new URLSearchParams(params).toString();

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

/**
 * An independent reference for aggregates over the same plain records: the filter, grouping and aggregate functions
 * written out here in Directus-on-PostgreSQL shapes (legacy-semantics.md §5): count and countDistinct are bigint strings,
 * `count=*` is a plain `count`, other functions are `{fn: {field: value}}`, min/max keep the column's type (ISO strings),
 * a date function's group key is `<col>_<fn>` as a number string, no groupBy gives one row even over nothing (count "0",
 * min/max null), with groupBy an empty input gives no rows; meta counts are numbers.
 */
interface AggCase { fn: 'count' | 'countDistinct' | 'min' | 'max'; field: '*' | keyof Plain; groupBy?: string; status?: string; account?: string; title?: string; sort?: string; meta?: string }
const groupKey = (g: string): { name: string; of: (r: Plain) => string } => (g === 'year(date_created)'
  ? { name: 'date_created_year', of: (r) => String(new Date(r.date_created).getUTCFullYear()) }
  : { name: g, of: (r) => r[g as keyof Plain] });
/** Group keys in PostgreSQL's order: year number strings as numbers; statuses and uuids are lower-case ASCII. */
const keyOrder = (a: string, b: string) => (/^\d+$/.test(a) && /^\d+$/.test(b) ? Number(a) - Number(b) : a < b ? -1 : a > b ? 1 : 0);
function plainAggregate(all: Plain[], c: AggCase): { data: Record<string, unknown>[]; meta?: Record<string, number> } {
  const kept = all.filter((r) => (!c.status || r.status === c.status) && (!c.account || r.account === c.account)
    && (!c.title || r.title.toLowerCase().includes(c.title.toLowerCase())));
  const keys = c.groupBy ? c.groupBy.split(',').map(groupKey) : [];
  const groups = new Map<string, Plain[]>();
  if (keys.length === 0) groups.set('', kept);
  for (const r of keys.length ? kept : []) {
    const id = JSON.stringify(keys.map((k) => k.of(r)));
    groups.set(id, [...(groups.get(id) ?? []), r]);
  }
  const value = (recs: Plain[]): unknown => {
    if (c.field === '*') return String(recs.length);
    const present = recs.map((r) => r[c.field as keyof Plain]).filter((v) => v !== null && v !== undefined);
    if (c.fn === 'count') return String(present.length);
    if (c.fn === 'countDistinct') return String(new Set(present).size);
    if (present.length === 0) return null;
    return present.reduce((m, v) => ((c.fn === 'min' ? v < m : v > m) ? v : m));
  };
  const data = [...groups.values()].map((recs) => ({
    ...Object.fromEntries(keys.map((k) => [k.name, k.of(recs[0]!)])),
    [c.fn]: c.field === '*' ? value(recs) : { [c.field]: value(recs) },
  }));
  if (c.sort) {
    // the generated sorts are over group keys only and name enough of them for a total order
    const by = c.sort.split(',').map((s) => ({ name: groupKey(s.replace(/^-/, '')).name, desc: s.startsWith('-') }));
    data.sort((x, y) => {
      for (const k of by) { const d = keyOrder(x[k.name] as string, y[k.name] as string); if (d !== 0) return k.desc ? -d : d; }
      return 0;
    });
  }
  const metaKeys = c.meta === '*' ? ['total_count', 'filter_count'] : c.meta ? [c.meta] : [];
  const counts: Record<string, number> = { total_count: all.length, filter_count: kept.length };
  return metaKeys.length ? { data, meta: Object.fromEntries(metaKeys.map((k) => [k, counts[k]!])) } : { data };
}
/** Rows in a canonical order (by their JSON with sorted keys), for comparing groups that have no specified order. */
const canonical = (rows: Record<string, unknown>[]) => [...rows].sort((a, b) => {
  const j = (r: Record<string, unknown>) => JSON.stringify(Object.entries(r).sort(([x], [y]) => (x < y ? -1 : 1)));
  return j(a) < j(b) ? -1 : j(a) > j(b) ? 1 : 0;
});

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

    describe('aggregates folded page by page equal an independent reference over the simulator\'s world', () => {
      it('holds for random aggregate / groupBy queries, narrowed or not, sorted by group keys or not', async () => {
        const world = worldRenders();
        expect(world.length).toBeGreaterThan(100);
        // sorts over group keys that give a total order of the groups (Directus leaves ties in any order)
        const sorts: Record<string, string[]> = {
          status: ['status', '-status'], project: ['project', '-project'], 'status,account': ['status,account', '-account,-status', 'account,-status'],
          'year(date_created)': ['year(date_created)', '-year(date_created)'],
        };
        await fc.assert(fc.asyncProperty(
          fc.record({
            aggregate: fc.constantFrom('count=*', 'countDistinct=project', 'min=date_created', 'max=date_created', 'count=title', 'countDistinct=status'),
            groupBy: fc.constantFrom(undefined, 'status', 'project', 'status,account', 'year(date_created)'),
            sort: fc.option(fc.nat(), { nil: undefined, freq: 2 }),
            // each filter half the time, so that most cases keep several groups
            status: fc.option(fc.constantFrom('complete', 'failed', 'processing'), { nil: undefined, freq: 2 }),
            account: fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined, freq: 2 }),
            title: fc.option(fc.constantFrom('render', 'promo', 'zzz'), { nil: undefined, freq: 2 }), // 'promo' matches 'Promo' only if case-insensitive
            meta: fc.constantFrom(undefined, 'total_count', 'filter_count', '*'),
          }),
          async (c) => {
            const [fn, field] = c.aggregate.split('=') as [AggCase['fn'], AggCase['field']];
            const sort = c.groupBy && c.sort !== undefined ? sorts[c.groupBy]![c.sort % sorts[c.groupBy]!.length] : undefined;
            const account = c.account !== undefined ? projects[c.account % projects.length]!.account : undefined;
            const and: unknown[] = [];
            if (c.status) and.push({ status: { _eq: c.status } });
            if (account) and.push({ account: { _eq: account } });
            if (c.title) and.push({ title: { _icontains: c.title } });
            const params: Record<string, string> = { [`aggregate[${fn}]`]: field, limit: '-1' };
            if (c.groupBy) params.groupBy = c.groupBy;
            if (sort) params.sort = sort;
            if (and.length) params.filter = JSON.stringify({ _and: and });
            if (c.meta) params.meta = c.meta;
            const planned = await gw.get(`/renders?${q(params)}`, token);
            expect(planned.status).toBe(200);
            const expected = plainAggregate(world, {
              fn, field, ...(c.groupBy ? { groupBy: c.groupBy } : {}), ...(sort ? { sort } : {}), ...(c.status ? { status: c.status } : {}),
              ...(account ? { account } : {}), ...(c.title ? { title: c.title } : {}), ...(c.meta ? { meta: c.meta } : {}),
            });
            if (sort) expect(planned.body.data).toEqual(expected.data);
            else {
              expect(canonical(planned.body.data)).toEqual(canonical(expected.data));
              // unsorted groups come in Directus's default order, the first groupBy field ascending (ties in any order)
              const first = c.groupBy && groupKey(c.groupBy.split(',')[0]!).name;
              const firsts = first ? (planned.body.data as Record<string, string>[]).map((r) => r[first]!) : [];
              expect(firsts).toEqual([...firsts].sort(keyOrder));
            }
            expect(planned.body.meta).toEqual(expected.meta);
          },
        ), { numRuns: 60 });
      });
    });
  });
}

describe('explain, budget and caches (the live planner)', () => {
  useGateway('live');
  it('explains the plan and the v1 work to operators', async () => {
    const r = await gw.get(`/renders?limit=3&filter[status][_eq]=complete`, token, { 'x-gateway-explain': '1', 'x-gateway-operator-token': TEST_ENV.GATEWAY_ADMIN_TOKEN });
    expect(r.body.explain.plan).toMatchObject({
      source: 'live', strategy: 'merge', pushdown: { status: 'complete', order: 'desc' }, pages: { first: 60, next: 60 }, relations: [],
    });
    // no filter: the first page of each project asks for no more than the answer needs; relations read are named
    const slim = await gw.get(`/renders?limit=3&fields=id,project.title`, token, { 'x-gateway-explain': '1', 'x-gateway-operator-token': TEST_ENV.GATEWAY_ADMIN_TOKEN });
    expect(slim.body.explain.plan).toMatchObject({ strategy: 'merge', pages: { first: 3, next: 60 }, relations: ['project'] });
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
