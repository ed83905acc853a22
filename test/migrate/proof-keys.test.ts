import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ShapeReport } from '../../src/migrate/report.js';
import { derivedUuid } from '../../src/translate/ids.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { proofClient, provenEqual as provenOf } from '../helpers/proofs.js';

/**
 * Issue 39, the fifth held-out check's findings: a date `_in`/`_nin` (compared as text with v1's numbers: no item), a
 * date outside a window (`_nbetween`, a TODO), a sort by a relation (by v1's id, not the legacy uuid), a sort by a
 * template's slug and a filter on a render's download_ready (derived values no filter or sort could read: TODOs), a
 * filter through a relation (`project.title _starts_with`, a TODO) and a render's `project.account` (never formed). Each
 * is now written out in node, python and curl and proven equal against the gateway's answer, on values the proof draws
 * from the data (both sides non-empty: the answers below are checked to be neither empty nor everything).
 */
let gw: TestGateway;
let token: string;
let shapes: Map<string, ShapeReport>;
const { answers, ask, proven } = proofClient(() => gw, () => token);

const all = new Map<string, any[]>();
let imported = 0;

beforeAll(async () => {
  gw = await startGateway({ INDEX_ENABLED: 'false' }, { scale: 'tiny' });
  await gw.addUser(0, 'keys@example.com', 'keys-password-123');
  token = await gw.login('keys@example.com', 'keys-password-123');
  // every other creator's legacy uuid imported, in the reverse of their derived order (a gateway user's uuid is its own:
  // the sixth held-out check's sort by user_created derived every one, and the proof said "equal")
  const own = gw.s.keys[0]!.user_id;
  const creators = [...new Set([...gw.s.sim.world.renders.values()].map((r) => r.createdBy))]
    .filter((c): c is string => !!c && c !== own).sort((a, b) => (derivedUuid('user', a) < derivedUuid('user', b) ? -1 : 1));
  expect(creators.length).toBeGreaterThan(1);
  await gw.deps.idMap.importPairs(creators.map((v1Id, i) => ({ type: 'user' as const, uuid: `${(0xf0000000 - i * 0x1000000).toString(16)}-0000-4000-8000-000000000000`, v1Id })));
  await gw.deps.ids.load();
  imported = creators.length;
  const renders = (await ask('/renders?fields=id,date_created,date_updated,download_ready,project.title&sort=date_created&limit=-1')).data;
  all.set('renders', renders);
  const at = (i: number) => renders[Math.floor(i * (renders.length - 1))];
  const two = `${at(0.2).date_created},${at(0.7).date_created}`;
  const window = `${at(0.3).date_updated},${at(0.6).date_updated}`;
  const prefix = String(renders[0].project.title).slice(0, 4);
  const urls = [
    `/renders?fields=id,date_created&filter[date_created][_in]=${two}&limit=-1`,
    `/renders?fields=id,title&filter[date_created][_nin]=${two}&sort=title&limit=-1`,
    `/renders?fields=id,date_updated&filter[date_updated][_nbetween]=${window}&sort=date_updated&limit=-1`,
    '/projects?fields=id,title,account&sort=account,title&limit=-1',
    '/renders?fields=id,title&sort=project,-date_created,id&limit=-1',
    '/renders?fields=id,title,user_created&sort=-user_created,id&limit=12',
    '/renders?fields=id,title,user_created&sort=user_created,-date_created&limit=-1',
    '/templates?fields=id,title,slug&sort=slug&limit=-1',
    '/templates?fields=id,title&sort=-slug&limit=-1',
    '/templates?fields=id,date_created&limit=-1',
    '/users/me?fields=id,first_name,last_name,accounts_owned',
    '/renders?meta=total_count,filter_count&fields=id,title&filter[status][_eq]=complete&sort=-date_created&limit=5&page=2',
    '/renders?fields=id,title,status&filter[download_ready][_eq]=true&sort=title&limit=-1',
    `/renders?fields=id,title&filter[project][title][_starts_with]=${encodeURIComponent(prefix)}&sort=title&limit=-1`,
    `/renders/${renders[0].id}?fields=id,title,project.account,account`,
    '/renders?fields=id,project.account&sort=title&limit=-1',
    '/renders?aggregate[count]=*&groupBy=project,status',
    '/renders?aggregate[count]=*&groupBy=status,month(date_updated)',
    '/renders?aggregate[count]=*&aggregate[countDistinct]=user_created&groupBy=status',
    '/renders?aggregate[countDistinct]=user_created&aggregate[max]=date_updated&groupBy[]=project&groupBy[]=year(date_created)',
    '/renders?aggregate[count]=*&groupBy[]=year(date_created)&groupBy[]=month(date_created)&groupBy[]=project',
    '/renders?aggregate[count]=*&groupBy[]=status&groupBy[]=user_created&filter[status][_neq]=queued',
  ];
  // (an _or of different fields: a project or a status; a title or a date window, under a status condition)
  const project = (await ask('/projects?fields=id&limit=1')).data[0].id;
  urls.push(`/renders?fields=id,title,status&filter[_or][0][project][_eq]=${project}&filter[_or][1][status][_eq]=failed&sort=title&limit=-1`,
    `/renders?fields=id,title&filter[_or][0][title][_icontains]=render 1&filter[_or][1][date_created][_gte]=${at(0.8).date_created}` +
    '&filter[status][_neq]=draft&sort=-date_created&limit=-1');
  const account = (await ask('/accounts?fields=id&limit=1')).data[0].id;
  // (a review: an _or of one date's _eq values — its branches' parameters were read as nothing; a date _neq null)
  urls.push(`/renders?fields=id,date_created&filter[_or][0][date_created][_eq]=${at(0.2).date_created}` +
    `&filter[_or][1][date_created][_eq]=${at(0.7).date_created}&limit=-1`,
  `/renders?fields=id&filter=${encodeURIComponent(JSON.stringify({ date_updated: { _neq: null } }))}&limit=-1`);
  // (the eighth held-out check: two _or in one _and, a _neq over creators some renders lack, a read by id's _or)
  const someone = (await ask('/renders?fields=user_created&filter[user_created][_nnull]=true&limit=1')).data[0].user_created;
  urls.push(`/renders?fields=id,title&filter[_and][0][_or][0][status][_eq]=failed&filter[_and][0][_or][1][status][_eq]=complete` +
    `&filter[_and][1][_or][0][project][_eq]=${project}&filter[_and][1][_or][1][title][_contains]=1&sort=title&limit=-1`,
    `/renders?fields=id,user_created&filter[user_created][_neq]=${someone}&sort=title&limit=-1`,
    `/renders/${renders[0].id}?fields=id,title,status&filter[_or][0][status][_eq]=failed&filter[_or][1][title][_contains]=zzz`,
    // (the ninth: a project by id whose filter it fails — the gateway answers it; ids with a status)
    `/projects/${project}?fields=id,title&filter[_or][0][title][_icontains]=zzz&filter[_or][1][date_updated][_null]=true`,
    `/renders?fields=id,title,status&filter[id][_in]=${renders.slice(0, 6).map((r: any) => r.id).join(',')}&filter[status][_eq]=complete`);
  urls.push(`/projects?meta=total_count&filter[account][_eq]=${account}&fields=id,title`);
  for (const u of urls) await ask(u);
  const dates = answers.get('/templates?fields=id,date_created&limit=-1').data.map((t: any) => t.date_created).sort();
  await ask(`/templates?fields=id,title,date_created&filter[date_created][_gte]=${dates[Math.floor(dates.length / 2)]}&sort=title&limit=-1`);
  shapes = await proven();
}, 600_000);
afterAll(async () => { await gw?.close(); });

