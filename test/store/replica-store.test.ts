import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';
import { ReplicaStore } from '../../src/store/replica-store.js';
import type { V1Project, V1Render, V1Team, V1TeamMember, V1TemplateSummary } from '../../src/v1/schemas.js';
import { databases } from '../helpers/databases.js';

/** The render index's store on SQLite: teams, projects, renders, leases and checkpoints, time moved by hand. */
const [{ url }] = (await databases()) as unknown as [{ url: string }];
let db: Db;
let now = 2_000_000_000_000;
const clock = () => now;
let ix: ReplicaStore;
beforeAll(async () => {
  db = await openDb(url);
  await migrate(db.kysely);
  ix = new ReplicaStore(db.kysely, clock);
});
afterAll(async () => db.close());

const team = (id: string, name = id) => ({ id, name }) as unknown as V1Team;
const member = (id: string) => ({ user_id: id, role: 'member' }) as unknown as V1TeamMember;
const project = (id: string, title = id) => ({ id, title }) as unknown as V1Project;
const render = (id: string, projectId: string, status: V1Render['status'], created_at: number, updated_at: number | null = null, name = id) =>
  ({ id, project: { id: projectId }, status, created_at, updated_at, name }) as unknown as V1Render;

describe('teams', () => {
  it('putTeam creates a backfilling row, then refreshes only the team and its members', async () => {
    expect(await ix.team('t1')).toBeUndefined();
    await ix.putTeam(team('t1', 'One'), [member('m1')]);
    expect(await ix.team('t1')).toEqual({ team: team('t1', 'One'), members: [member('m1')], state: 'backfilling', backfilledAt: null, syncedAt: null, webhookAt: null });
    await ix.markBackfilled('t1', 500);
    await ix.markWebhook('t1', 700);
    await ix.putTeam(team('t1', 'One renamed'), [member('m1'), member('m2')]);
    expect(await ix.team('t1')).toEqual({ team: team('t1', 'One renamed'), members: [member('m1'), member('m2')], state: 'ready', backfilledAt: 500, syncedAt: 500, webhookAt: 700 });
  });

  it('markSynced only moves forward', async () => {
    await ix.putTeam(team('t2'), []);
    await ix.markSynced('t2', 100);
    expect((await ix.team('t2'))!.syncedAt).toBe(100);
    await ix.markSynced('t2', 90);
    expect((await ix.team('t2'))!.syncedAt).toBe(100);
    await ix.markSynced('t2', 100);
    await ix.markSynced('t2', 101);
    expect((await ix.team('t2'))!.syncedAt).toBe(101);
    expect((await ix.team('t2'))!.state).toBe('backfilling');
    // other teams are untouched
    expect((await ix.team('t1'))!.syncedAt).toBe(500);
  });

  it('a lease is held by one holder until it lapses; its holder renews it; release frees it for its holder only', async () => {
    await ix.putTeam(team('t3'), []);
    await ix.putTeam(team('t3b'), []);
    expect(await ix.lease('t3', 'A', 1_000)).toBe(true);
    expect(await db.kysely.selectFrom('index_teams').select(['lease_holder', 'lease_until']).where('team_id', '=', 't3').executeTakeFirstOrThrow()).toEqual({ lease_holder: 'A', lease_until: now + 1_000 });
    expect(await ix.lease('t3b', 'B', 1_000)).toBe(true); // another team's lease is its own
    expect(await ix.lease('t3', 'B', 1_000)).toBe(false);
    expect(await ix.lease('t3b', 'A', 1_000)).toBe(false);
    now += 500;
    expect(await ix.lease('t3', 'A', 1_000)).toBe(true); // renewed: until now + 1 000
    now += 1_000;
    expect(await ix.lease('t3', 'B', 1_000)).toBe(false); // lapses only after that instant
    now += 1;
    expect(await ix.lease('t3', 'B', 1_000)).toBe(true);
    await ix.release('t3', 'A'); // not A's any more
    expect(await ix.lease('t3', 'A', 1_000)).toBe(false);
    await ix.release('t3', 'B');
    expect(await db.kysely.selectFrom('index_teams').select(['lease_holder', 'lease_until']).where('team_id', '=', 't3').executeTakeFirstOrThrow()).toEqual({ lease_holder: null, lease_until: null });
    expect(await ix.lease('t3', 'A', 1_000)).toBe(true);
    expect(await ix.lease('unknown-team', 'A', 1_000)).toBe(false);
  });

  it('teams() lists every team by id with its count of renders', async () => {
    await ix.putTeam(team('t4'), []);
    await ix.putRenders('t4', [render('r4a', 'p4', 'queued', 1), render('r4b', 'p4', 'complete', 2)]);
    const all = await ix.teams();
    expect(all.map((t) => t.team.id)).toEqual([...all.map((t) => t.team.id)].sort());
    expect(all.find((t) => t.team.id === 't4')).toMatchObject({ renders: 2, state: 'backfilling' });
    expect(all.find((t) => t.team.id === 't2')).toMatchObject({ renders: 0, syncedAt: 101 });
    // a team held in memory is not counted; the others are, across pages (SQLite reads them a page at a time)
    await ix.putRenders('t4', Array.from({ length: 5_500 }, (_, i) => render(`r4-${i}`, 'p4', i % 3 === 0 ? 'processing' : 'complete', 10 + i)));
    await ix.putProjects('t4', [project('p4')]);
    const counted = await ix.teams((id) => id === 't2');
    expect(counted.find((t) => t.team.id === 't4')).toMatchObject({ renders: 5_502, projects: 1, moving: 1 + Math.ceil(5_500 / 3) });
    expect(counted.find((t) => t.team.id === 't2')).toMatchObject({ renders: 0, projects: 0, moving: 0 });
  });
});

