import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ShapeReport } from '../../src/migrate/report.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { proofClient, provenEqual as provenOf } from '../helpers/proofs.js';
import { call } from '../helpers/sim.js';
import { SNIPPET_LANGUAGES, snippetRunner } from '../../src/migrate/snippet-run.js';
import { renderSnippets } from '../../src/migrate/snippets.js';

/**
 * Issue 39, the ninth held-out check: dashboard pages whose one-to-many lists are read through — a project's renders with
 * their `download_ready` (derived), an account's projects with their `account` (a relation's id) — and projects sorted by
 * their number of renders (`-count(renders)`). They were left to the client ("not run": the list printed without its
 * children, the sort by v1 order). Each is written out in node, python and curl and proven equal; the nested lists are
 * cut at a default limit of 3 (8 renders a project), so the cut and the order are exercised.
 */
let gw: TestGateway;
let token: string;
let shapes: Map<string, ShapeReport>;
let projectV1: string;
let byTitleOf: (i: number) => string;
const { answers, ask, proven } = proofClient(() => gw, () => token);

beforeAll(async () => {
  gw = await startGateway({ INDEX_ENABLED: 'false', QUERY_LIMIT_DEFAULT: '3' }, { scale: 'tiny' });
  await gw.addUser(0, 'lists@example.com', 'lists-password-123');
  token = await gw.login('lists@example.com', 'lists-password-123');
  // (renders created in two projects through v1: the projects' counts differ — 10, 9 and 8 — and "10" sorts before "9" as text)
  const key = gw.s.keys[0]!.api_key;
  for (const team of gw.s.sim.world.teams.values()) team.credits = Math.max(team.credits, 10);
  const byTitle = (await ask('/projects?fields=id,title&sort=title&limit=-1')).data as { id: string }[];
  const v1Of = async (uuid: string) => (await gw.deps.ids.toV1('project', uuid)) as string;
  for (const [uuid, n] of [[byTitle[0]!.id, 2], [byTitle[1]!.id, 1]] as const) {
    for (let i = 0; i < n; i++) expect((await call(gw.s.url, '/v1/renders', { method: 'POST', key, body: { name: `Extra ${i}`, project_id: await v1Of(uuid) } })).status).toBe(201);
  }
  // (two projects whose listed renders are ready and not ready, between them)
  const all = (await ask('/projects?fields=id,renders.download_ready&limit=-1')).data as { id: string; renders: { download_ready: boolean }[] }[];
  const ready = all.find((p) => p.renders.some((r) => r.download_ready));
  const not = all.find((p) => p !== ready && p.renders.some((r) => !r.download_ready));
  const two = [ready?.id, not?.id].join(',');
  // (a project whose listed renders are ready and not: outputs and nulls)
  const mixed = (all.find((p) => p.renders.some((r) => r.download_ready) && p.renders.some((r) => !r.download_ready)) ?? all[0]!).id;
  for (const u of [
    '/accounts?fields=id,name,projects.id,projects.title,projects.account&sort=name',
    `/projects?fields=id,title,account.name,renders.title,renders.download_ready&filter[id][_in]=${two}&sort=title`,
    '/projects?fields=id,title,renders.id,renders.process_id,renders.project&limit=-1',
    '/projects?fields=id,title,count(renders)&sort=-count(renders),title&limit=-1',
    // (a render's output in the list: its poster its project's thumbnail where it has no still — the twelfth check)
    `/projects/${mixed}?fields=id,count(renders),renders.title,renders.output`,
    // (an _or with an _and branch; an _or nested in an _or's branch)
    `/renders?fields=id,title,status&filter[_or][0][_and][0][status][_eq]=failed&filter[_or][0][_and][1][title][_contains]=1` +
      `&filter[_or][1][project][_eq]=${byTitle[2]!.id}&sort=title&limit=-1`,
    `/renders?fields=id,title,status&filter[_or][0][title][_icontains]=render 2&filter[_or][1][_or][0][status][_eq]=failed` +
      `&filter[_or][1][_or][1][project][_eq]=${byTitle[3]!.id}&sort=-title&limit=-1`,
    // (one project's renders: its snippets are also run below with the project given as null)
    `/renders?fields=id,title,project&filter[project][_eq]=${byTitle[4]!.id}&sort=id&limit=-1`,
    `/renders?fields=id,title&filter[project][_in]=${byTitle[4]!.id},${byTitle[5]!.id}&sort=title&limit=-1`,
  ]) await ask(u);
  // (a window on one date beside another condition: an _and inside the filter's _and — the twelfth held-out check)
  const dates = (await ask('/renders?fields=date_created&sort=date_created&limit=-1')).data.map((r: { date_created: string }) => r.date_created);
  const window = { date_created: { _gt: dates[Math.floor(dates.length * 0.2)], _lte: dates[Math.floor(dates.length * 0.7)] }, project: { _nin: [byTitle[0]!.id] } };
  await ask(`/renders?fields=id,title,project&filter=${encodeURIComponent(JSON.stringify(window))}&sort=date_created,id&limit=-1`);
  projectV1 = await v1Of(byTitle[4]!.id);
  byTitleOf = (i) => byTitle[i]!.id;
  shapes = await proven();
}, 600_000);
afterAll(async () => { await gw?.close(); });

const items = (start: string): any[] => [...answers].find(([u]) => u.startsWith(start))?.[1].data;

