import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';
import { ReplicaStore } from '../../src/store/replica-store.js';
import type { RenderRow } from '../../src/store/replica-rows.js';
import type { V1Project, V1Render, V1Team } from '../../src/v1/schemas.js';
import { databases } from '../helpers/databases.js';

/**
 * Change marks of the render index, on SQLite and PostgreSQL: a team's render rows written since a mark are read, and
 * nothing else; a write that commits after a later mark was taken (PostgreSQL hands transaction ids out before commit)
 * is still read from that later mark; projects dropped since a mark are told; what cannot be followed change by change (a
 * repair, a team gone) is told apart.
 */
const dbs = await databases();
const team = (id: string) => ({ id, name: id }) as unknown as V1Team;
const project = (id: string) => ({ id, title: id }) as unknown as V1Project;
const render = (id: string, projectId: string, status: V1Render['status'], updated_at: number, teamId = 't1') =>
  ({ id, project: { id: projectId, team: teamId }, status, created_at: 1_000, updated_at, name: id }) as unknown as V1Render;

describe.each(dbs)('change marks on $name', ({ name, url }) => {
  let db: Db;
  let ix: ReplicaStore;
  beforeAll(async () => {
    db = await openDb(url);
    await migrate(db.kysely);
    ix = new ReplicaStore(db.kysely, () => 5_000);
    for (const t of ['t1', 't2', 't3']) await ix.putTeam(team(t), []);
    await ix.putProjects('t1', [project('p1'), project('p2')]);
    await ix.putProjects('t2', [project('q1')]);
  });
  afterAll(async () => db?.close());

  /** The rows changed since `mark` (ids in the order read) and the next mark. */
  const since = async (teamId: string, mark: number, pageSize?: number) => {
    const rows: RenderRow[] = [];
    const r = await ix.changesSince(teamId, mark, (page) => rows.push(...page), pageSize);
    expect(r.rows).toBe(rows.length);
    return { ids: rows.map((x) => x.render.id), rows, mark: r.mark };
  };

  it('reads the rows written since a mark, and from the mark it gives, only later ones; other teams\' writes are not read', async () => {
    const m0 = await ix.changeMark();
    await ix.putRenders('t1', [render('r1', 'p1', 'queued', 10), render('r2', 'p1', 'queued', 10), render('r3', 'p2', 'complete', 10)]);
    await ix.putRenders('t2', [render('s1', 'q1', 'queued', 10, 't2')]);
    const a = await since('t1', m0);
    expect(a.ids.sort()).toEqual(['r1', 'r2', 'r3']);
    expect(a.rows.find((x) => x.render.id === 'r1')).toEqual({ render: render('r1', 'p1', 'queued', 10), seenAt: 5_000 });
    // nothing written since: nothing read (PostgreSQL may read again what committed just before its mark, not here)
    expect((await since('t1', a.mark)).ids).toEqual([]);
    // a newer state is a change; an older one is refused by the recency rule, and is none
    await ix.putRenders('t1', [render('r2', 'p1', 'complete', 20), render('r1', 'p1', 'queued', 5)]);
    const b = await since('t1', a.mark);
    expect(b.ids).toEqual(['r2']);
    expect(b.rows[0]!.render.status).toBe('complete');
    expect(b.mark).toBeGreaterThanOrEqual(a.mark);
    expect((await since('t1', b.mark)).ids).toEqual([]);
  });

  it('reads a large change a page at a time, each row once', async () => {
    const m = await ix.changeMark();
    await ix.putProjects('t3', [project('p3')]);
    const many = Array.from({ length: 250 }, (_, i) => render(`m${String(i).padStart(3, '0')}`, 'p3', 'queued', 10, 't3'));
    await ix.putRenders('t3', many.slice(0, 120));
    await ix.putRenders('t3', many.slice(120));
    const r = await since('t3', m, 7);
    expect(r.ids).toHaveLength(250);
    expect(new Set(r.ids).size).toBe(250);
    expect((await since('t3', r.mark, 7)).ids).toEqual([]);
  });

  it('a write committed after a later mark was taken is read from that later mark', async () => {
    const m0 = await ix.changeMark();
    let commit!: () => void;
    const held = new Promise<void>((resolve) => { commit = resolve; });
    let written!: () => void;
    const inside = new Promise<void>((resolve) => { written = resolve; });
    // the late writer: its own connection, a transaction open across the reader's mark
    const other = name === 'sqlite' ? await openDb(url) : db;
    const late = other.kysely.transaction().execute(async (tx) => {
      await new ReplicaStore(tx, () => 6_000).putRenders('t1', [render('late', 'p1', 'queued', 30)]);
      written();
      await held;
    });
    await inside;
    // meanwhile another write commits, and the reader catches up past it
    if (name === 'postgres') await ix.putRenders('t1', [render('early', 'p1', 'queued', 30)]);
    const first = await since('t1', m0);
    expect(first.ids).not.toContain('late');
    if (name === 'postgres') expect(first.ids).toContain('early');
    commit();
    await late;
    if (other !== db) await other.close();
    const second = await since('t1', first.mark);
    expect(second.ids).toContain('late');
    expect((await since('t1', second.mark)).ids).not.toContain('late');
  });

  it('tells the projects dropped since a mark, whether or not they came back', async () => {
    const m = await ix.changeMark();
    await ix.putRenders('t2', [render('s2', 'q1', 'queued', 10, 't2')]);
    await ix.putProjects('t2', [project('q1'), project('q2')]); // q1 refreshed, q2 new: followed row by row
    expect(await ix.droppedSince('t2', m)).toEqual([]);
    await ix.dropProjects(['q1', 'nowhere']);
    expect(await ix.droppedSince('t2', m)).toEqual(['q1']);
    expect(await ix.droppedSince('t1', m)).toEqual([]); // another team's
    const m2 = await ix.changeMark();
    expect(await ix.droppedSince('t2', m2)).toEqual([]);
    // back again, with a render; dropped projects never take the change numbers back
    await ix.putProjects('t2', [project('q1')]);
    await ix.putRenders('t2', [render('s3', 'q1', 'queued', 10, 't2')]);
    expect((await since('t2', m2)).ids).toEqual(['s3']);
    expect((await ix.rendersOfProject('q1')).map((r) => r.render.id)).toEqual(['s3']);
    await ix.dropProjects(['q1']);
    expect(await ix.droppedSince('t2', m2)).toEqual(['q1']);
    expect(await ix.rewrittenSince('t2', m)).toBe(false); // followed drop by drop: not a rewrite
  });

  it('tells a repair and a team gone from changes it can follow row by row', async () => {
    await ix.putRenders('t1', [render('moved', 'p1', 'queued', 10)]);
    const m1 = await ix.changeMark();
    expect(await ix.rewrittenSince('t1', m1)).toBe(false);
    // a repair rewrites rows: the team and the render's former owner are marked
    await ix.overwriteRenders([render('moved', 'q2', 'complete', 40, 't2')]);
    expect(await ix.rewrittenSince('t1', m1)).toBe(true);
    expect(await ix.rewrittenSince('t2', m1)).toBe(true);
    const m3 = await ix.changeMark();
    expect(await ix.rewrittenSince('t1', m3)).toBe(false);
    await ix.dropRenders(['r3']);
    expect(await ix.rewrittenSince('t1', m3)).toBe(true);
    expect(await ix.rewrittenSince('t2', m3)).toBe(false);
    await ix.dropTeam('t3');
    expect(await ix.rewrittenSince('t3', 0)).toBeUndefined();
  });
});
