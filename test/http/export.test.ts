import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvExport, csvExportStream } from '../../src/shape/export-csv.js';
import { derivedUuid } from '../../src/translate/ids.js';
import { expectedCsv, parseCsv, parseXmlItems, parseYamlItems } from '../helpers/exits.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * `?export=json|csv|xml|yaml` answers what a real Directus 10.10 answered for the same query over the same data
 * (test/fixtures/directus/answers.json, captured by `npm run capture:directus`): the same bytes, content type and
 * attachment name (its time aside); signed URLs compared without their signatures (they are minted per read). These
 * run with EXPORT_CSV_ESCAPE_FORMULAS=false (Directus's bytes); the default, formula cells neutralised, is tested last.
 */
interface Answer { path: string; status: number; contentType: string; disposition: string | null; body: string }
const fixtures = JSON.parse(readFileSync('test/fixtures/directus/answers.json', 'utf8')) as { answers: Record<string, Answer> };
const unsigned = (s: string) => s.replace(/expires=\d+&(amp;)?signature=[0-9a-f]+/g, 'expires=…&signature=…');
const dispositionOf = (d: string | null) => d?.replace(/ \d{8}-\d{1,6}\./, ' <date>.');

let gw: TestGateway;
let token: string;
beforeAll(async () => {
  gw = await startGateway({ EXPORT_CSV_ESCAPE_FORMULAS: 'false' }, { scale: 'tiny' });
  await gw.addUser(0, 'ann@example.com');
  token = await gw.login('ann@example.com');
  await gw.deps.replica!.syncNow(gw.s.keys[0]!.teams.map((t) => t.id));
});
afterAll(async () => gw.close());

describe('export, as Directus 10 answers it', () => {
  const formats = ['xml', 'yaml'].flatMap((f) => ['', ' output', ' projects with renders', ' empty', ' every field'].map((c) => `export ${f}${c}`));
  for (const name of [
    'export json', 'export csv', 'export csv output', 'export csv projects with renders', 'export csv empty', 'export json empty', 'export json one',
    'export csv every field', 'export json every field', ...formats,
  ]) {
    it(name, async () => {
      const expected = fixtures.answers[name]!;
      for (const prefix of ['', '/items']) {
        const res = await gw.app.inject({ method: 'GET', url: `${prefix}${expected.path}`, headers: { authorization: `Bearer ${token}` } });
        expect(res.statusCode).toBe(expected.status);
        expect(res.headers['content-type']).toBe(expected.contentType);
        expect(dispositionOf(res.headers['content-disposition'] as string)).toBe(dispositionOf(expected.disposition));
        expect(unsigned(res.body)).toBe(unsigned(expected.body));
      }
    });
  }

  it('a bad format is Directus\'s 400', async () => {
    const bad = await gw.get(fixtures.answers['export bad']!.path, token);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual(JSON.parse(fixtures.answers['export bad']!.body));
  });

  it('one item exports as the object; limit=-1 exports every item (streamed JSON)', async () => {
    const list = await gw.get('/renders?limit=-1&fields=id&sort=id', token);
    const one = await gw.app.inject({ method: 'GET', url: `/renders/${list.body.data[0].id}?export=json&fields=id`, headers: { authorization: `Bearer ${token}` } });
    expect(one.body).toBe(JSON.stringify({ id: list.body.data[0].id }, null, '\t'));
    // an item route's yaml and xml file: the item itself (no sequence, no item element)
    const asFile = (format: string) => gw.app.inject({ method: 'GET', url: `/renders/${list.body.data[0].id}?export=${format}&fields=id,title`, headers: { authorization: `Bearer ${token}` } });
    const item = (await gw.get(`/renders/${list.body.data[0].id}?fields=id,title`, token)).body.data;
    expect(parseYamlItems((await asFile('yaml')).body)).toEqual(item);
    expect((await asFile('xml')).body).toBe(`<?xml version='1.0'?>\n<data>\n    <id>${item.id}</id>\n    <title>${item.title.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</title>\n</data>`);
    const all = await gw.app.inject({ method: 'GET', url: '/renders?limit=-1&fields=id&sort=id&export=json', headers: { authorization: `Bearer ${token}` } });
    expect(JSON.parse(all.body)).toEqual(list.body.data);
    expect(all.body).toBe(JSON.stringify(list.body.data, null, '\t'));
    const titled = await gw.get('/renders?limit=-1&fields=id,title', token);
    const csv = await gw.app.inject({ method: 'GET', url: '/renders?limit=-1&fields=id,title&export=csv', headers: { authorization: `Bearer ${token}` } });
    expect(parseCsv(csv.body)).toEqual(expectedCsv(titled.body.data, false));
    // limit=-1 is written through a scratch file (then removed): the same bytes as the page built at once
    const spools = () => readdirSync(tmpdir()).filter((f) => f.startsWith('gateway-spool-')).length;
    const before = spools();
    const fields = 'fields=id,title,status,data,output,project.title&sort=id';
    const streamed = await gw.app.inject({ method: 'GET', url: `/renders?limit=-1&${fields}&export=csv`, headers: { authorization: `Bearer ${token}` } });
    const paged = await gw.app.inject({ method: 'GET', url: `/renders?limit=1000&${fields}&export=csv`, headers: { authorization: `Bearer ${token}` } });
    expect(streamed.headers['x-gateway-source']).toBe('index');
    expect(unsigned(streamed.body)).toBe(unsigned(paged.body));
    expect(streamed.body.split('\n')[0]).toContain('"output.master"');
    expect(spools()).toBe(before);
  });
});

describe('refused reads, as Directus 10.10 words them', () => {
  // the whole body: its messages and no extension field Directus does not send (the gateway keeps a problem's path to itself)
  const names = Object.keys(fixtures.answers).filter((n) => n.startsWith('error '));
  it('the fixtures hold the refused reads', () => expect(names.length).toBeGreaterThanOrEqual(10));
  for (const name of names) {
    it(name, async () => {
      const expected = fixtures.answers[name]!;
      for (const prefix of ['', '/items']) {
        const res = await gw.get(`${prefix}${expected.path}`, token);
        expect(res.status, prefix).toBe(expected.status);
        expect(res.body, prefix).toEqual(JSON.parse(expected.body));
      }
    });
  }
});

describe('Directus features beyond the legacy document, as Directus 10 answers them, on both paths', () => {
  for (const mode of ['index', 'live'] as const) {
    it(`${mode}: count() in fields, filter and sort; deep; alias; relational paths two deep; _between forms; one-to-many key order`, async () => {
      const g = mode === 'index' ? gw : await startGateway({ INDEX_ENABLED: 'false' }, { scale: 'tiny' });
      try {
        const t = mode === 'index' ? token : (await g.addUser(0, 'bo@example.com'), await g.login('bo@example.com'));
        for (const name of [
          'count o2m in fields', 'deep limit', 'alias', 'count o2m in filter and sort', 'count o2m in filter none', 'count o2m of accounts',
          'relational depth 2 filter', 'relational depth 2 sort', 'between as a JSON array', 'between as a list', 'one-to-many in key order',
          'one-to-many of accounts in key order',
        ]) {
          const expected = fixtures.answers[name]!;
          const res = await g.get(expected.path, t);
          expect(res.status, name).toBe(expected.status);
          expect(res.headers['x-gateway-source'], name).toBe(mode);
          expect(res.body, name).toEqual(JSON.parse(expected.body));
        }
      } finally {
        if (g !== gw) await g.close();
      }
    });
  }

  it('date functions answer PostgreSQL number strings in fields and group keys, groups in numeric order (both paths)', async () => {
    const live = await startGateway({ INDEX_ENABLED: 'false' }, {}, { sim: gw.s });
    try {
      await live.addUser(0, 'dee@example.com');
      const tl = await live.login('dee@example.com');
      for (const name of ['date functions in fields', 'date function in groupBy']) {
        const directus = JSON.parse(fixtures.answers[name]!.body) as { data: Record<string, unknown>[] };
        for (const [g, t] of [[gw, token], [live, tl]] as const) {
          const ours = (await g.get(fixtures.answers[name]!.path, t)).body as { data: Record<string, unknown>[] };
          // the simulator's dates follow its start time: the shapes and types are Directus's, the values follow the data
          expect(Object.keys(ours.data[0]!)).toEqual(Object.keys(directus.data[0]!));
          for (const k of Object.keys(directus.data[0]!)) expect(typeof ours.data[0]![k], `${name} ${k}`).toBe(typeof directus.data[0]![k]);
        }
      }
      const rows = (await gw.get('/renders?fields=date_created,year(date_created),month(date_created)&limit=-1', token)).body.data as Record<string, string>[];
      for (const r of rows) {
        const d = new Date(r.date_created!);
        expect(r.date_created_year).toBe(String(d.getUTCFullYear()));
        expect(r.date_created_month).toBe(String(d.getUTCMonth() + 1));
      }
      const groups = (await gw.get('/renders?aggregate[count]=*&groupBy[]=year(date_created)&groupBy[]=month(date_created)', token)).body.data as Record<string, string>[];
      const order = groups.map((g) => Number(g.date_created_year) * 100 + Number(g.date_created_month));
      expect(order).toEqual([...order].sort((a, b) => a - b));
    } finally {
      await live.close();
    }
  });

  it('count() in filter and sort follows the data: index and live agree once the counts differ', async () => {
    const live = await startGateway({ INDEX_ENABLED: 'false' }, {}, { sim: gw.s });
    try {
      await live.addUser(0, 'cy@example.com');
      const tl = await live.login('cy@example.com');
      // two more renders in one project: its count is 10 where the others have 8
      const project = [...gw.s.sim.world.projects.values()].find((p) => gw.s.keys[0]!.teams.some((t) => t.id === p.teamId))!;
      const person = gw.s.sim.world.authenticate(`Bearer ${gw.s.keys[0]!.api_key}`);
      for (const n of [1, 2]) gw.s.sim.world.createRender(person, { project_id: project.id, name: `counted ${n}` });
      await gw.deps.replica!.syncNow(gw.s.keys[0]!.teams.map((t) => t.id));
      const url = '/projects?fields=id,count(renders)&filter[count(renders)][_gt]=8&sort=-count(renders),id';
      const a = await gw.get(url, token);
      const b = await live.get(url, tl);
      expect(a.headers['x-gateway-source']).toBe('index');
      expect(a.body).toEqual(b.body);
      expect(a.body.data).toEqual([{ id: derivedUuid('project', project.id), renders_count: '10' }]);
      const sorted = await gw.get('/projects?fields=id&sort=-count(renders),id&limit=1', token);
      expect(sorted.body.data[0].id).toBe(derivedUuid('project', project.id));
      expect((await gw.get('/projects?sort=count(title)', token)).status).toBe(400);
      expect((await gw.get('/projects?filter[count(title)][_gt]=1', token)).status).toBe(400);
    } finally {
      await live.close();
    }
  });

  it('deep: _filter, _offset, _page, nested relations, the JSON form; bad options are 400s naming them', async () => {
    const all = (await gw.get('/projects?fields=id,renders.id,renders.status&sort=id&limit=1&deep[renders][_limit]=-1', token)).body.data[0];
    const ids = (all.renders as { id: string; status: string }[]).map((r) => r.id);
    expect(ids).toEqual([...ids].sort()); // primary-key order
    const complete = (all.renders as { id: string; status: string }[]).filter((r) => r.status === 'complete').map((r) => r.id);
    const filtered = await gw.get('/projects?fields=id,renders.id&sort=id&limit=1&deep[renders][_filter][status][_eq]=complete', token);
    expect(filtered.body.data[0].renders.map((r: { id: string }) => r.id)).toEqual(complete);
    const paged = await gw.get('/projects?fields=id,renders&sort=id&limit=1&deep[renders][_limit]=2&deep[renders][_page]=2', token);
    expect(paged.body.data[0].renders).toEqual(ids.slice(2, 4));
    const titles = (await gw.get('/projects?fields=id,renders.id,renders.title&sort=id&limit=1&deep[renders][_limit]=-1', token)).body.data[0].renders as { id: string; title: string }[];
    const word = titles[0]!.title.split(' ')[0]!.toLowerCase();
    const searched = await gw.get(`/projects?fields=id,renders&sort=id&limit=1&deep[renders][_search]=${encodeURIComponent(word)}&deep[renders][_limit]=-1`, token);
    expect(searched.body.data[0].renders).toEqual(titles.filter((r) => r.title.toLowerCase().includes(word)).map((r) => r.id));
    const offset = await gw.get(`/projects?fields=id,renders&sort=id&limit=1&deep=${encodeURIComponent(JSON.stringify({ renders: { _offset: 1, _limit: 1 } }))}`, token);
    expect(offset.body.data[0].renders).toEqual(ids.slice(1, 2));
    const nested = await gw.get('/accounts?fields=id,projects.id,projects.renders&limit=1&sort=id&deep[projects][_limit]=1&deep[projects][renders][_limit]=1', token);
    expect(nested.body.data[0].projects).toHaveLength(1);
    expect(nested.body.data[0].projects[0].renders).toHaveLength(1);
    for (const bad of ['deep[renders][_nosuch]=1', 'deep[renders][_limit]=x', 'deep={bad json']) {
      const r = await gw.get(`/projects?fields=id,renders&${bad}`, token);
      expect(r.status, bad).toBe(400);
      expect(r.body.errors[0].extensions.code, bad).toBe('INVALID_QUERY');
    }
    // deep on a field that is not a relation is ignored, as Directus 10.10 ignores it (test/write/item-writes.test.ts)
    expect((await gw.get('/projects?fields=id,renders&deep[title][_limit]=1', token)).status).toBe(200);
    const count = await gw.get('/accounts?fields=id,count(renders),count(projects)&sort=id', token);
    for (const a of count.body.data as { id: string; renders_count: string; projects_count: string }[]) {
      const team = gw.s.keys[0]!.teams.map((t) => t.id).find((t) => derivedUuid('account', t) === a.id)!;
      expect(a.renders_count).toBe(String([...gw.s.sim.world.renders.values()].filter((r) => r.teamId === team).length));
      expect(a.projects_count).toBe(String([...gw.s.sim.world.projects.values()].filter((p) => p.teamId === team).length));
    }
    expect((await gw.get('/renders?fields=count(title)', token)).status).toBe(400);
    // one relation twice: the newest render and every id, side by side
    const twice = await gw.get('/projects?fields=id,renders,latest.id&alias[latest]=renders&deep[latest][_sort]=-date_created&deep[latest][_limit]=1&sort=id&limit=1', token);
    expect(twice.body.data[0].renders).toEqual(ids);
    expect(twice.body.data[0].latest).toHaveLength(1);
    for (const bad of ['alias[a.b]=renders', 'alias[x]=nosuch', 'alias[title]=renders', 'alias[x]=project.title']) {
      const r = await gw.get(`/projects?fields=id&${bad}`, token);
      expect(r.status, bad).toBe(400);
    }
  });
});

describe('alias names an attacker would send', () => {
  it('inherited-member and non-identifier names are 400s, in the bracket and the JSON form; nothing leaks into the answer', async () => {
    // the query-string parser drops `constructor`/`__proto__` at any bracket position: no alias, no such key answered
    const dropped = await gw.get('/projects?alias[constructor]=renders&limit=1&sort=id', token);
    expect(dropped.status).toBe(200);
    expect(Object.keys(dropped.body.data[0])).not.toContain('constructor');
    for (const q of [
      'alias[toString]=renders&fields=toString', 'alias[hasOwnProperty]=title', `alias=${encodeURIComponent('{"__proto__":"renders"}')}`,
      `alias=${encodeURIComponent('{"constructor":"renders"}')}`, `alias=${encodeURIComponent('{"a-b":"title"}')}`, `alias[${'x'.repeat(65)}]=title`,
    ]) {
      const r = await gw.get(`/projects?${q}`, token);
      expect(r.status, q).toBe(400);
      expect(r.body.errors[0].extensions.code, q).toBe('INVALID_QUERY');
    }
    const ok = await gw.get('/projects?alias[name2]=title&fields=id,name2&limit=1&sort=id', token);
    expect(Object.keys(ok.body.data[0])).toEqual(['id', 'name2']);
  });
});

describe('formula cells in CSV exports (EXPORT_CSV_ESCAPE_FORMULAS)', () => {
  const row = {
    eq: '=HYPERLINK("https://evil.example","x")', plus: '+1+cmd|/c calc', minus: '-2+3', at: '@SUM(A1)', tab: '\t=1', cr: '\r=1',
    n: -5, s: '-5', e: '+1.5e3', plain: 'a=b', inner: 'x\n=1', json: ['=1'],
  };
  const header = '"eq","plus","minus","at","tab","cr","n","s","e","plain","inner","json"';

  it("a string a spreadsheet would run gets a leading '; numbers and plain-number strings are as they are; false: as Directus", async () => {
    const expected = `${header}\n"'=HYPERLINK(""https://evil.example"",""x"")","'+1+cmd|/c calc","'-2+3","'@SUM(A1)","'\t=1","'\r=1",` +
      '-5,"-5","+1.5e3","a=b","x\n=1","[""=1""]"';
    expect(await csvExport([row], { escapeFormulas: true })).toBe(expected);
    let streamed = '';
    for await (const part of csvExportStream((async function* () { yield row; })(), { escapeFormulas: true })) streamed += part;
    expect(streamed).toBe(expected);
    expect(await csvExport([row], { escapeFormulas: false })).toBe(`${header}\n"=HYPERLINK(""https://evil.example"",""x"")","+1+cmd|/c calc","-2+3",` +
      '"@SUM(A1)","\t=1","\r=1",-5,"-5","+1.5e3","a=b","x\n=1","[""=1""]"');
  });

  it('a gateway with the default configuration neutralises v1 names and stored render data, paged and streamed', async () => {
    const g = await startGateway({}, { scale: 'tiny' });
    try {
      await g.addUser(0, 'eve@example.com');
      const t = await g.login('eve@example.com');
      const teams = g.s.keys[0]!.teams.map((x) => x.id);
      const project = [...g.s.sim.world.projects.values()].find((p) => teams.includes(p.teamId))!;
      const person = g.s.sim.world.authenticate(`Bearer ${g.s.keys[0]!.api_key}`);
      g.s.sim.world.createRender(person, { project_id: project.id, name: '=1+1 probe' });
      await g.get('/projects?limit=-1&fields=id,account', t); // the project's id known to the gateway before a write names it
      const created = await g.app.inject({
        method: 'POST', url: '/renders', headers: { authorization: `Bearer ${t}` },
        payload: { project: derivedUuid('project', project.id), account: derivedUuid('account', project.teamId), title: '@probe', data: { cmd: '-1+cmd', n: -5 } },
      });
      expect(created.statusCode).toBe(200);
      await g.deps.replica!.syncNow(teams);
      const query = 'fields=title,data&filter[title][_contains]=probe&sort=title&export=csv';
      // (a render without stored data has `data: {}`: its own column, as Directus flattens an empty object)
      const expected = '"title","data.cmd","data.n","data"\n"\'@probe","\'-1+cmd",-5,\n"\'=1+1 probe",,,"{}"';
      for (const limit of ['10', '-1']) {
        const res = await g.app.inject({ method: 'GET', url: `/renders?limit=${limit}&${query}`, headers: { authorization: `Bearer ${t}` } });
        expect(res.statusCode, limit).toBe(200);
        expect(res.headers['x-gateway-source'], limit).toBe('index');
        expect(res.body, limit).toBe(expected);
      }
    } finally {
      await g.close();
    }
  });
});

describe('xml files where Directus would fail', () => {
  it('a character XML does not allow is written U+FFFD, a key that is no XML name gets _ — a file that parses, never a 500', async () => {
    const { xmlExport } = await import('../../src/shape/export-xml.js');
    let file = '';
    for await (const part of xmlExport([{ title: 'a\u0001b\uD800c <&> ]]> ok', '1st key': 'x', nested: { ok: [1, null, ''] } }])) file += part;
    expect(file).toBe("<?xml version='1.0'?>\n<data>\n    <data>\n        <title>a\uFFFDb\uFFFDc &lt;&amp;> ]]&gt; ok</title>\n" +
      '        <_1st_key>x</_1st_key>\n        <nested>\n            <ok>1</ok>\n            <ok>null</ok>\n            <ok/>\n        </nested>\n    </data>\n</data>');
    expect(parseXmlItems(file)).toEqual([{ title: 'a\uFFFDb\uFFFDc <&> ]]> ok', _1st_key: 'x', nested: { ok: ['1', 'null', ''] } }]);
  });
});