const provenEqual = (key: string): void => { provenOf(shapes, key); };
/** The answer to the url starting with `start`: its items. */
const items = (start: string): any[] => [...answers].find(([u]) => u.startsWith(start))?.[1].data;

describe('the fifth held-out check: filters and sorts the snippets now write out', () => {
  it('the inputs exercise each test: no answer empty, none everything', () => {
    const n = all.get('renders')!.length;
    for (const start of ['/renders?fields=id,date_created&filter', '/renders?fields=id,title&filter[date_created]', '/renders?fields=id,date_updated&filter',
      '/renders?fields=id,title,status&filter', '/renders?fields=id,title&filter[project]']) {
      expect(items(start).length, start).toBeGreaterThan(0);
      expect(items(start).length, start).toBeLessThan(n);
    }
  });

  it('a date one of several instants, none of them, or outside a window: compared as instants, equal in node, python and curl', () => {
    for (const key of ['GET /renders fields=date_created,id filter=date_created _in ? paging=all',
      'GET /renders fields=id,title filter=date_created _nin ? sort=title paging=all',
      'GET /renders fields=date_updated,id filter=date_updated _nbetween ? sort=date_updated paging=all']) provenEqual(key);
  });

  it('a sort by a relation is by its legacy uuid (the order differs from v1 ids): equal in every language', () => {
    for (const key of ['GET /projects fields=account,id,title sort=account,title paging=all', 'GET /renders fields=id,title sort=project,-date_created,id paging=all',
      'GET /renders fields=id,title,user_created sort=-user_created,id paging=limit']) provenEqual(key);
  });

  it("a sort by user_created where the creators' legacy uuids were imported (not derived): the snippets read the imported pairs, equal in every language", () => {
    // (the imported uuids are in the gateway's answer, and in an order their derived ones are not)
    const answer = items('/renders?fields=id,title,user_created&sort=user_created,');
    const seen = [...new Set(answer.map((r: any) => r.user_created).filter((u: string | null) => u?.endsWith('-0000-4000-8000-000000000000')))];
    expect(seen.length).toBe(imported);
    expect(seen).toEqual([...seen].sort());
    const p = provenOf(shapes, 'GET /renders fields=id,title,user_created sort=user_created,-date_created paging=all');
    expect(p.result).toBe('equal');
    expect(shapes.get('GET /renders fields=id,title,user_created sort=user_created,-date_created paging=all')!.equivalent.params.map((x) => x.name)).toContain('user_uuids');
  });

  it("a template's slug as a sort key, read or not, and a render's download_ready as a filter: equal in every language", () => {
    for (const key of ['GET /templates fields=id,slug,title sort=slug paging=all', 'GET /templates fields=id,title sort=-slug paging=all',
      'GET /renders fields=id,status,title filter=download_ready _eq ? sort=title paging=all']) provenEqual(key);
  });

  it("a filter through a relation, and a render's project.account (one render, and a list): equal in every language", () => {
    for (const key of ['GET /renders fields=id,title filter=project.title _starts_with ? sort=title paging=all',
      'GET /renders/:id fields=account,id,project.account,title', 'GET /renders fields=id,project.account sort=title paging=all']) provenEqual(key);
  });

  it('counts grouped by a field and a part of a date, or two parts and a relation: equal in every language (the sixth held-out check)', () => {
    const groups = items('/renders?aggregate[count]=*&groupBy=status,month(date_updated)');
    expect(groups.length).toBeGreaterThan(new Set(groups.map((g: any) => g.status)).size);
    for (const key of ['GET /renders aggregate=count(*) groupBy=status,month(date_updated)',
      'GET /renders aggregate=count(*) groupBy=year(date_created),month(date_created),project']) provenEqual(key);
  });

  it('several aggregates grouped (count and countDistinct by status; countDistinct and max by project and year): equal in every language', () => {
    const groups = items('/renders?aggregate[count]=*&aggregate[countDistinct]=user_created&groupBy=status');
    expect(groups.length).toBeGreaterThan(1);
    expect(new Set(groups.map((g: any) => String(g.countDistinct.user_created))).size).toBeGreaterThan(1);
    for (const key of ['GET /renders aggregate=count(*),countDistinct(user_created) groupBy=status',
      'GET /renders aggregate=countDistinct(user_created),max(date_updated) groupBy=project,year(date_created)']) provenEqual(key);
  });

  it("templates filtered by their date_created (their project's creation): equal in every language (the sixth held-out check)", () => {
    const dates = items('/templates?fields=id,date_created&limit=-1').map((t: any) => t.date_created).sort();
    const middle = dates[Math.floor(dates.length / 2)];
    expect(dates[0]).not.toBe(dates.at(-1));
    expect(middle).toBeDefined();
    provenEqual('GET /templates fields=date_created,id,title filter=date_created _gte ? sort=title paging=all');
  });

  it('an _or of different fields (a project or a status; a title or a date, beside a status): equal in every language (the sixth held-out check)', () => {
    // (more than either branch alone, fewer than every render: both branches and the and-ed condition are exercised)
    const n = all.get('renders')!.length;
    const either = items('/renders?fields=id,title,status&filter[_or]');
    expect(either.length).toBeLessThan(n);
    expect(either.some((r: any) => r.status === 'failed')).toBe(true);
    expect(either.some((r: any) => r.status !== 'failed')).toBe(true);
    expect(items('/renders?fields=id,title&filter[_or]').length).toBeGreaterThan(0);
    for (const key of ['GET /renders fields=id,status,title filter=or(project _eq ?,status _eq ?) sort=title paging=all',
      'GET /renders fields=id,title filter=and(or(date_created _gte ?,title _icontains ?),status _neq ?) sort=-date_created paging=all']) provenEqual(key);
  });

  it('meta=total_count where the calls read part of the collection (one status, one account): a walk of its own, equal in every language', () => {
    const one = items('/renders?meta=total_count');
    expect(one).toHaveLength(5);
    const meta = answers.get('/renders?meta=total_count,filter_count&fields=id,title&filter[status][_eq]=complete&sort=-date_created&limit=5&page=2').meta;
    expect(meta.total_count).toBeGreaterThan(meta.filter_count);
    for (const key of ['GET /renders fields=id,title filter=status _eq ? sort=-date_created paging=page meta=filter_count,total_count',
      'GET /projects fields=id,title filter=account _eq ? meta=total_count']) provenEqual(key);
  });

  it('two _or in one _and, a _neq over renders without a creator, a read by id whatever its filter, ids with a status: equal in every language', () => {
    // (some renders have no creator: _neq leaves them out, as SQL's NOT (field = value) does)
    expect(all.get('renders')!.length).toBeGreaterThan(items('/renders?fields=id,user_created&filter').length);
    expect(items('/renders?fields=id,user_created&filter').every((r: any) => r.user_created !== null)).toBe(true);
    expect(items('/renders?fields=id,title&filter[_and]').length).toBeGreaterThan(0);
    for (const key of ['GET /renders fields=id,title filter=and(or(project _eq ?,title _contains ?),or(status _eq ?,status _eq ?)) sort=title paging=all',
      'GET /renders fields=id,user_created filter=user_created _neq ? sort=title paging=all']) provenEqual(key);
    // (a read by id answers the item whatever its filter — the gateway does not apply it: nor do the snippets, and the
    // report says so — the ninth held-out check: the snippets printed nothing where the gateway gave the item)
    const project = items('/projects/') as unknown as { title: string };
    expect(project).toMatchObject({ title: expect.any(String) });
    expect(String(project.title).toLowerCase()).not.toContain('zzz');
    for (const key of ['GET /renders/:id fields=id,status,title filter=or(status _eq ?,title _contains ?)',
      'GET /projects/:id fields=id,title filter=or(date_updated _null ?,title _icontains ?)']) {
      provenEqual(key);
      expect(shapes.get(key)!.equivalent.notes.join(' ')).toMatch(/whatever its filter/);
    }
    // (ids and a status: the status tested by the snippets — the lists of a status are not asked for ids)
    const both = items('/renders?fields=id,title,status&filter[id][_in]');
    expect(both.length).toBeGreaterThan(0);
    expect(both.length).toBeLessThan(6);
    const key = 'GET /renders fields=id,status,title filter=and(id _in ?,status _eq ?)';
    provenEqual(key);
    const conds = shapes.get(key)!.equivalent.clientSteps.flatMap((s) => (s.args?.op === 'filter' ? s.args.conds : []));
    expect(conds.map((c) => c.field)).toContain('status');
  });

  it("an _or of one date's values, a date _neq: equal in every language (a null date given: test/migrate/snippet-filter.test.ts)", () => {
    expect(items('/renders?fields=id,date_created&filter[_or]').length).toBeGreaterThan(1);
    provenEqual('GET /renders fields=date_created,id filter=or(date_created _eq ?,date_created _eq ?) paging=all');
    provenEqual('GET /renders fields=id filter=date_updated _neq ? paging=all');
  });

  it("the user's names (only the gateway keeps them) are a TODO of the snippets: never \"equal\" (the seventh held-out check)", () => {
    const s = shapes.get('GET /users/me fields=accounts_owned,first_name,id,last_name');
    expect(s, [...shapes.keys()].join(' | ')).toBeDefined();
    expect(s!.snippets.partial.map((x) => x.split(':')[0]).sort()).toEqual(['first_name', 'last_name']);
    expect(s!.proof?.result).not.toBe('equal');
  });

  it('counts grouped by two fields (their ids translated, their statuses named): equal in every language', () => {
    // (more groups than either key alone has values: both keys are exercised)
    const groups = items('/renders?aggregate[count]=*&groupBy=project,status');
    expect(groups.length).toBeGreaterThan(new Set(groups.map((g: any) => g.project)).size);
    expect(groups.length).toBeGreaterThan(new Set(groups.map((g: any) => g.status)).size);
    for (const key of ['GET /renders aggregate=count(*) groupBy=project,status',
      'GET /renders filter=status _neq ? aggregate=count(*) groupBy=status,user_created']) provenEqual(key);
  });
});
