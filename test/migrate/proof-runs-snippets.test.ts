import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { equivalentOfShape } from '../../src/migrate/instantiate.js';
import { prove, type Samples } from '../../src/migrate/prove.js';
import type { ShapeReport } from '../../src/migrate/report.js';
import { buildMigrationReport, proofDeps } from '../../src/admin/migration-report.js';
import type { SnippetLanguage } from '../../src/migrate/snippet-run.js';
import { renderSnippets, type Snippets } from '../../src/migrate/snippets.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { provenEqual } from '../helpers/proofs.js';

/**
 * Issue 39, point 1: the proof runs the snippets the report hands out — node, python and curl, each in a sandbox with the
 * client's key — and reads their answers back against the gateway's. A generated set of read shapes is recorded from a
 * client's traffic and proven; then each shape the report calls "equal" is proven again with one of its snippets
 * broken (its answer missing its first item, in one language at a time): the proof must say "differs" and name that
 * language. Before the proof ran the snippets, it said "equal" of every broken one.
 */
let gw: TestGateway;
let userId: string;
let token: string;
let shapes: ShapeReport[];

const inject = (o: { method: string; url: string; headers: Record<string, string> }) => gw.app.inject(o as never);

async function ask(url: string, method = 'GET'): Promise<any> {
  const res = await gw.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${token}`, 'user-agent': 'python-urllib/3.12' } });
  expect(res.statusCode, url).toBe(200);
  return res.json();
}

/** One language's snippet broken: its answer loses its first item (the rest handed out as they are). */
function broken(s: Snippets, lang: SnippetLanguage): Snippets {
  if (lang === 'node') {
    expect(s.node).toMatch(/\n {2}return out;\n\}$/);
    return { ...s, node: s.node.replace(/\n {2}return out;\n\}$/, '\n  return out.slice(1);\n}') };
  }
  if (lang === 'python') {
    expect(s.python).toMatch(/\n {4}return out\s*$/);
    return { ...s, python: s.python.replace(/\n {4}return out\s*$/, '\n    return out[1:]\n') };
  }
  return { ...s, curl: `${s.curl} | jq -c '.[1:]'` };
}

/** Shapes the survey of issue 39 found not exact, each now proven equal in every language ({…}: an id of the client's data). */
const SURVEYED = [
  '/projects?fields=*&limit=-1',
  '/projects/{project}?fields=*',
  '/accounts?fields=*',
  '/accounts/{account}?fields=*',
  '/projects?fields=id,title,count(renders)',
  '/renders?aggregate[count]=id&groupBy[]=project',
  '/renders?filter[id][_in]={renders}&fields=id,title',
  '/items/templates?limit=5',
  '/renders?filter[title][_null]=true&fields=id&limit=-1',
  '/renders?meta=total_count&limit=5&fields=id,title',
  '/users/me?fields=id,email',
  '/users/me?fields=id,accounts,accounts_owned',
  '/renders?filter[_or][0][status][_eq]=complete&filter[_or][1][status][_eq]=failed&fields=id&limit=-1',
  '/renders?aggregate[count]=*&groupBy[]=user_created',
  '/renders?aggregate[min]=date_created&aggregate[max]=date_created&aggregate[countDistinct]=project',
];

/** Filters on a part of a date (issue 39's survey: "no equivalent"), each proven equal in every language. */
const DATE_PARTS: readonly [string, string][] = [
  ['/renders?filter[year(date_created)][_eq]=2026&fields=id&limit=-1', 'GET /renders fields=id filter=year(date_created) _eq ? paging=all'],
  ['/renders?filter[month(date_created)][_in]=1,2&fields=id,title&limit=-1', 'GET /renders fields=id,title filter=month(date_created) _in ? paging=all'],
  ['/renders?filter[day(date_created)][_gte]=10&fields=id&limit=-1', 'GET /renders fields=id filter=day(date_created) _gte ? paging=all'],
  ['/renders?filter[hour(date_updated)][_lt]=12&fields=id&limit=-1', 'GET /renders fields=id filter=hour(date_updated) _lt ? paging=all'],
  ['/renders?filter[weekday(date_created)][_neq]=0&fields=id&limit=-1', 'GET /renders fields=id filter=weekday(date_created) _neq ? paging=all'],
  ['/renders?filter[week(date_created)][_nin]=1,2&fields=id&limit=-1', 'GET /renders fields=id filter=week(date_created) _nin ? paging=all'],
];
/** Counts grouped by a part of a date (the survey: "not run", groups keyed by v1 values), each proven equal in every language. */
const DATE_GROUPS: readonly [string, string][] = [
  ['/renders?aggregate[count]=*&groupBy=year(date_created)', 'GET /renders aggregate=count(*) groupBy=year(date_created)'],
  ['/renders?aggregate[count]=*&groupBy=hour(date_created)', 'GET /renders aggregate=count(*) groupBy=hour(date_created)'],
  ['/renders?aggregate[count]=id&groupBy=month(date_updated)', 'GET /renders aggregate=count(id) groupBy=month(date_updated)'],
  // a page of groups: in the legacy order (the snippets' were unordered and never cut: "differs", extra groups)
  ['/renders?aggregate[count]=*&groupBy=hour(date_created)&limit=3', 'GET /renders paging=limit aggregate=count(*) groupBy=hour(date_created)'],
  ['/renders?aggregate[count]=*&groupBy=status&limit=2&offset=1', 'GET /renders paging=offset aggregate=count(*) groupBy=status'],
];

beforeAll(async () => {
  gw = await startGateway({ INDEX_ENABLED: 'false' }, { scale: 'tiny' });
  userId = await gw.addUser(0, 'proofs@example.com', 'proofs-password-123');
  token = await gw.login('proofs@example.com', 'proofs-password-123');
  const projects = (await ask('/projects?limit=2&fields=id')).data.map((p: { id: string }) => p.id);
  const account = (await ask('/accounts?limit=1&fields=id')).data[0].id;
  const render = (await ask('/renders?limit=1&fields=id,title,date_created')).data[0];
  const renders = (await ask('/renders?limit=2&sort=title&fields=id')).data.map((r: { id: string }) => r.id);
  // a client's traffic: the shapes the report proves (its own values are not the proof's: it draws its own)
  const urls = [
    '/renders?filter[status][_eq]=complete&limit=5&fields=id,title,status',
    '/renders?filter[status][_in]=complete,failed&fields=id,status&limit=10',
    '/renders?sort=title&limit=3&page=2&fields=id,title',
    '/renders?fields=id,title,status&limit=6&offset=2',
    `/renders?filter[project][_eq]=${projects[0]}&fields=id,title,date_created&sort=-date_created&limit=4`,
    `/renders?filter[project][_in]=${projects.join(',')}&limit=10&fields=id`,
    `/renders?filter[date_created][_gte]=${render.date_created}&fields=id,title&limit=-1`,
    `/renders?filter[date_created][_between]=2020-01-01,${render.date_created}&fields=id&limit=-1`,
    '/renders?filter[date_updated][_lte]=$NOW&fields=id&limit=10',
    `/renders?filter[title][_eq]=${encodeURIComponent(render.title)}&fields=id,title`,
    '/renders?search=render&fields=id,title&limit=10',
    `/renders/${render.id}?fields=id,title,status`,
    '/renders?aggregate[count]=*&groupBy=status',
    '/renders?aggregate[count]=*',
    '/projects?fields=id,title&limit=-1',
    `/projects?filter[account][_eq]=${account}&fields=id,title`,
    `/projects/${projects[0]}?fields=id,title`,
    '/accounts?fields=id,name',
    '/templates?fields=id,title&limit=-1',
    // the survey of issue 39 (2026-11-29): each of these was "differs", "partial" or "unproven" before
    ...SURVEYED.map((u) => u.replace('{project}', projects[0]).replace('{account}', account).replace('{renders}', renders.join(','))),
    `/templates/${(await ask('/templates?limit=1&fields=id')).data[0].id}?fields=*`,
    // a render's every field: process_id, output (the poster a still, else the project's thumbnail) and download_ready derived
    // in every language (the held-out check of issue 39: left to the client, "equal" before the proof ran the snippets)
    '/renders?fields=*&limit=-1',
    `/renders/${render.id}?fields=*`,
    '/renders?fields=id,output,process_id,download_ready&sort=-date_created&limit=7',
    '/templates?fields=id,slug,description,date_created,poster&limit=-1',
    '/accounts?fields=id,name,owner',
    // a sort by id: by the legacy uuid each snippet derives (it sorted by v1's id: differs)
    '/renders?sort=id&limit=5&fields=id,title',
    '/projects?sort=-id&fields=id,title&limit=-1',
    `/accounts/${account}?fields=id,owner`,
    ...DATE_PARTS.map(([u]) => u),
    ...DATE_GROUPS.map(([u]) => u),
  ];
  for (const u of urls) await ask(u);
  await gw.deps.shapes.flush();
  const report = await buildMigrationReport(gw.deps, inject, { prove: true });
  shapes = report.clients.flatMap((c) => c.shapes);
  expect(shapes.length).toBeGreaterThanOrEqual(urls.length);
}, 600_000);
afterAll(async () => { await gw?.close(); });


describe('the proof runs the snippets it hands out', () => {
  it('every language of every shape runs (no snippet failure); "equal" is said only when each one answered as the gateway', () => {
    const lines = shapes.map((s) => `${s.proof?.result} ${s.key} ${JSON.stringify(s.proof?.snippets)} ${s.proof?.reason ?? ''}`);
    for (const s of shapes) {
      const p = s.proof!;
      const line = `${s.key}: ${p.result} ${p.reason ?? ''} ${JSON.stringify(p.differences)}`;
      expect(p.snippets?.map((x) => x.lang), line).toEqual(['node', 'python', 'curl']);
      expect(p.snippets?.filter((x) => x.result === 'failed'), line).toEqual([]);
      if (p.result === 'equal') expect(p.snippets?.every((x) => x.result === 'equal'), line).toBe(true);
    }
    const equal = shapes.filter((s) => s.proof?.result === 'equal');
    // the generated set is mostly proven equal (what is not says why: printed when this fails)
    expect(equal.length, lines.join('\n')).toBeGreaterThanOrEqual(Math.ceil(shapes.length * 0.75));
  });

  it('the shapes the survey found not exact are proven equal in every language; a filtered one with two draws (survey of issue 39)', () => {
    const surveyed = [
      'GET /renders aggregate=count(id) groupBy=project', 'GET /renders fields=id,title filter=id _in ?',
      'GET /renders fields=id filter=title _null ? paging=all', 'GET /renders fields=id,title paging=limit meta=total_count',
      'GET /renders fields=id filter=or(status _eq ?,status _eq ?) paging=all', 'GET /renders aggregate=count(*) groupBy=user_created',
      'GET /renders aggregate=countDistinct(project),max(date_created),min(date_created)',
    ];
    const byKey = new Map(shapes.map((s) => [s.key, s]));
    // one-to-many lists (a project's renders, an account's projects and renders, the user's accounts) and their counts:
    // written out in every language, proven equal (they were TODOs, "not run": partial, steps left to the client)
    for (const key of ['GET /projects fields=* paging=all', 'GET /projects/:id fields=*', 'GET /accounts fields=*', 'GET /accounts/:id fields=*',
      'GET /projects fields=count(renders),id,title', 'GET /users/me fields=accounts,accounts_owned,id']) {
      provenEqual(byKey, key);
    }
    for (const key of surveyed) {
      const s = byKey.get(key);
      console.log('SURVEY', key, s?.proof?.result, s?.proof?.snippets?.map((x) => x.result).join(','), s?.snippets.partial.join(' | '), JSON.stringify(s?.proof?.differences));
      expect(s, `${key} among ${[...byKey.keys()].join(' | ')}`).toBeDefined();
      const p = s!.proof!;
      const line = `${key}: ${p.result} ${p.reason ?? ''} ${JSON.stringify(p.differences)} partial: ${s!.snippets.partial.join('; ')}`;
      expect(p.result, line).toBe('equal');
      expect(p.snippets?.map((x) => x.result), line).toEqual(['equal', 'equal', 'equal']);
      expect(s!.snippets.partial, line).toEqual([]);
    }
    // the user's email: v1's (GET /v1/me) is not the login email the gateway keeps for this user — said, in every language
    const me = byKey.get('GET /users/me fields=email,id')?.proof;
    expect(me?.result).toBe('differs');
    expect(me?.differences.map((x) => x.path).sort()).toEqual(['curl: data.email', 'data.email', 'node: data.email', 'python: data.email']);
    // a flag both ways: _null true (no title is null: nothing) and false (every render), each side asked
    expect(byKey.get('GET /renders fields=id filter=title _null ? paging=all')?.proof?.draws).toBe(2);
  });

  it('a render\'s and a template\'s every field, an account\'s owner, and their derived fields, proven equal in every language (held-out check of issue 39: left to the client)', () => {
    const byKey = new Map(shapes.map((s) => [s.key, s]));
    // (and a template's: its slug, HTML description, and its project's date_created and poster; an account's owner)
    // (a render's every field includes `data`, which only the gateway keeps: the client's, a TODO — the proof read the
    // gateway's own value and said "equal", the fourth held-out check)
    for (const key of ['GET /renders fields=* paging=all', 'GET /renders/:id fields=*']) {
      const s = byKey.get(key);
      expect(s?.snippets.partial.map((x) => x.split(':')[0]), key).toEqual(['data']);
      expect(s?.proof?.result, key).toBe('not run');
      expect(s?.proof?.snippets?.filter((x) => x.result === 'failed'), key).toEqual([]);
    }
    for (const key of ['GET /renders fields=download_ready,id,output,process_id sort=-date_created paging=limit',
      'GET /items/templates fields=* paging=limit', 'GET /templates/:id fields=*', 'GET /templates fields=date_created,description,id,poster,slug paging=all',
      'GET /accounts fields=id,name,owner', 'GET /accounts/:id fields=id,owner', 'GET /renders fields=id,title sort=id paging=limit',
      'GET /projects fields=id,title sort=-id paging=all']) {
      provenEqual(byKey, key);
    }
  });

  it('a filter on a part of a date (year, month, day, hour, weekday, ISO week), and a count grouped by one, is a client step in every language, proven equal', () => {
    const byKey = new Map(shapes.map((s) => [s.key, s]));
    // filters are asked with two draws; a count has nothing to draw
    for (const [key, draws] of [...DATE_PARTS.map(([, k]) => [k, 2] as const), ...DATE_GROUPS.map(([, k]) => [k, undefined] as const)]) {
      const p = provenEqual(byKey, key);
      if (draws) expect(p.draws, key).toBe(draws);
    }
  });

  it('a broken snippet in any language makes the proof "differs", naming the language (it said "equal" before)', async () => {
    const deps = proofDeps(gw.deps, inject);
    const samples = new Map<string, Promise<Samples>>();
    const equal = shapes.filter((s) => s.proof?.result === 'equal');
    expect(equal.length).toBeGreaterThan(6);
    const langs: SnippetLanguage[] = ['node', 'python', 'curl'];
    // twelve shapes, each language broken in four of them (every language's proof of a broken answer is met)
    for (const [i, s] of equal.slice(0, 12).entries()) {
      const lang = langs[i % 3] as SnippetLanguage;
      const e = equivalentOfShape(s.shape, gw.deps.mappings, gw.config.QUERY_LIMIT_DEFAULT);
      const snippets = broken(renderSnippets(e, 'brokenOne'), lang);
      const p = await prove(s.shape, e, userId, deps, samples, { snippets, fn: 'brokenOne' });
      const line = `${s.key} (${lang} broken): ${p.result} ${p.reason ?? ''}`;
      expect(p.result, line).toBe('differs');
      expect(p.snippets?.map((x) => `${x.lang} ${x.result}`), line).toEqual(langs.map((l) => `${l} ${l === lang ? 'differs' : 'equal'}`));
      expect(p.differences.some((d) => d.path.startsWith(`${lang}: `)), line).toBe(true);
      expect(p.reason, line).toContain(`the ${lang} snippet's answer differs`);
    }
  }, 600_000);

  it('a snippet that fails is a failure the proof names, and the key given to it is never in the report', async () => {
    const s = shapes.find((x) => x.proof?.result === 'equal' && x.shape.kind === 'list')!;
    const e = equivalentOfShape(s.shape, gw.deps.mappings, gw.config.QUERY_LIMIT_DEFAULT);
    const handed = renderSnippets(e, 'failing');
    // python fails after printing the key to its standard error
    const snippets = { ...handed, python: handed.python.replace(/\n {4}return out\s*$/, '\n    import sys\n    print(api_key, file=sys.stderr)\n    raise SystemExit(3)\n') };
    const p = await prove(s.shape, e, userId, proofDeps(gw.deps, inject), new Map(), { snippets, fn: 'failing' });
    expect(p.result).toBe('differs');
    expect(p.snippets?.find((x) => x.lang === 'python')).toMatchObject({ result: 'failed' });
    expect(p.reason).toMatch(/the python snippet failed: exit 3/);
    const key = gw.s.keys[0]!.api_key;
    expect(JSON.stringify(p)).not.toContain(key);
    expect(p.reason).toContain('***');
  }, 120_000);
});
