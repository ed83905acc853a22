import { sql, SqliteAdapter, type Kysely, type RawBuilder } from 'kysely';
import { LIFECYCLE_RANK, type V1Project, type V1Render, type V1Team, type V1TeamMember, type V1TemplateSummary } from '../v1/schemas.js';
import type { Database } from './schema.js';
import { supersedesSql } from './recency.js';
import { toProjectRow, toTeamRow, type ChangesSince, type ProjectRow, type RenderRow, type TeamCounted, type TeamRow } from './replica-rows.js';

const updatedOf = (r: V1Render) => r.updated_at ?? r.created_at;
/** Render rows read a page at a time (a SQLite page is read and parsed in one turn of the event loop: ~10 ms at 500). */
const PAGE_ROWS = 500;
/** Rows of ids and ranks counted a page at a time (SQLite). */
const COUNT_PAGE_ROWS = 1000;
/** The lifecycle rank of a final render (complete, failed). */
const FINAL_RANK = LIFECYCLE_RANK.complete;

/**
 * The replica's tables in the store (SQLite or PostgreSQL): teams with their backfill state and sync times, projects
 * with their templates and per-project backfill checkpoint, and every render as v1 last showed it. A render row is
 * only ever replaced by a state that is not older (updated_at, then the lifecycle rank) — in one statement, so two
 * instances (or a webhook and a sync) writing one render at once agree. One instance syncs a team at a time: the
 * lease columns of its row.
 *
 * Change marks: every write of a render row records a change number (`change_seq`), so an instance that lost the
 * change bus reads only the rows changed since its mark (`changeMark`, `changesSince`). On PostgreSQL the number is the
 * writing transaction's id and a mark is the oldest transaction still running when it is taken (the snapshot's xmin):
 * ids are handed out before commit, so a transaction committing late holds an id below marks taken meanwhile — but it
 * was running when they were taken, so it is at or after each of them and read next time (rows committed before a mark
 * may be read twice; applying a render twice is harmless). On SQLite (one writer at a time) it is the newest number
 * handed out + 1 (`index_changes`, moved by a trigger in the writing statement itself, never back), and a mark is the
 * newest number read + 1. A dropped project records the number of its drop (`index_dropped_projects`); what cannot be
 * followed row by row — a repair's rewrite — records its number in the team's row (`reset_seq`): a copy older than it is
 * read whole again.
 */
export class ReplicaStore {
  private readonly sqlite: boolean;

  constructor(private readonly db: Kysely<Database>, private readonly now: () => number = Date.now) {
    this.sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  }

  /** The change number a write records (see the class comment). */
  private changeSeq(): RawBuilder<number> {
    return this.sqlite ? sql<number>`(select seq + 1 from index_changes where id = 1)` : sql<number>`pg_current_xact_id()::text::bigint`;
  }

  /**
   * A mark to take before reading the team (its rows, or its changes since an older mark): every change committed
   * after it is read by `changesSince(teamId, mark)`.
   */
  async changeMark(): Promise<number> {
    const q = this.sqlite
      ? sql<{ m: number }>`select seq + 1 as m from index_changes where id = 1`
      : sql<{ m: number }>`select pg_snapshot_xmin(pg_current_snapshot())::text::bigint as m`;
    return Number((await q.execute(this.db)).rows[0]!.m);
  }

  /**
   * The team's render rows written at or after `mark`, a page at a time (by change number, then id), and the mark to
   * read from next time.
   */
  async changesSince(teamId: string, mark: number, each: (rows: readonly RenderRow[]) => void, pageSize = PAGE_ROWS): Promise<ChangesSince> {
    const next = this.sqlite ? undefined : await this.changeMark(); // taken before reading: nothing after it is missed
    let newest = mark - 1;
    let after: { seq: number; id: string } | undefined;
    let n = 0;
    for (;;) {
      const from = after;
      // (SQLite reads synchronously: a turn of the event loop between pages)
      if (from) await new Promise<void>((r) => setImmediate(r));
      const rows = await this.db.selectFrom('index_renders').select(['render_id', 'render', 'seen_at', 'change_seq']).where('team_id', '=', teamId)
        .where((eb) => (from
          ? eb.or([eb('change_seq', '>', from.seq), eb.and([eb('change_seq', '=', from.seq), eb('render_id', '>', from.id)])])
          : eb('change_seq', '>=', mark)))
        .orderBy('change_seq').orderBy('render_id').limit(pageSize).execute();
      if (rows.length > 0) {
        each(rows.map((r) => ({ render: JSON.parse(r.render) as V1Render, seenAt: Number(r.seen_at) })));
        n += rows.length;
        const last = rows[rows.length - 1]!;
        after = { seq: Number(last.change_seq), id: last.render_id };
        newest = Math.max(newest, after.seq);
      }
      if (rows.length < pageSize) return { rows: n, mark: next ?? newest + 1 };
    }
  }