describe('projects', () => {
  it('putProjects adds projects and refreshes them keeping templates, checkpoint and head mark', async () => {
    await ix.putProjects('tp', [project('p1', 'First'), project('p2')]);
    expect(await ix.projects('tp')).toEqual([
      { project: project('p1', 'First'), templates: null, backfilled: false, headMark: null },
      { project: project('p2'), templates: null, backfilled: false, headMark: null },
    ]);
    const templates = [{ id: 'tpl1', name: 'T' }] as unknown as V1TemplateSummary[];
    await ix.putTemplates('p1', templates);
    await ix.markProjectBackfilled('p1');
    await ix.setHeadMark('p1', 50);
    await ix.putProjects('tp', [project('p1', 'First renamed')]);
    const rows = await ix.projects('tp');
    expect(rows.find((r) => r.project.id === 'p1')).toEqual({ project: project('p1', 'First renamed'), templates, backfilled: true, headMark: 50 });
    expect(rows.find((r) => r.project.id === 'p2')).toEqual({ project: project('p2'), templates: null, backfilled: false, headMark: null });
    // a project moving to another team follows it
    await ix.putProjects('tq', [project('p2')]);
    expect((await ix.projects('tp')).map((r) => r.project.id)).toEqual(['p1']);
    expect((await ix.projects('tq')).map((r) => r.project.id)).toEqual(['p2']);
  });

  it('the head mark only moves forward', async () => {
    await ix.putProjects('th', [project('ph')]);
    await ix.setHeadMark('ph', 10.5);
    await ix.setHeadMark('ph', 9);
    expect((await ix.projects('th'))[0]!.headMark).toBe(10.5);
    await ix.setHeadMark('ph', 11);
    expect((await ix.projects('th'))[0]!.headMark).toBe(11);
  });

  it('dropProjects forgets the projects and their renders only', async () => {
    await ix.putProjects('td', [project('pd1'), project('pd2'), project('pd3')]);
    await ix.putRenders('td', [render('rd1', 'pd1', 'queued', 1), render('rd2', 'pd2', 'queued', 1), render('rd3', 'pd3', 'queued', 1)]);
    await ix.dropProjects([]);
    expect((await ix.projects('td')).length).toBe(3);
    await ix.dropProjects(['pd1', 'pd2']);
    expect((await ix.projects('td')).map((r) => r.project.id)).toEqual(['pd3']);
    expect((await ix.renders('td')).map((r) => r.render.id)).toEqual(['rd3']);
  });
});