describe('one-to-many lists read through, and a sort by a count (the ninth held-out check)', () => {
  it('the inputs exercise each: lists cut at the default limit, download_ready both ways, counts that differ', () => {
    const projects = items('/projects?fields=id,title,account.name,renders.title');
    expect(projects).toHaveLength(2);
    const ready = projects.flatMap((p: any) => p.renders.map((r: any) => r.download_ready));
    expect(projects.every((p: any) => p.renders.length === 3)).toBe(true);
    expect(new Set(ready).size, JSON.stringify(ready)).toBe(2);
    const accounts = items('/accounts?fields=id,name,projects.id');
    expect(accounts.every((a: any) => a.projects.every((p: any) => p.account === a.id))).toBe(true);
    const counted = items('/projects?fields=id,title,count(renders)').map((p: any) => Number(p.renders_count));
    expect(new Set(counted).size).toBeGreaterThan(1);
    expect(counted).toEqual([...counted].sort((a, b) => b - a));
  });

  it("an account's projects with their account, a project's renders with download_ready, process_id and project: equal in every language", () => {
    for (const key of ['GET /accounts fields=id,name,projects.account,projects.id,projects.title sort=name',
      'GET /projects fields=account.name,id,renders.download_ready,renders.title,title filter=id _in ? sort=title',
      'GET /projects fields=id,renders.id,renders.process_id,renders.project,title paging=all',
      'GET /projects/:id fields=count(renders),id,renders.output,renders.title']) provenOf(shapes, key);
    // (outputs of complete renders among them, and none of the others: the derivation is exercised both ways)
    const outputs = (answers.get([...answers.keys()].find((u) => u.includes('renders.output'))!).data.renders as { output: unknown }[]).map((r) => r.output);
    expect(outputs.some((o) => o !== null)).toBe(true);
    expect(outputs.some((o) => o === null)).toBe(true);
  });

  it('an _or whose branch is an _and, and an _or nested in a branch: equal in every language', () => {
    const renders = items('/renders?fields=id,title,status&filter[_or][0][_and]');
    // (each branch keeps some render the other does not: a failed one with a 1 in its title, and one of the project)
    expect(renders.some((r: any) => r.status === 'failed' && r.title.includes('1'))).toBe(true);
    expect(renders.some((r: any) => r.status !== 'failed')).toBe(true);
    const nested = items('/renders?fields=id,title,status&filter[_or][0][title]');
    expect(nested.some((r: any) => r.status === 'failed' && !r.title.toLowerCase().includes('render 2'))).toBe(true);
    expect(nested.some((r: any) => r.status !== 'failed' && r.title.toLowerCase().includes('render 2'))).toBe(true);
    for (const key of ['GET /renders fields=id,status,title filter=or(and(status _eq ?,title _contains ?),project _eq ?) sort=title paging=all',
      'GET /renders fields=id,status,title filter=or(or(project _eq ?,status _eq ?),title _icontains ?) sort=-title paging=all']) provenOf(shapes, key);
  });

  it("one project's renders asked with the project null (`project _eq null`): every snippet answers nothing, as the gateway does", async () => {
    // (the tenth held-out check: the snippets asked v1 for the renders of project null — 422 — and failed)
    expect((await ask(`/renders?fields=id&filter=${encodeURIComponent('{"project":{"_eq":null}}')}&limit=-1`)).data).toEqual([]);
    const key = 'GET /renders fields=id,project,title filter=project _eq ? sort=id paging=all';
    const report = provenOf(shapes, key) && shapes.get(key)!;
    expect(report.equivalent.params.map((x) => x.name)).toContain('project_id');
    const snippets = renderSnippets(report.equivalent, 'renders');
    const runner = snippetRunner(gw.s.url);
    for (const lang of SNIPPET_LANGUAGES) {
      const none = await runner.run(lang, snippets, 'renders', gw.s.keys[0]!.api_key, { project_id: null });
      expect(none, lang).toEqual({ ok: true, output: [] });
      // (and given the project, its renders: the run reads what it is asked)
      const some = await runner.run(lang, snippets, 'renders', gw.s.keys[0]!.api_key, { project_id: projectV1 });
      expect(some.ok && Array.isArray(some.output) && some.output.length, lang).toBeGreaterThan(0);
    }
  });

  it('renders of projects named with a null among them (`project _in [x, null]`): the null names nothing, in every language', async () => {
    const filter = encodeURIComponent(JSON.stringify({ project: { _in: [byTitleOf(4), null] } }));
    const want = (await ask(`/renders?fields=id&filter=${filter}&limit=-1`)).data.length;
    expect(want).toBeGreaterThan(0);
    const report = shapes.get('GET /renders fields=id,title filter=project _in ? sort=title paging=all')!;
    expect(report.proof?.result).toBe('equal');
    const snippets = renderSnippets(report.equivalent, 'renders');
    for (const lang of SNIPPET_LANGUAGES) {
      const got = await snippetRunner(gw.s.url).run(lang, snippets, 'renders', gw.s.keys[0]!.api_key, { project_ids: [projectV1, null] });
      expect(got.ok && Array.isArray(got.output) ? got.output.length : got, lang).toBe(want);
    }
  });

  it('a date window beside another condition (an _and in the _and): written out, equal in every language', () => {
    const got = items('/renders?fields=id,title,project&filter=');
    expect(got.length).toBeGreaterThan(0);
    provenOf(shapes, 'GET /renders fields=id,project,title filter=and(and(date_created _gt ?,date_created _lte ?),project _nin ?) sort=date_created,id paging=all');
  });

  it('projects sorted by their number of renders, then title: equal in every language', () => {
    provenOf(shapes, 'GET /projects fields=count(renders),id,title sort=-count(renders),title paging=all');
  });
});