  /** The team's projects dropped at or after `mark` (some may be back since). */
  async droppedSince(teamId: string, mark: number): Promise<string[]> {
    const rows = await this.db.selectFrom('index_dropped_projects').select('project_id').where('team_id', '=', teamId).where('change_seq', '>=', mark)
      .execute();
    return rows.map((r) => r.project_id);
  }

  /** A project's renders (a project dropped and back, read whole). */
  async rendersOfProject(projectId: string): Promise<RenderRow[]> {
    const rows = await this.db.selectFrom('index_renders').select(['render', 'seen_at']).where('project_id', '=', projectId).execute();
    return rows.map((r) => ({ render: JSON.parse(r.render) as V1Render, seenAt: Number(r.seen_at) }));
  }

  /**
   * Whether the team's rows changed since `mark` in a way `changesSince` cannot follow (a repair). Undefined: the team is
   * no longer in the store.
   */
  async rewrittenSince(teamId: string, mark: number): Promise<boolean | undefined> {
    const row = await this.db.selectFrom('index_teams').select('reset_seq').where('team_id', '=', teamId).executeTakeFirst();
    if (!row) return undefined;
    return row.reset_seq !== null && row.reset_seq !== undefined && Number(row.reset_seq) >= mark;
  }

  /** Records that the team's rows were rewritten so that they cannot be followed row by row (see the class comment). */
  private async markReset(db: Kysely<Database>, teamIds: Iterable<string>): Promise<void> {
    for (const teamId of new Set(teamIds)) await db.updateTable('index_teams').set({ reset_seq: this.changeSeq() }).where('team_id', '=', teamId).execute();
  }

  async team(teamId: string): Promise<TeamRow | undefined> {
    const r = await this.db.selectFrom('index_teams').selectAll().where('team_id', '=', teamId).executeTakeFirst();
    return r ? toTeamRow(r) : undefined;
  }

  /**
   * Every team's row with its renders, its projects and its renders not yet final (what one sync of it re-polls); a team
   * `held` says is in memory is not counted (its counts are 0: memory's copy tells them). On SQLite (read synchronously)
   * counted a team at a time, a page of rows at a time with a turn of the event loop between: a 100 000-render team is
   * never scanned in one turn.
   */
  async teams(held: (teamId: string) => boolean = () => false): Promise<TeamCounted[]> {
    const rows = await this.db.selectFrom('index_teams').selectAll().orderBy('team_id').execute();
    const out: TeamCounted[] = [];
    if (!this.sqlite) {
      // PostgreSQL answers off the event loop: the teams not held counted in two grouped statements (none: no statement)
      const counted = rows.map((r) => r.team_id).filter((id) => !held(id));
      const n = new Map<string, { renders: number; moving: number }>();
      const projects = new Map<string, number>();
      if (counted.length > 0) {
        const counts = await this.db.selectFrom('index_renders')
          .select(['team_id', (e) => e.fn.countAll<number>().as('n'), sql<number>`sum(case when rank < ${FINAL_RANK} then 1 else 0 end)`.as('moving')])
          .where('team_id', 'in', counted).groupBy('team_id').execute();
        for (const c of counts) n.set(c.team_id, { renders: Number(c.n), moving: Number(c.moving) });
        const p = await this.db.selectFrom('index_projects').select(['team_id', (e) => e.fn.countAll<number>().as('n')])
          .where('team_id', 'in', counted).groupBy('team_id').execute();
        for (const c of p) projects.set(c.team_id, Number(c.n));
      }
      const isCounted = new Set(counted);
      for (const r of rows) {
        const row = toTeamRow(r);
        const c = n.get(r.team_id);
        out.push(!isCounted.has(r.team_id) ? { ...row, renders: 0, projects: 0, moving: 0 }
          : { ...row, renders: c?.renders ?? 0, moving: c?.moving ?? 0, projects: projects.get(r.team_id) ?? 0 });
      }
      return out;
    }
    for (const r of rows) {
      const row = toTeamRow(r);
      out.push(held(row.team.id) ? { ...row, renders: 0, projects: 0, moving: 0 } : { ...row, ...(await this.counts(row.team.id)) });
    }
    return out;
  }