describe('renders', () => {
  it('putRenders stamps seen_at (now by default) and keeps the newest state', async () => {
    const t = now;
    await ix.putRenders('tr', [render('r1', 'pr', 'queued', 100)]);
    expect(await ix.rendersById(['r1'])).toEqual([{ render: render('r1', 'pr', 'queued', 100), seenAt: t }]);
    const row = await db.kysely.selectFrom('index_renders').selectAll().where('render_id', '=', 'r1').executeTakeFirstOrThrow();
    expect(row).toMatchObject({ team_id: 'tr', project_id: 'pr', updated_at: 100, rank: 2, seen_at: t }); // created_at stands for a missing updated_at
    // an older state is refused
    await ix.putRenders('tr', [render('r1', 'pr', 'processing', 100, 99)], t + 1);
    // a state of the same time but earlier in the lifecycle too
    await ix.putRenders('tr', [render('r1', 'pr', 'ready', 100, 100)], t + 2);
    expect(await ix.rendersById(['r1'])).toEqual([{ render: render('r1', 'pr', 'queued', 100), seenAt: t }]);
    // an equal state is written again (fresher signed URLs)
    await ix.putRenders('tr', [render('r1', 'pr', 'queued', 100, 100, 'same state, new urls')], t + 3);
    expect(await ix.rendersById(['r1'])).toEqual([{ render: render('r1', 'pr', 'queued', 100, 100, 'same state, new urls'), seenAt: t + 3 }]);
    // a newer state naming another project or team never moves the render (one owner for life)
    await ix.putRenders('tr2', [render('r1', 'pr2', 'complete', 100, 200)], t + 4);
    expect(await db.kysely.selectFrom('index_renders').selectAll().where('render_id', '=', 'r1').executeTakeFirstOrThrow())
      .toMatchObject({ team_id: 'tr', project_id: 'pr', updated_at: 100, rank: 2, seen_at: t + 3 });
    // a newer one of the same owner wins
    await ix.putRenders('tr', [render('r1', 'pr', 'complete', 100, 200)], t + 4);
    expect(await db.kysely.selectFrom('index_renders').selectAll().where('render_id', '=', 'r1').executeTakeFirstOrThrow())
      .toMatchObject({ team_id: 'tr', project_id: 'pr', updated_at: 200, rank: 5, seen_at: t + 4 });
    // later but back in the lifecycle: refused
    await ix.putRenders('tr', [render('r1', 'pr', 'processing', 100, 300)], t + 5);
    expect((await ix.rendersById(['r1']))[0]!.render.status).toBe('complete');
  });

  it('writes long lists, reads them by id across chunks and page by page', async () => {
    const many = Array.from({ length: 1234 }, (_, i) => render(`m${String(i).padStart(5, '0')}`, 'pm', 'complete', i));
    await ix.putRenders('tm', many, 42);
    expect((await ix.renders('tm')).length).toBe(1234);
    const byId = await ix.rendersById([...many.map((r) => r.id), 'missing']);
    expect(byId.map((r) => r.render.id).sort()).toEqual(many.map((r) => r.id));
    expect(byId.every((r) => r.seenAt === 42)).toBe(true);
    const pages: string[][] = [];
    expect(await ix.eachRenders('tm', (rows) => pages.push(rows.map((r) => r.render.id)), 500)).toBe(1234);
    expect(pages.map((p) => p.length)).toEqual([500, 500, 234]);
    expect(pages.flat()).toEqual(many.map((r) => r.id));
    // a last page that is exactly full ends with one more (empty) read
    const exact: number[] = [];
    expect(await ix.eachRenders('tm', (rows) => exact.push(rows.length), 617)).toBe(1234);
    expect(exact).toEqual([617, 617]);
    const whole: number[] = [];
    expect(await ix.eachRenders('tm', (rows) => whole.push(rows.length), 2000)).toBe(1234);
    expect(whole).toEqual([1234]);
    // by default, pages of 500 rows (a page of SQLite is read and parsed in one turn of the event loop)
    const byDefault: number[] = [];
    expect(await ix.eachRenders('tm', (rows) => byDefault.push(rows.length))).toBe(1234);
    expect(byDefault).toEqual([500, 500, 234]);
    expect(await ix.eachRenders('nobody', () => { throw new Error('no rows: not called'); })).toBe(0);
    expect(await ix.rendersById([])).toEqual([]);
  });

  it('dropTeam forgets its renders, projects and row, and nothing of other teams', async () => {
    await ix.putTeam(team('tz'), []);
    await ix.putProjects('tz', [project('pz')]);
    await ix.putRenders('tz', [render('rz', 'pz', 'queued', 1)]);
    await ix.putTeam(team('tk'), []);
    await ix.putProjects('tk', [project('pk')]);
    await ix.putRenders('tk', [render('rk', 'pk', 'queued', 1)]);
    await ix.dropTeam('tz');
    expect(await ix.team('tz')).toBeUndefined();
    expect(await ix.projects('tz')).toEqual([]);
    expect(await ix.renders('tz')).toEqual([]);
    expect(await ix.team('tk')).toBeDefined();
    expect((await ix.projects('tk')).length).toBe(1);
    expect((await ix.renders('tk')).length).toBe(1);
  });
});
