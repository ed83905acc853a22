import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importIdMap } from '../../src/admin/operations.js';
import { createDeps } from '../../src/deps.js';
import { createLogger } from '../../src/log/logger.js';
import { derivedUuid } from '../../src/translate/ids.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';
import { startSim } from '../helpers/sim.js';

let gw: TestGateway;
let token: string;
let CREDITS_TEAM = '';
beforeAll(async () => {
  const probe = await startSim();
  CREDITS_TEAM = [...probe.sim.world.projects.values()].find((p) => probe.keys[0]!.teams.some((t) => t.id === p.teamId) && p.templates.length > 0)!.teamId;
  await probe.sim.close();
  gw = await startGateway({ RENDER_CREDITS: JSON.stringify({ [CREDITS_TEAM]: { amount: 100, remaining: 40, used: 60 } }) });
  await gw.addUser(0, 'ann@example.com');
  token = await gw.login('ann@example.com');
});
afterAll(async () => gw.close());

const V1_ID = /\b(rend|proj|team|acc|user|tpl|comp)_[a-z0-9]+/i;
/** Every string of a body except signed URLs must be free of v1 ids. */
function assertNoV1Ids(body: unknown): void {
  const walk = (v: unknown): void => {
    if (typeof v === 'string') { if (!/^https:\/\//.test(v)) expect(v).not.toMatch(V1_ID); }
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(body);
}

const iso = (s: number | null) => (s === null ? null : new Date(s * 1000).toISOString());

describe('golden shapes', () => {
  it('render: every field from its v1 source', async () => {
    const w = gw.s.sim.world;
    const reach = new Set(gw.s.keys[0]!.teams.map((t) => t.id));
    const sr = [...w.renders.values()].find((r) => r.status === 'complete' && reach.has(r.teamId) && r.variants.includes('still'))!;
    const v1 = w.renderView(sr);
    await gw.get('/renders?limit=-1&fields=id', token); // an old client only knows uuids the gateway emitted
    const res = await gw.get(`/renders/${derivedUuid('render', sr.id)}`, token);
    expect(res.status).toBe(200);
    const r = res.body.data;
    expect(Object.keys(r)).toEqual(['id', 'user_created', 'date_created', 'date_updated', 'process_id', 'account', 'project', 'title', 'playback_id', 'download_ready', 'status', 'data', 'output']);
    expect(r).toMatchObject({
      id: derivedUuid('render', sr.id), user_created: sr.createdBy ? derivedUuid('user', sr.createdBy) : null,
      date_created: iso(v1.created_at), date_updated: iso(v1.updated_at), account: derivedUuid('account', sr.teamId),
      project: derivedUuid('project', sr.projectId), title: sr.name, playback_id: null, download_ready: true, status: 'complete', data: {},
    });
    expect(r.date_created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
    expect(r.process_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const base = (u: string | null) => u?.split('?')[0];
    expect(base(r.output.master)).toBe(base(v1.output!.master!));
    expect(base(r.output.poster)).toBe(base(v1.output!.still!));
    expect(base(r.output.high)).toBe(base(v1.output!['1080p']!));
    expect(base(r.output.medium)).toBe(base(v1.output!['720p']!));
    expect(base(r.output.low)).toBe(base(v1.output!['360p']!));
  });

  it('render statuses map as declared, output null until complete', async () => {
    const res = await gw.get('/renders?limit=-1&fields=id,status,output,download_ready', token);
    // each render's legacy status is the one the mapping declares for its v1 status (written out here, not read from the mapping)
    const declared: Record<string, string> = { initializing: 'draft', ready: 'ready', queued: 'ready', processing: 'processing', finalizing: 'encoding', complete: 'complete', failed: 'failed' };
    const byUuid = new Map([...gw.s.sim.world.renders.values()].map((r) => [derivedUuid('render', r.id), r.status]));
    expect(res.body.data.length).toBeGreaterThan(10);
    for (const r of res.body.data) expect(r.status).toBe(declared[byUuid.get(r.id)!]);
    expect(new Set(res.body.data.map((r: any) => r.status)).size).toBeGreaterThanOrEqual(4);
    for (const r of res.body.data) if (r.status !== 'complete') { expect(r.output).toBeNull(); expect(r.download_ready).toBe(false); }
  });

  it('project, account and template shapes', async () => {
    const w = gw.s.sim.world;
    const reach = new Set(gw.s.keys[0]!.teams.map((t) => t.id));
    const sp = [...w.projects.values()].find((p) => reach.has(p.teamId) && p.templates.length > 0)!;
    await gw.get('/projects?limit=-1&fields=id', token);
    await gw.get('/templates?limit=-1&fields=id', token);
    const p = (await gw.get(`/projects/${derivedUuid('project', sp.id)}`, token)).body.data;
    expect(Object.keys(p)).toEqual(['id', 'user_created', 'date_created', 'date_updated', 'poster', 'title', 'account', 'status', 'template_reference', 'renders']);
    expect(p).toMatchObject({ title: sp.name, account: derivedUuid('account', sp.teamId), status: 'active', template_reference: null });
    const renderIds = [...w.renders.values()].filter((r) => r.projectId === sp.id).sort((a, b) => b.createdAt - a.createdAt).map((r) => derivedUuid('render', r.id));
    expect(new Set(p.renders)).toEqual(new Set(renderIds.slice(0, 100)));
    const team = w.teams.get(sp.teamId)!;
    const a = (await gw.get(`/accounts/${derivedUuid('account', team.id)}`, token)).body.data;
    expect(Object.keys(a)).toEqual(['id', 'name', 'owner', 'status', 'render_credits', 'renders', 'subscriptions', 'projects']);
    const owner = team.members.filter((m) => m.role === 'admin').sort((x, y) => x.joinedAt - y.joinedAt)[0]!;
    expect(a).toMatchObject({ name: team.name, status: 'active', subscriptions: [] });
    expect(a.render_credits).toEqual(team.id === CREDITS_TEAM ? { amount: 100, remaining: 40, used: 60 } : null);
    expect(a.owner).toBe(owner.userId === gw.s.keys[0]!.user_id ? (await gw.deps.users.byEmail('ann@example.com'))!.id : derivedUuid('user', owner.userId));
    // the account's renders: as Directus lists related items — in primary-key (uuid) order, at most the default limit
    const teamRenders = [...w.renders.values()].filter((r) => r.teamId === team.id).map((r) => derivedUuid('render', r.id)).sort();
    expect(a.renders).toEqual(teamRenders.slice(0, 100));
    const projectIds = [...w.projects.values()].filter((x) => x.teamId === team.id).map((x) => derivedUuid('project', x.id)).sort();
    expect(a.projects).toEqual(projectIds.slice(0, 100));
    const tpl = sp.templates.find((t) => t.description !== null)!;
    const t = (await gw.get(`/templates/${derivedUuid('template', tpl.id)}`, token)).body.data;
    expect(Object.keys(t)).toEqual(['id', 'date_created', 'description', 'playback_id', 'poster', 'title', 'slug', 'status']);
    expect(t).toMatchObject({ title: tpl.name, status: 'published', playback_id: null, date_created: new Date(Math.floor(sp.createdAt / 1000) * 1000).toISOString() });
    expect(t.description).toMatch(/^<p>Edit the &lt;b&gt;/);
    expect(t.slug).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
  });
});

describe('envelopes and errors', () => {
  it('lists are {data} or {meta, data}; single items {data}', async () => {
    const list = await gw.get('/projects?limit=2', token);
    expect(Object.keys(list.body)).toEqual(['data']);
    const withMeta = await gw.get('/projects?limit=2&meta=total_count,filter_count', token);
    expect(Object.keys(withMeta.body)).toEqual(['meta', 'data']);
    expect(typeof withMeta.body.meta.total_count).toBe('number');
    expect((await gw.get('/renders?limit=0', token)).body).toEqual({ data: [] });
  });

  it('unknown, malformed and unreachable ids answer 403 FORBIDDEN; unknown routes 404 ROUTE_NOT_FOUND', async () => {
    for (const url of ['/renders/00000000-0000-4000-8000-000000000000', '/renders/nope', '/projects/123', '/accounts/00000000-0000-4000-8000-000000000000', '/templates/x']) {
      const res = await gw.get(url, token);
      expect(res.status).toBe(403);
      expect(res.body.errors[0].extensions.code).toBe('FORBIDDEN');
    }
    // person 4 reaches one team only: a render of another team, known to the id map (another user saw it), is still 403
    await gw.addUser(4, 'narrow@example.com');
    const narrow = await gw.login('narrow@example.com');
    const reach = new Set(gw.s.keys[4]!.teams.map((t) => t.id));
    const hidden = [...gw.s.sim.world.renders.values()].find((r) => !reach.has(r.teamId))!;
    expect(hidden).toBeDefined();
    {
      await gw.deps.idMap.remember([{ type: 'render', uuid: derivedUuid('render', hidden.id), v1Id: hidden.id, source: 'derived' }]);
      expect((await gw.get(`/renders/${derivedUuid('render', hidden.id)}`, token)).status).toBe(200); // a user who reaches it
      expect((await gw.get(`/renders/${derivedUuid('render', hidden.id)}`, narrow)).status).toBe(403);
    }
    const nf = await gw.get('/widgets', token);
    expect(nf.status).toBe(404);
    expect(nf.body.errors[0]).toEqual({ message: "Route /widgets doesn't exist.", extensions: { code: 'ROUTE_NOT_FOUND', path: '/widgets' } });
  });

  it('no v1 id appears in any legacy response outside signed URLs', async () => {
    for (const url of ['/renders?limit=-1&fields=*.*', '/projects?fields=*.*', '/accounts?fields=*.*', '/templates?limit=-1', '/users/me?fields=*.*']) {
      const res = await gw.get(url, token);
      expect(res.status).toBe(200);
      assertNoV1Ids(res.body);
    }
  });

  it('relational fields expand through fields and work in filter and sort', async () => {
    const res = await gw.get('/renders?limit=5&fields=id,project.title,account.name,project.account.name&sort=project.title,-date_created', token);
    expect(res.status).toBe(200);
    for (const r of res.body.data) { expect(typeof r.project.title).toBe('string'); expect(r.account.name).toBe(r.project.account.name); }
    const titles = res.body.data.map((r: any) => r.project.title);
    const sorted = [...titles].sort(new Intl.Collator('en').compare);
    expect(titles).toEqual(sorted);
    const some = res.body.data[0].project.title;
    const f = await gw.get(`/renders?limit=-1&fields=project.title&filter=${encodeURIComponent(JSON.stringify({ project: { title: { _eq: some } } }))}`, token);
    expect(f.body.data.length).toBeGreaterThan(0);
    for (const r of f.body.data) expect(r.project.title).toBe(some);
    const acc = await gw.get('/accounts?fields=id,projects.title,renders.status&limit=1', token);
    const team = [...gw.s.sim.world.teams.values()].find((t) => derivedUuid('account', t.id) === acc.body.data[0].id)!;
    const teamTitles = [...gw.s.sim.world.projects.values()].filter((p) => p.teamId === team.id).map((p) => p.name).sort();
    expect(acc.body.data[0].projects.map((p: { title: string }) => p.title).sort()).toEqual(teamTitles);
    expect(acc.body.data[0].renders.length).toBeGreaterThan(0);
    for (const r of acc.body.data[0].renders) expect(Object.keys(r)).toEqual(['status']);
  });

  it('an _in list of more than 21 values, as `[]` or as indexes, filters by all of them (as Directus 10.10 does)', async () => {
    const ids = (await gw.get('/renders?limit=25&fields=id', token)).body.data.map((r: { id: string }) => r.id) as string[];
    expect(ids).toHaveLength(25);
    for (const form of [(id: string) => `filter[id][_in][]=${id}`, (id: string, i: number) => `filter[id][_in][${i}]=${id}`]) {
      const res = await gw.get(`/renders?limit=-1&fields=id&${ids.map(form).join('&')}`, token);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.map((r: { id: string }) => r.id).sort()).toEqual([...ids].sort());
    }
  });

  it('default order is newest first with the id as tie-break, stable across pages', async () => {
    const all = (await gw.get('/renders?limit=-1&fields=id,date_created', token)).body.data;
    for (let i = 1; i < all.length; i++) {
      const a = all[i - 1];
      const b = all[i];
      expect(a.date_created > b.date_created || (a.date_created === b.date_created && a.id < b.id)).toBe(true);
    }
    const pages = [];
    for (let p = 1; p <= 4; p++) pages.push(...(await gw.get(`/renders?limit=7&page=${p}&fields=id`, token)).body.data.map((x: any) => x.id));
    expect(pages).toEqual(all.slice(0, 28).map((x: any) => x.id));
  });
});

describe('ids', () => {
  it('every uuid the gateway emits resolves back to its v1 object, from any instance', async () => {
    const body = (await gw.get('/renders?limit=-1&fields=id,project,account', token)).body.data as { id: string; project: string; account: string }[];
    // a second gateway instance on the same store
    const other = await createDeps(gw.config, createLogger('silent'), { v1BaseUrl: gw.s.url });
    try {
      await fc.assert(fc.asyncProperty(fc.constantFrom(...body), async (r) => {
        const v1 = await other.ids.toV1('render', r.id);
        expect(derivedUuid('render', v1!)).toBe(r.id);
        expect(gw.s.sim.world.renders.get(v1!)).toBeDefined();
        const p = await other.ids.toV1('project', r.project);
        expect(gw.s.sim.world.renders.get(v1!)!.projectId).toBe(p);
        expect(gw.s.sim.world.projects.get(p!)!.teamId).toBe(await other.ids.toV1('account', r.account));
      }), { numRuns: 50 });
    } finally { await other.close(); }
  });

  it('imported legacy uuids win over derived ones, and both still resolve', async () => {
    const reach = new Set(gw.s.keys[0]!.teams.map((t) => t.id));
    const sp = [...gw.s.sim.world.projects.values()].find((p) => reach.has(p.teamId))!;
    const legacy = '7d444840-9dc0-11d1-b245-5ffdce74fad2';
    const r = await importIdMap(gw.deps, [{ legacy_id: legacy, v1_id: sp.id }]);
    expect(r).toMatchObject({ imported: 1, problems: [] });
    const res = await gw.get(`/projects/${legacy}?fields=id,title`, token);
    expect(res.body.data).toEqual({ id: legacy, title: sp.name });
    const list = await gw.get(`/projects?limit=-1&fields=id`, token);
    expect(list.body.data.map((x: any) => x.id)).toContain(legacy);
    expect(list.body.data.map((x: any) => x.id)).not.toContain(derivedUuid('project', sp.id));
    const renders = await gw.get(`/renders?limit=3&fields=project&filter[project][_eq]=${legacy}`, token);
    expect(renders.body.data.length).toBeGreaterThan(0);
    for (const x of renders.body.data) expect(x.project).toBe(legacy);
    const bad = await importIdMap(gw.deps, [{ legacy_id: 'x', v1_id: 'foo_1' }]);
    expect(bad.problems).toHaveLength(1);
  });
});

describe('mapping coverage report', () => {
  it('lists every field of every resource of legacy-api.md, for operators only', async () => {
    expect((await gw.get('/_gateway/mappings', token)).status).toBe(403);
    const res = await gw.get('/_gateway/mappings', TEST_ENV.GATEWAY_ADMIN_TOKEN);
    const fields = res.body.data.fields.map((f: any) => `${f.resource}.${f.field}`);
    const legacy = {
      user: ['id', 'first_name', 'last_name', 'email', 'role', 'accounts', 'accounts_owned'],
      account: ['id', 'name', 'owner', 'status', 'render_credits', 'renders', 'subscriptions', 'projects'],
      project: ['id', 'user_created', 'date_created', 'date_updated', 'poster', 'title', 'account', 'status', 'template_reference', 'renders'],
      render: ['id', 'user_created', 'date_created', 'date_updated', 'process_id', 'account', 'project', 'title', 'playback_id', 'download_ready', 'status', 'data', 'output'],
      template: ['id', 'date_created', 'description', 'playback_id', 'poster', 'title', 'slug', 'status'],
    };
    for (const [r, fs] of Object.entries(legacy)) for (const f of fs) expect(fields).toContain(`${r}.${f}`);
    expect(res.body.data.noV1Source).toContain('account.render_credits');
    expect(res.body.data.overlays).toEqual(['render.title', 'project.title', 'account.name']);
  });
});