  /** One team's counts on SQLite (read synchronously): its rows read in the order of its change index, a page at a time. */
  private async counts(teamId: string): Promise<{ renders: number; projects: number; moving: number }> {
    const projects = Number((await this.db.selectFrom('index_projects').select((e) => e.fn.countAll<number>().as('n')).where('team_id', '=', teamId)
      .executeTakeFirst())?.n ?? 0);
    // SQLite: the team's rows read in the order of its change index, a page of small rows at a time, a turn between pages
    let renders = 0;
    let moving = 0;
    let after: { seq: number; id: string } | undefined;
    for (;;) {
      const from = after;
      if (from) await new Promise<void>((r) => setImmediate(r));
      const rows = await this.db.selectFrom('index_renders').select(['render_id', 'change_seq', 'rank']).where('team_id', '=', teamId)
        .where((eb) => (from
          ? eb.or([eb('change_seq', '>', from.seq), eb.and([eb('change_seq', '=', from.seq), eb('render_id', '>', from.id)])])
          : eb.lit(true)))
        .orderBy('change_seq').orderBy('render_id').limit(COUNT_PAGE_ROWS).execute();
      renders += rows.length;
      for (const r of rows) if (Number(r.rank) < FINAL_RANK) moving++;
      if (rows.length < COUNT_PAGE_ROWS) return { renders, projects, moving };
      const last = rows[rows.length - 1]!;
      after = { seq: Number(last.change_seq), id: last.render_id };
    }
  }

  async putTeam(team: V1Team, members: readonly V1TeamMember[]): Promise<void> {
    await this.db.insertInto('index_teams')
      .values({ team_id: team.id, team: JSON.stringify(team), members: JSON.stringify(members), state: 'backfilling', backfilled_at: null, synced_at: null,
        webhook_at: null, lease_holder: null, lease_until: null })
      .onConflict((oc) => oc.column('team_id').doUpdateSet({ team: JSON.stringify(team), members: JSON.stringify(members) }))
      .execute();
  }

  async markBackfilled(teamId: string, at: number): Promise<void> {
    await this.db.updateTable('index_teams').set({ state: 'ready', backfilled_at: at, synced_at: at }).where('team_id', '=', teamId).execute();
  }

  /** The start time of the last sync that completed (every change v1 had made before it is in the index). */
  async markSynced(teamId: string, at: number): Promise<void> {
    await this.db.updateTable('index_teams').set({ synced_at: at }).where('team_id', '=', teamId)
      .where((eb) => eb.or([eb('synced_at', 'is', null), eb('synced_at', '<', at)])).execute();
  }

  async markWebhook(teamId: string, at: number): Promise<void> {
    await this.db.updateTable('index_teams').set({ webhook_at: at }).where('team_id', '=', teamId).execute();
  }

