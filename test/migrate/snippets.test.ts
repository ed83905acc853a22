import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { equivalentOfShape } from '../../src/migrate/instantiate.js';
import { renderSnippets } from '../../src/migrate/snippets.js';
import { shapeKey, type Shape } from '../../src/migrate/shape.js';
import { parseQueryString } from '../../src/query/querystring.js';
import { ClientShapeStore } from '../../src/store/client-shapes.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const run = promisify(execFile);

/**
 * Every snippet (Node, Python with the standard library, curl + jq) of the canonical shapes, run against the simulator:
 * its answer, read back through the ids and statuses, equals the gateway's legacy answer to the same question.
 */
let gw: TestGateway;
let token: string;
let dir: string;
let key: string;

async function legacy(method: string, url: string, body?: unknown) {
  const res = await gw.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${token}`, 'user-agent': 'curl/8.5.0' }, ...(body ? { payload: body as object } : {}) });
  return { status: res.statusCode, body: res.json() as any };
}

/** The shape of a request just made, as the recorder stored it (the report reads these rows). */
async function recordedShape(method: string, route: string, url: string, bodyKeys?: string[]): Promise<Shape> {
  await gw.deps.shapes.flush();
  const qs = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  const mine = gw.deps.shapes.shapeOf({ method, route, query: parseQueryString(qs), question: qs, ...(bodyKeys ? { bodyKeys } : {}) });
  const rows = await new ClientShapeStore(gw.deps.db.kysely).list();
  const stored = rows.map((r) => JSON.parse(r.shape) as Shape & { key: string }).find((s) => s.key === shapeKey(mine));
  expect(stored).toBeDefined();
  return stored as Shape;
}

async function runAll(shape: Shape, params: Record<string, unknown>): Promise<{ node: any; python: any; curl: any }> {
  const e = equivalentOfShape(shape, gw.deps.mappings, gw.config.QUERY_LIMIT_DEFAULT);
  const s = renderSnippets(e, 'legacyEquivalent');
  expect(s.partial).toEqual([]);
  const env = { ...process.env, V1: gw.s.url, KEY: key, PARAMS: JSON.stringify(params) };
  writeFileSync(join(dir, 'snippet.mjs'), `${s.node}\nconsole.log(JSON.stringify(await legacyEquivalent(process.env.V1, process.env.KEY, JSON.parse(process.env.PARAMS))));\n`);
  writeFileSync(join(dir, 'snippet.py'), `${s.python}\nimport os\nprint(json.dumps(legacyEquivalent(os.environ["V1"], os.environ["KEY"], json.loads(os.environ["PARAMS"]))))\n`);
  writeFileSync(join(dir, 'snippet.sh'), s.curl);
  const shEnv: Record<string, string> = { ...env } as Record<string, string>;
  for (const [k, v] of Object.entries(params)) shEnv[k.toUpperCase()] = typeof v === 'object' ? JSON.stringify(v) : String(v);
  const [node, python, curl] = await Promise.all([
    run('node', [join(dir, 'snippet.mjs')], { env, cwd: dir }),
    run('python3', [join(dir, 'snippet.py')], { env, cwd: dir }),
    run('sh', [join(dir, 'snippet.sh')], { env: shEnv, cwd: mkdtempSync(join(dir, 'sh-')) }),
  ]);
  return { node: JSON.parse(node.stdout), python: JSON.parse(python.stdout), curl: JSON.parse(curl.stdout) };
}

const v1Of = async (type: 'render' | 'project' | 'account', uuid: string) => (await gw.deps.ids.toV1(type, uuid)) as string;

/** A legacy list as v1 ids and names, in order. */
async function legacyAsV1(data: { id: string; title?: string }[]): Promise<{ id: string; name: string | undefined }[]> {
  return Promise.all(data.map(async (r) => ({ id: await v1Of('render', r.id), name: r.title })));
}
const v1List = (xs: { id: string; name: string }[]) => xs.map((x) => ({ id: x.id, name: x.name }));

beforeAll(async () => {
  gw = await startGateway({ INDEX_ENABLED: 'false' }, { scale: 'tiny' });
  await gw.addUser(0, 'snippets@example.com');
  token = await gw.login('snippets@example.com');
  key = gw.s.keys[0]!.api_key;
  dir = mkdtempSync(join(tmpdir(), 'snippets-'));
}, 60_000);
afterAll(async () => {
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the snippets of the canonical shapes run against the simulator and answer as the legacy API does', () => {
  it('a status-filtered list, newest first', async () => {
    const url = '/renders?filter[status][_eq]=complete&sort=-date_created&limit=4&fields=id,title,status';
    const l = await legacy('GET', url);
    expect(l.body.data.length).toBe(4);
    const out = await runAll(await recordedShape('GET', '/renders', url), { status: 'complete', limit: 4 });
    const want = await legacyAsV1(l.body.data);
    for (const got of [out.node, out.python, out.curl]) expect(v1List(got)).toEqual(want);
    // the same shape for a legacy status two v1 statuses stand for (ready: ready and queued)
    const ready = await legacy('GET', url.replace('complete', 'ready'));
    expect(ready.body.data.length).toBeGreaterThan(0);
    const again = await runAll(await recordedShape('GET', '/renders', url), { status: 'ready', limit: 4 });
    const wantReady = await legacyAsV1(ready.body.data);
    for (const got of [again.node, again.python, again.curl]) expect(v1List(got)).toEqual(wantReady);
  });

  it('download_ready, derived in every language as the gateway derives it (held-out check of issue 39: the proof derived it itself)', async () => {
    const url = '/renders?limit=-1&fields=id,status,download_ready';
    const l = await legacy('GET', url);
    const ready = new Map<string, boolean>();
    for (const r of l.body.data as { id: string; download_ready: boolean }[]) ready.set(await v1Of('render', r.id), r.download_ready);
    expect(new Set(ready.values())).toEqual(new Set([true, false])); // both ways met
    const out = await runAll(await recordedShape('GET', '/renders', url), {});
    for (const [lang, got] of Object.entries(out)) {
      expect((got as { id: string; download_ready: boolean }[]).map((x) => [x.id, x.download_ready]).sort(), lang).toEqual([...ready].sort());
    }
  });

  it('process_id and output, derived in every language as the gateway derives them (held-out check of issue 39: left to the client)', async () => {
    const unsigned = (o: Record<string, string | null> | null) => o && Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v && v.split('?')[0]]));
    const want = async (url: string) => {
      const data = (await legacy('GET', url)).body.data as { id: string; process_id: string; output: Record<string, string | null> | null }[];
      return Promise.all([data].flat().map(async (r) => [await v1Of('render', r.id), r.process_id, unsigned(r.output)] as const));
    };
    // a list over every project (the projects walked) and one render by id (its project one call more)
    const list = '/renders?limit=-1&fields=id,process_id,output';
    const all = await want(list);
    expect(all.some(([, , o]) => o === null) && all.some(([, , o]) => o !== null)).toBe(true); // both kinds met
    const out = await runAll(await recordedShape('GET', '/renders', list), {});
    for (const [lang, got] of Object.entries(out)) {
      const mine = (got as { id: string; process_id: string; output: Record<string, string | null> | null }[]).map((x) => [x.id, x.process_id, unsigned(x.output)]);
      expect(mine.sort(), lang).toEqual([...all].map((x) => [...x]).sort());
    }
    const done = all.find(([, , o]) => o !== null)!;
    const uuid = (await legacy('GET', list)).body.data.find((r: { process_id: string }) => r.process_id === done[1]).id;
    const one = `/renders/${uuid}?fields=id,process_id,output`;
    expect(await want(one)).toEqual([done]);
    const byId = await runAll(await recordedShape('GET', '/renders/:id', one), { render_id: done[0] });
    for (const [lang, got] of Object.entries(byId)) {
      const x = (got as { id: string; process_id: string; output: Record<string, string | null> }[])[0]!;
      expect([x.id, x.process_id, unsigned(x.output)], lang).toEqual([...done]);
    }
  });

  it('a count grouped by status', async () => {
    const url = '/renders?aggregate[count]=*&groupBy=status';
    const l = await legacy('GET', url);
    const want = Object.fromEntries(l.body.data.map((g: { status: string; count: string }) => [g.status, Number(g.count)]));
    expect(Object.keys(want).length).toBeGreaterThan(2);
    // (no limit sent: the legacy default, 100 groups — the parameter the report lists for it)
    const out = await runAll(await recordedShape('GET', '/renders', url), { limit: 100 });
    for (const got of [out.node, out.python, out.curl]) expect(Object.fromEntries(got.map((g: { status: string; count: number }) => [g.status, g.count]))).toEqual(want);
    // in the legacy order (by status, ascending)
    for (const got of [out.node, out.python, out.curl]) expect(got.map((g: { status: string }) => g.status)).toEqual(l.body.data.map((g: { status: string }) => g.status));
    // every group (limit=-1): in that order too, no page to take
    const all = '/renders?aggregate[count]=*&groupBy=status&limit=-1';
    const la = await legacy('GET', all);
    const outAll = await runAll(await recordedShape('GET', '/renders', all), {});
    for (const got of [outAll.node, outAll.python, outAll.curl]) {
      expect(got.map((g: { status: string; count: number }) => [g.status, String(g.count)])).toEqual(la.body.data.map((g: { status: string; count: string }) => [g.status, g.count]));
    }
  });

  it('one render by id', async () => {
    const first = (await legacy('GET', '/renders?limit=1&fields=id')).body.data[0].id as string;
    const url = `/renders/${first}?fields=id,title,status`;
    const l = await legacy('GET', url);
    const out = await runAll(await recordedShape('GET', '/renders/:id', url), { render_id: await v1Of('render', first) });
    const want = await legacyAsV1([l.body.data]);
    for (const got of [out.node, out.python, out.curl]) expect(v1List(got)).toEqual(want);
  });

  it("one project's renders sorted by title, page 3", async () => {
    const project = (await legacy('GET', '/projects?limit=1&fields=id')).body.data[0].id as string;
    const url = `/renders?filter[project][_eq]=${project}&sort=title&limit=2&page=3&fields=id,title`;
    const l = await legacy('GET', url);
    expect(l.body.data.length).toBe(2);
    const out = await runAll(await recordedShape('GET', '/renders', url), { project_id: await v1Of('project', project), limit: 2, offset: 4 });
    const want = await legacyAsV1(l.body.data);
    for (const got of [out.node, out.python, out.curl]) expect(v1List(got)).toEqual(want);
  });

  it('the renders of two projects (_in), newest first: every project walked, the lists merged (issue 39: one project was read)', async () => {
    const projects = (await legacy('GET', '/projects?limit=2&fields=id')).body.data.map((p: { id: string }) => p.id) as string[];
    expect(projects).toHaveLength(2);
    const url = `/renders?filter[project][_in]=${projects.join(',')}&sort=-date_created&limit=12&fields=id,title`;
    const l = await legacy('GET', url);
    const of = await legacy('GET', `/renders?filter[project][_in]=${projects.join(',')}&sort=-date_created&limit=12&fields=id,project,date_created`);
    expect(new Set(of.body.data.map((r: { project: string }) => r.project)).size).toBe(2); // both projects in the answer
    const shape = await recordedShape('GET', '/renders', url);
    // the report names the parameter the snippets read: the list (it named project_id, which none of them reads)
    expect(equivalentOfShape(shape, gw.deps.mappings, 100).params.map((p) => p.name)).toContain('project_ids');
    expect(equivalentOfShape(shape, gw.deps.mappings, 100).params.map((p) => p.name)).not.toContain('project_id');
    const out = await runAll(shape, { project_ids: await Promise.all(projects.map((p) => v1Of('project', p))), limit: 12 });
    const want = await legacyAsV1(l.body.data);
    // the same items, newest first; renders created at the same time may come in another order (the legacy API breaks
    // ties by its uuid, which v1 objects do not carry: docs/migration.md)
    const at = new Map((await legacyAsV1(of.body.data.map((r: { id: string }) => r))).map((r, i) => [r.id, of.body.data[i].date_created as string]));
    const byId = (xs: { id: string }[]) => [...xs].sort((a, b) => a.id.localeCompare(b.id));
    for (const [lang, got] of Object.entries(out)) {
      expect(byId(v1List(got)), lang).toEqual(byId(want));
      const dates = v1List(got).map((r) => at.get(r.id) as string);
      expect(dates, lang).toEqual([...dates].sort().reverse());
    }
  });

  it('the projects of two accounts (_in): every account walked (issue 39: one account was read)', async () => {
    const accounts = (await legacy('GET', '/accounts?limit=2&fields=id')).body.data.map((a: { id: string }) => a.id) as string[];
    expect(accounts).toHaveLength(2);
    const url = `/projects?filter[account][_in]=${accounts.join(',')}&sort=title&limit=-1&fields=id,title`;
    const l = await legacy('GET', url);
    const of = await legacy('GET', `/projects?filter[account][_in]=${accounts.join(',')}&limit=-1&fields=account`);
    expect(new Set(of.body.data.map((p: { account: string }) => p.account)).size).toBe(2); // both accounts in the answer
    const out = await runAll(await recordedShape('GET', '/projects', url), { team_ids: await Promise.all(accounts.map((a) => v1Of('account', a))) });
    const want = await Promise.all(l.body.data.map(async (p: { id: string; title: string }) => ({ id: await v1Of('project', p.id), name: p.title })));
    for (const [lang, got] of Object.entries(out)) expect(v1List(got), lang).toEqual(want);
  });

  it('renders created since a date and updated before another (an incremental sync): every language filters the window (issue 39: no calls, [])', async () => {
    const all = (await legacy('GET', '/renders?limit=-1&fields=date_created&sort=date_created')).body.data.map((r: { date_created: string }) => r.date_created);
    const since = all[Math.floor(all.length / 3)] as string;
    const until = all[Math.floor((2 * all.length) / 3)] as string;
    const url = `/renders?filter[date_created][_gte]=${since}&filter[date_created][_lt]=${until}&sort=-date_created&limit=-1&fields=id,title`;
    const l = await legacy('GET', url);
    expect(l.body.data.length).toBeGreaterThan(1);
    expect(l.body.data.length).toBeLessThan(all.length - 1); // items on both sides of the window
    const shape = await recordedShape('GET', '/renders', url);
    const out = await runAll(shape, { date_created_gte: since, date_created_lt: until });
    const want = await legacyAsV1(l.body.data);
    const byId = (xs: { id: string }[]) => [...xs].sort((a, b) => a.id.localeCompare(b.id));
    // the same items (ties of one instant may come in another order: docs/migration.md)
    for (const [lang, got] of Object.entries(out)) expect(byId(v1List(got)), lang).toEqual(byId(want));
    // a window with a date-only bound and one from $NOW, as incremental syncs write them
    const day = since.slice(0, 10);
    const u2 = `/renders?filter[date_created][_gte]=${day}&filter[date_updated][_lte]=$NOW&limit=-1&fields=id,title&sort=-date_created`;
    const l2 = await legacy('GET', u2);
    const out2 = await runAll(await recordedShape('GET', '/renders', u2), { date_created_gte: day, date_updated_lte: new Date(gw.deps.clock.now()).toISOString() });
    for (const [lang, got] of Object.entries(out2)) expect(byId(v1List(got)), lang).toEqual(byId(await legacyAsV1(l2.body.data)));
  });

  it('the templates of every project: the snippets answer templates (issue 39: they returned the project list)', async () => {
    const url = '/templates?fields=id,title&limit=-1';
    const l = await legacy('GET', url);
    expect(l.body.data.length).toBeGreaterThan(1);
    const out = await runAll(await recordedShape('GET', '/templates', url), {});
    const want = (await Promise.all(l.body.data.map(async (t: { id: string; title: string }) => `${await gw.deps.ids.toV1('template', t.id)} ${t.title}`))).sort();
    for (const [lang, got] of Object.entries(out)) expect(got.map((t: { id: string; name: string }) => `${t.id} ${t.name}`).sort(), lang).toEqual(want);
  });

  it("an account's projects with a relational field", async () => {
    const account = (await legacy('GET', '/accounts?limit=1&fields=id')).body.data[0].id as string;
    const url = `/projects?filter[account][_eq]=${account}&fields=id,title,account.name`;
    const l = await legacy('GET', url);
    expect(l.body.data.length).toBeGreaterThan(0);
    const want = await Promise.all(l.body.data.map(async (p: any) => ({ id: await v1Of('project', p.id), name: p.title, team: p.account.name })));
    const out = await runAll(await recordedShape('GET', '/projects', url), { team_id: await v1Of('account', account), limit: 100 });
    for (const got of [out.node, out.python, out.curl]) expect(got.map((p: any) => ({ id: p.id, name: p.name, team: p.team.name }))).toEqual(want);
  });

  it('a title search', async () => {
    const word = String((await legacy('GET', '/renders?limit=1&fields=title')).body.data[0].title).split(' ')[0] as string;
    const url = `/renders?search=${encodeURIComponent(word)}&fields=id,title`;
    const l = await legacy('GET', url);
    expect(l.body.data.length).toBeGreaterThan(0);
    const out = await runAll(await recordedShape('GET', '/renders', url), { search: word, limit: 100 });
    const want = await legacyAsV1(l.body.data);
    for (const got of [out.node, out.python, out.curl]) expect(v1List(got)).toEqual(want);
    // the legacy search matches status names too: "encod" finds the renders v1 calls finalizing
    const byStatus = await legacy('GET', '/renders?search=encod&fields=id,title');
    expect(byStatus.body.data.length).toBeGreaterThan(0);
    const again = await runAll(await recordedShape('GET', '/renders', url), { search: 'encod', limit: 100 });
    const wantStatus = await legacyAsV1(byStatus.body.data);
    for (const got of [again.node, again.python, again.curl]) expect(v1List(got)).toEqual(wantStatus);
  });

  it('a render create', async () => {
    const project = (await legacy('GET', '/projects?limit=1&fields=id,account')).body.data[0];
    const l = await legacy('POST', '/renders', { project: project.id, account: project.account, title: 'From legacy', data: {} });
    expect(l.status).toBe(200);
    const shape = await recordedShape('POST', '/renders', '/renders', ['account', 'data', 'project', 'title']);
    const out = await runAll(shape, { project_id: await v1Of('project', project.id), title: 'From legacy', data: {} });
    for (const got of [out.node, out.python, out.curl]) {
      expect(got).toHaveLength(1);
      expect(got[0]).toMatchObject({ name: l.body.data.title, project: { id: await v1Of('project', project.id) } });
      expect(got[0].id).toMatch(/^rend_/);
    }
  });

  it('a title update', async () => {
    const first = (await legacy('GET', '/renders?limit=1&fields=id')).body.data[0].id as string;
    const l = await legacy('PATCH', `/render/${first}`, { title: 'Renamed' });
    expect(l.status).toBe(200);
    const out = await runAll(await recordedShape('PATCH', '/render/:id', `/render/${first}`, ['title']), { render_id: await v1Of('render', first), title: 'Renamed' });
    for (const got of [out.node, out.python, out.curl]) expect(v1List(got)).toEqual([{ id: await v1Of('render', first), name: l.body.data.title }]);
  });

  it('text and times as the gateway reads them: an upper-case accented search, a title sort over accents and case, a date with an offset (held-out check of issue 39: the jq script folded ASCII only, sorted by code point and ignored the zone)', async () => {
    const project = (await legacy('GET', '/projects?limit=1&fields=id,account')).body.data[0];
    for (const title of ['Café au lait', 'CAFÉ noir', 'Élan', 'apple', 'Apple', 'Zebra', 'école', 'Ecole']) {
      expect((await legacy('POST', '/renders', { project: project.id, account: project.account, title, data: {} })).status).toBe(200);
    }
    const search = '/renders?search=CAF%C3%89&fields=id,title&limit=-1&sort=id';
    const found = await legacy('GET', search);
    const hits = found.body.data.map((r: { title: string }) => r.title) as string[];
    expect(hits).toEqual(expect.arrayContaining(['CAFÉ noir', 'Café au lait']));
    for (const t of hits) expect(t.toLowerCase()).toContain('café');
    const bySearch = await runAll(await recordedShape('GET', '/renders', search), { search: 'CAFÉ', limit: 100 });
    const byId = (xs: { id: string }[]) => [...xs].sort((a, b) => a.id.localeCompare(b.id));
    for (const [lang, got] of Object.entries(bySearch)) expect(byId(v1List(got)), lang).toEqual(byId(await legacyAsV1(found.body.data)));

    const sorted = `/renders?filter[project][_eq]=${project.id}&sort=title&fields=id,title&limit=-1`;
    const inOrder = await legacy('GET', sorted);
    const titles = inOrder.body.data.map((r: { title: string }) => r.title) as string[];
    // (the reference: the legacy collation's order; apple before Apple, Ecole before école, Élan among the e's)
    expect(titles.filter((t) => ['apple', 'Apple', 'Ecole', 'école', 'Élan', 'Zebra'].includes(t))).toEqual(['apple', 'Apple', 'Ecole', 'école', 'Élan', 'Zebra']);
    const bySort = await runAll(await recordedShape('GET', '/renders', sorted), { project_id: await gw.deps.ids.toV1('project', project.id), limit: 100 });
    // (a render an earlier test renamed keeps its new title in the gateway only — an overlay v1 cannot show: left out)
    const legacyOrder = await legacyAsV1(inOrder.body.data);
    for (const [lang, got] of Object.entries(bySort)) {
      const named = new Map(v1List(got).map((r) => [r.id, r.name]));
      const same = legacyOrder.filter((r) => named.get(r.id) === r.name).map((r) => r.id);
      expect(same.length, lang).toBeGreaterThan(legacyOrder.length - 2);
      // (in title order: renders of one title may come in another order — the legacy API breaks ties by its uuid)
      const titleOf = (id: string) => named.get(id);
      expect(v1List(got).map((r) => r.id).filter((id) => same.includes(id)).map(titleOf), lang).toEqual(same.map(titleOf));
    }

    // a window's bound written with an offset: the instant it names (22:00+05:00 is 17:00 UTC)
    const all = (await legacy('GET', '/renders?limit=-1&fields=date_created&sort=date_created')).body.data.map((r: { date_created: string }) => r.date_created);
    const middle = new Date(all[Math.floor(all.length / 2)] as string);
    const shifted = new Date(middle.getTime() + 5 * 3_600_000).toISOString().slice(0, 19) + '+05:00';
    const windowUrl = `/renders?filter[date_created][_gte]=${encodeURIComponent(shifted)}&fields=id,title&limit=-1&sort=id`;
    const win = await legacy('GET', windowUrl);
    expect(win.body.data.length).toBeGreaterThan(0);
    expect(win.body.data.length).toBeLessThan(all.length);
    const byWindow = await runAll(await recordedShape('GET', '/renders', windowUrl), { date_created_gte: shifted });
    const wantIds = (await legacyAsV1(win.body.data)).map((r) => r.id).sort();
    for (const [lang, got] of Object.entries(byWindow)) expect(v1List(got).map((r) => r.id).sort(), lang).toEqual(wantIds);
  });

  it('a project search: v1 projects carry no status, the jq step reads none (held-out check of issue 39: jq exited 5)', async () => {
    const word = String((await legacy('GET', '/projects?limit=1&fields=title')).body.data[0].title).split(' ')[0] as string;
    const url = `/projects?search=${encodeURIComponent(word)}&fields=id,title`;
    const l = await legacy('GET', url);
    expect(l.body.data.length).toBeGreaterThan(0);
    const out = await runAll(await recordedShape('GET', '/projects', url), { search: word, limit: 100 });
    const want = await Promise.all(l.body.data.map(async (p: { id: string; title: string }) => ({ id: await v1Of('project', p.id), name: p.title })));
    for (const [lang, got] of Object.entries(out)) expect(v1List(got), lang).toEqual(want);
  });

  it('title conditions (_icontains, _nends_with, _starts_with, _ncontains, LIKE wildcards, PostgreSQL folding): every language tests them as the gateway (held-out check of issue 39: a TODO)', async () => {
    const project = (await legacy('GET', '/projects?limit=1&fields=id,account')).body.data[0];
    for (const title of ['Café crème', 'café NOIR', 'Cafés du monde noir', 'take_1 crème', 'take 1 crème', 'ΣΑΣ crème']) {
      expect((await legacy('POST', '/renders', { project: project.id, account: project.account, title, data: {} })).status).toBe(200);
    }
    const byId = (xs: { id: string }[]) => xs.map((x) => x.id).sort();
    const cases: [string, Record<string, string>][] = [
      ['/renders?filter[title][_icontains]=CAF%C3%89&filter[title][_nends_with]=noir&fields=id,title&limit=-1',
        { 'title_icontains': 'CAFÉ', 'title_nends_with': 'noir' }],
      ['/renders?filter[title][_starts_with]=Caf&filter[title][_ncontains]=%C3%A8&fields=id,title&limit=-1',
        { 'title_starts_with': 'Caf', 'title_ncontains': 'è' }],
      // LIKE's wildcard (Directus on PostgreSQL: `_` is any one character) and PostgreSQL's folding of the title (ΣΑΣ is σασ)
      ['/renders?filter[title][_contains]=take_1&fields=id,title&limit=-1', { 'title_contains': 'take_1' }],
      ['/renders?filter[title][_icontains]=%CF%83%CE%B1%CF%83&fields=id,title&limit=-1', { 'title_icontains': 'σασ' }],
    ];
    for (const [url, values] of cases) {
      const l = await legacy('GET', url);
      expect(l.status).toBe(200);
      expect(l.body.data.length, url).toBeGreaterThan(0);
      const shape = await recordedShape('GET', '/renders', url);
      expect(equivalentOfShape(shape, gw.deps.mappings, 100).params.map((p) => p.name)).toEqual(expect.arrayContaining(Object.keys(values)));
      const want = byId(await legacyAsV1(l.body.data));
      if (url.includes('take_1')) expect(l.body.data.map((r: { title: string }) => r.title).sort()).toEqual(['take 1 crème', 'take_1 crème']);
      if (url.includes('_icontains]=%CF')) expect(l.body.data.map((r: { title: string }) => r.title)).toEqual(['ΣΑΣ crème']);
      const out = await runAll(shape, values);
      for (const [lang, got] of Object.entries(out)) expect(byId(v1List(got)), `${lang} ${url}`).toEqual(want);
    }
  });

  it('meta=filter_count: every language answers { meta, data }, the count taken after the filter and before the page (held-out check of issue 39: a TODO)', async () => {
    const all = (await legacy('GET', '/renders?limit=-1&fields=date_created&sort=date_created')).body.data.map((r: { date_created: string }) => r.date_created);
    const until = all[Math.floor(all.length / 2)] as string;
    const cases: [string, Record<string, unknown>][] = [
      ['/renders?filter[status][_eq]=complete&meta=filter_count&limit=3&fields=id,title', { status: 'complete', limit: 3 }],
      [`/renders?filter[date_created][_lte]=${until}&meta=filter_count&limit=4&page=2&fields=id,title`, { date_created_lte: until, limit: 4, offset: 4 }],
      ['/renders?search=render&meta=filter_count&limit=5&fields=id,title', { search: 'render', limit: 5 }],
    ];
    for (const [url, values] of cases) {
      const l = await legacy('GET', url);
      expect(l.status, url).toBe(200);
      const count = l.body.meta.filter_count as number;
      // (the page is shorter than the count: the count is not the page's length)
      expect(count, url).toBeGreaterThan(l.body.data.length);
      const out = await runAll(await recordedShape('GET', '/renders', url), values);
      for (const [lang, got] of Object.entries(out)) {
        expect(got.meta, `${lang} ${url}`).toEqual({ filter_count: count });
        expect(got.data.length, `${lang} ${url}`).toBe(l.body.data.length);
      }
    }
  });

  it('status _nin, listed and counted: every language excludes the statuses (held-out check of issue 39: a TODO after the count)', async () => {
    const list = '/renders?filter[status][_nin]=complete,failed&fields=id,title&limit=-1&sort=id';
    const l = await legacy('GET', list);
    const every = (await legacy('GET', '/renders?limit=-1&fields=id')).body.data.length as number;
    expect(l.body.data.length).toBeGreaterThan(0);
    expect(l.body.data.length).toBeLessThan(every);
    const out = await runAll(await recordedShape('GET', '/renders', list), { status_nin: ['complete', 'failed'] });
    const want = (await legacyAsV1(l.body.data)).map((r) => r.id).sort();
    for (const [lang, got] of Object.entries(out)) expect(v1List(got).map((r) => r.id).sort(), lang).toEqual(want);
    const count = '/renders?filter[status][_nin]=complete,failed&aggregate[count]=*';
    const c = await legacy('GET', count);
    const counted = await runAll(await recordedShape('GET', '/renders', count), { status_nin: ['complete', 'failed'] });
    for (const [lang, got] of Object.entries(counted)) expect(got.map((g: { count: number }) => Number(g.count)), lang).toEqual([Number(c.body.data[0].count)]);
  });

  it('meta=total_count: counted over every item before the filter, in every language (survey of issue 39: a TODO)', async () => {
    const url = '/renders?filter[status][_neq]=complete&meta=total_count,filter_count&limit=3&fields=id,title';
    const l = await legacy('GET', url);
    const every = (await legacy('GET', '/renders?limit=-1&fields=id')).body.data.length as number;
    expect(l.body.meta).toEqual({ total_count: every, filter_count: expect.any(Number) });
    expect(l.body.meta.filter_count).toBeLessThan(every); // (the two counts differ: the filter is counted after)
    const shape = await recordedShape('GET', '/renders', url);
    const out = await runAll(shape, { status: 'complete', limit: 3 });
    // (renders of one instant may come in another order — the legacy API breaks ties by a uuid v1 does not carry —, so
    // the page is checked as three of the filtered renders, the counts exactly)
    const filtered = new Set((await legacyAsV1((await legacy('GET', '/renders?filter[status][_neq]=complete&limit=-1&fields=id')).body.data)).map((r) => r.id));
    for (const [lang, got] of Object.entries(out)) {
      expect(got.meta, lang).toEqual(l.body.meta);
      expect(got.data, lang).toHaveLength(3);
      for (const r of v1List(got.data)) expect(filtered.has(r.id), lang).toBe(true);
    }
  });

  it('_null both ways: true keeps the items without the value, false the others (survey of issue 39: a TODO)', async () => {
    for (const flag of [true, false]) {
      const url = `/renders?filter[title][_null]=${flag}&fields=id,title&limit=-1&sort=id`;
      const l = await legacy('GET', url);
      expect(l.status).toBe(200);
      const out = await runAll(await recordedShape('GET', '/renders', url), { title_null: flag });
      const want = (await legacyAsV1(l.body.data)).map((r) => r.id).sort();
      if (!flag) expect(want.length).toBeGreaterThan(0);
      for (const [lang, got] of Object.entries(out)) expect(v1List(got).map((r) => r.id).sort(), `${lang} _null=${flag}`).toEqual(want);
    }
  });

  it('count(id) grouped by project: every language keys its groups by the project and counts as { id: n } (survey of issue 39: a TODO)', async () => {
    const url = '/renders?aggregate[count]=id&groupBy[]=project';
    const l = await legacy('GET', url);
    expect(l.body.data.length).toBeGreaterThan(1);
    const want = Object.fromEntries(await Promise.all(l.body.data.map(async (g: { project: string; count: { id: string } }) =>
      [await v1Of('project', g.project), Number(g.count.id)])));
    const out = await runAll(await recordedShape('GET', '/renders', url), {});
    for (const [lang, got] of Object.entries(out)) {
      expect(Object.fromEntries(got.map((g: { project: string; count: { id: number } }) => [g.project, g.count.id])), lang).toEqual(want);
    }
  });

  it('a template and an account by id, and the templates in the legacy order: whole snippets (survey of issue 39: a TODO, another order)', async () => {
    const templates = (await legacy('GET', '/templates?fields=id,title,date_created&limit=-1')).body.data as { id: string; title: string; date_created: string }[];
    expect(new Set(templates.map((t) => t.date_created)).size).toBeGreaterThan(1);
    const t = templates.at(-1)!;
    expect((await legacy('GET', `/templates/${t.id}?fields=id,title`)).body.data).toEqual({ id: t.id, title: t.title });
    const one = await runAll(await recordedShape('GET', '/templates/:id', `/templates/${t.id}?fields=id,title`),
      { template_id: await gw.deps.ids.toV1('template', t.id) });
    for (const [lang, got] of Object.entries(one)) expect(got.map((x: { id: string; name: string }) => [x.id, x.name]), lang).toEqual([[await gw.deps.ids.toV1('template', t.id), t.title]]);
    const account = (await legacy('GET', '/accounts?limit=1&fields=id,name')).body.data[0] as { id: string; name: string };
    expect((await legacy('GET', `/accounts/${account.id}?fields=id,name`)).body.data).toEqual(account);
    const acc = await runAll(await recordedShape('GET', '/accounts/:id', `/accounts/${account.id}?fields=id,name`), { team_id: await v1Of('account', account.id) });
    for (const [lang, got] of Object.entries(acc)) expect(got.map((x: { id: string; name: string }) => [x.id, x.name]), lang).toEqual([[await v1Of('account', account.id), account.name]]);
    // the list, newest project first (-date_created, a template's being its project's)
    // (date_created read: a derived field the snippet leaves to the client — its TODO, the shape partial; the order is kept)
    await legacy('GET', '/templates?fields=id,title&limit=-1');
    const list = await runAll(await recordedShape('GET', '/templates', '/templates?fields=id,title&limit=-1'), {});
    const dateOf = new Map(await Promise.all(templates.map(async (x) => [await gw.deps.ids.toV1('template', x.id), x.date_created] as const)));
    for (const [lang, got] of Object.entries(list)) {
      expect(got.map((x: { id: string }) => dateOf.get(x.id)), lang).toEqual(templates.map((x) => x.date_created));
    }
  });

  it('min and max of a date, countDistinct and count in one row: every language computes them as the gateway (survey of issue 39: a TODO)', async () => {
    const url = '/renders?aggregate[min]=date_created&aggregate[max]=date_created,date_updated&aggregate[countDistinct]=project&aggregate[count]=*';
    const l = await legacy('GET', url);
    expect(l.status).toBe(200);
    const want = l.body.data[0] as { min: { date_created: string }; max: { date_created: string }; countDistinct: { project: string }; count: string };
    expect(want.min.date_created < want.max.date_created).toBe(true); // (both ends met: more than one render)
    const shape = await recordedShape('GET', '/renders', url);
    const out = await runAll(shape, {});
    for (const [lang, got] of Object.entries(out)) {
      expect(got, lang).toHaveLength(1);
      expect({ ...got[0], count: String(got[0].count), countDistinct: { project: String(got[0].countDistinct.project) } }, lang).toEqual(want);
    }
  });

  it('a failed v1 call ends every snippet with an error, never with an empty answer (held-out check of issue 39: curl printed [] and exit 0)', async () => {
    const url = '/renders?filter[date_updated][_gte]=2020-01-01&fields=id,title&limit=-1';
    await legacy('GET', url);
    const s = renderSnippets(equivalentOfShape(await recordedShape('GET', '/renders', url), gw.deps.mappings, 100), 'legacyEquivalent');
    const bad = { ...process.env, V1: gw.s.url, KEY: 'not-a-key', PARAMS: JSON.stringify({ date_updated_gte: '2020-01-01' }), DATE_UPDATED_GTE: '2020-01-01' };
    const sub = mkdtempSync(join(dir, 'bad-'));
    writeFileSync(join(sub, 'snippet.sh'), s.curl);
    writeFileSync(join(sub, 'snippet.mjs'), `${s.node}\nconsole.log(JSON.stringify(await legacyEquivalent(process.env.V1, process.env.KEY, JSON.parse(process.env.PARAMS))));\n`);
    writeFileSync(join(sub, 'snippet.py'), `${s.python}\nimport os\nprint(json.dumps(legacyEquivalent(os.environ["V1"], os.environ["KEY"], json.loads(os.environ["PARAMS"]))))\n`);
    for (const [cmd, file] of [['sh', 'snippet.sh'], ['node', 'snippet.mjs'], ['python3', 'snippet.py']] as const) {
      const failed = await run(cmd, [join(sub, file)], { env: bad, cwd: sub }).then((r) => ({ code: 0, out: r.stdout }), (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }));
      expect(failed.code, cmd).not.toBe(0);
      expect(failed.out.trim(), cmd).toBe('');
    }
  });
});