  /**
   * Takes (or renews) the team's sync lease for `holder`; false while another live holder has it. `syncStart`: a sync
   * starts now (recorded with the lease, for every instance to see).
   */
  async lease(teamId: string, holder: string, ms: number, syncStart = false): Promise<boolean> {
    const now = this.now();
    const r = await this.db.updateTable('index_teams')
      .set({ lease_holder: holder, lease_until: now + ms, ...(syncStart ? { sync_started_at: now } : {}) }).where('team_id', '=', teamId)
      .where((eb) => eb.or([eb('lease_holder', 'is', null), eb('lease_holder', '=', holder), eb('lease_until', '<', now)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /**
   * Gives the team's lease back; `syncedAt`: a sync that started then is over, the team marked synced as of it in the same
   * statement (as `markSynced`). False when `holder` no longer held it (then nothing was written).
   */
  async release(teamId: string, holder: string, syncedAt?: number): Promise<boolean> {
    const r = await this.db.updateTable('index_teams')
      .set((eb) => ({
        lease_holder: null,
        lease_until: null,
        ...(syncedAt === undefined ? {} : {
          synced_at: eb.case().when(eb.or([eb('synced_at', 'is', null), eb('synced_at', '<', syncedAt)]))
            .then(eb.val(syncedAt)).else(eb.ref('synced_at')).end(),
        }),
      }))
      .where('team_id', '=', teamId).where('lease_holder', '=', holder).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async projects(teamId: string): Promise<ProjectRow[]> {
    const rows = await this.db.selectFrom('index_projects').selectAll().where('team_id', '=', teamId).execute();
    return rows.map(toProjectRow);
  }

  /** Adds or refreshes projects (their checkpoint and templates are kept). */
  async putProjects(teamId: string, projects: readonly V1Project[]): Promise<void> {
    for (const p of projects) {
      await this.db.insertInto('index_projects')
        .values({ project_id: p.id, team_id: teamId, project: JSON.stringify(p), templates: null, backfilled: 0, head_mark: null })
        .onConflict((oc) => oc.column('project_id').doUpdateSet({ project: JSON.stringify(p), team_id: teamId }))
        .execute();
    }
  }

  /** Drops projects and their renders, and records the drops (a copy that missed the announcement drops them too). */
  async dropProjects(projectIds: readonly string[]): Promise<void> {
    if (projectIds.length === 0) return;
    const owned = await this.db.selectFrom('index_projects').select(['project_id', 'team_id']).where('project_id', 'in', [...projectIds]).execute();
    await this.db.deleteFrom('index_renders').where('project_id', 'in', [...projectIds]).execute();
    await this.db.deleteFrom('index_projects').where('project_id', 'in', [...projectIds]).execute();
    if (owned.length === 0) return;
    // after the deletes: a copy that reads the drop reads the store without them
    await this.db.insertInto('index_dropped_projects')
      .values(owned.map((p) => ({ project_id: p.project_id, team_id: p.team_id, change_seq: this.changeSeq() })))
      .onConflict((oc) => oc.column('project_id').doUpdateSet({ team_id: sql<string>`excluded.team_id`, change_seq: sql<number>`excluded.change_seq` }))
      .execute();
  }

  async putTemplates(projectId: string, templates: readonly V1TemplateSummary[]): Promise<void> {
    await this.db.updateTable('index_projects').set({ templates: JSON.stringify(templates) }).where('project_id', '=', projectId).execute();
  }

  /** Moves a project's head mark forward (never back: two instances' walks agree on the newest). */
  async setHeadMark(projectId: string, at: number): Promise<void> {
    await this.db.updateTable('index_projects').set({ head_mark: at }).where('project_id', '=', projectId)
      .where((eb) => eb.or([eb('head_mark', 'is', null), eb('head_mark', '<', at)])).execute();
  }

  /** The per-project checkpoint: every render of the project is in the index. */
  async markProjectBackfilled(projectId: string): Promise<void> {
    await this.db.updateTable('index_projects').set({ backfilled: 1 }).where('project_id', '=', projectId).execute();
  }

  /**
   * Writes renders unless the store holds a newer state of one (the recency rule, src/store/recency.ts; an equal state is
   * rewritten: its signed URLs are fresher).
   */
  async putRenders(teamId: string, renders: readonly V1Render[], seenAt = this.now()): Promise<void> {
    for (let i = 0; i < renders.length; i += 100) {
      const chunk = renders.slice(i, i + 100);
      await this.db.insertInto('index_renders')
        .values(chunk.map((r) => ({
          render_id: r.id, team_id: teamId, project_id: r.project.id, updated_at: updatedOf(r), rank: LIFECYCLE_RANK[r.status], seen_at: seenAt,
          render: JSON.stringify(r), change_seq: this.changeSeq(),
        })))
        .onConflict((oc) => oc.column('render_id')
          .doUpdateSet({
            updated_at: sql<number>`excluded.updated_at`, rank: sql<number>`excluded.rank`, seen_at: sql<number>`excluded.seen_at`,
            render: sql<string>`excluded.render`, change_seq: sql<number>`excluded.change_seq`,
          })
          // a render belongs to one team and project for life: a state naming another owner never replaces it
          .where(sql<boolean>`${sql.raw(supersedesSql('index_renders'))}
            and index_renders.team_id = excluded.team_id and index_renders.project_id = excluded.project_id`))
        .execute();
    }
  }

  /** Repair only: removes renders the store should never have held (v1 shows them to no team). */
  async dropRenders(renderIds: readonly string[]): Promise<void> {
    if (renderIds.length === 0) return;
    const teams = await this.db.selectFrom('index_renders').select('team_id').distinct().where('render_id', 'in', [...renderIds]).execute();
    await this.db.deleteFrom('index_renders').where('render_id', 'in', [...renderIds]).execute();
    await this.db.deleteFrom('render_versions').where('v1_id', 'in', [...renderIds]).execute();
    await this.markReset(this.db, teams.map((t) => t.team_id));
  }

  /** The team and project a render was first seen in (undefined: the store has never held it). */
  async ownerOf(renderId: string): Promise<{ readonly team: string; readonly project: string } | undefined> {
    const r = await this.db.selectFrom('index_renders').select(['team_id', 'project_id']).where('render_id', '=', renderId).executeTakeFirst();
    return r ? { team: r.team_id, project: r.project_id } : undefined;
  }

  /**
   * Repair only (`index verify --repair`): writes v1's own state of renders over whatever the store holds — owner and
   * recency included — and forgets the newest state the webhook ledger recorded for them (a forged far-future one
   * would pin them). Returns the teams whose rows changed (the render's former owner and its true one).
   */
  async overwriteRenders(renders: readonly V1Render[], seenAt = this.now()): Promise<Set<string>> {
    const teams = new Set<string>();
    for (const r of renders) {
      await this.db.transaction().execute(async (tx) => {
        const before = await tx.selectFrom('index_renders').select('team_id').where('render_id', '=', r.id).executeTakeFirst();
        if (before) teams.add(before.team_id);
        teams.add(r.project.team);
        await tx.deleteFrom('index_renders').where('render_id', '=', r.id).execute();
        await tx.deleteFrom('render_versions').where('v1_id', '=', r.id).execute();
        await tx.insertInto('index_renders').values({
          render_id: r.id, team_id: r.project.team, project_id: r.project.id, updated_at: updatedOf(r), rank: LIFECYCLE_RANK[r.status], seen_at: seenAt,
          render: JSON.stringify(r), change_seq: this.changeSeq(),
        }).execute();
        await this.markReset(tx, [before?.team_id ?? r.project.team, r.project.team]);
      });
    }
    return teams;
  }

  async renders(teamId: string): Promise<RenderRow[]> {
    const rows = await this.db.selectFrom('index_renders').select(['render', 'seen_at']).where('team_id', '=', teamId).execute();
    return rows.map((r) => ({ render: JSON.parse(r.render) as V1Render, seenAt: Number(r.seen_at) }));
  }

  /**
   * The team's renders a page at a time (by render id), so a large team is never parsed whole at once; `each` may return
   * a promise: the next page is read once it settles.
   */
  async eachRenders(teamId: string, each: (rows: readonly RenderRow[]) => unknown, pageSize = PAGE_ROWS): Promise<number> {
    let after = '';
    let n = 0;
    for (;;) {
      const rows = await this.db.selectFrom('index_renders').select(['render_id', 'render', 'seen_at']).where('team_id', '=', teamId)
        .where('render_id', '>', after).orderBy('render_id').limit(pageSize).execute();
      if (rows.length === 0) return n;
      await each(rows.map((r) => ({ render: JSON.parse(r.render) as V1Render, seenAt: Number(r.seen_at) })));
      n += rows.length;
      after = rows[rows.length - 1]!.render_id;
      if (rows.length < pageSize) return n;
    }
  }

  async rendersById(ids: readonly string[]): Promise<RenderRow[]> {
    const out: RenderRow[] = [];
    for (let i = 0; i < ids.length; i += 500) {
      const rows = await this.db.selectFrom('index_renders').select(['render', 'seen_at']).where('render_id', 'in', ids.slice(i, i + 500)).execute();
      for (const r of rows) out.push({ render: JSON.parse(r.render) as V1Render, seenAt: Number(r.seen_at) });
    }
    return out;
  }

  /** Forgets a team (its index is built again on its next read). */
  async dropTeam(teamId: string): Promise<void> {
    await this.db.deleteFrom('index_renders').where('team_id', '=', teamId).execute();
    await this.db.deleteFrom('index_projects').where('team_id', '=', teamId).execute();
    await this.db.deleteFrom('index_teams').where('team_id', '=', teamId).execute();
  }
}
