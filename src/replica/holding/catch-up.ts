import type { Logger } from 'pino';
import type { ReplicaStore } from '../../store/replica-store.js';
import type { RenderRow } from '../../store/replica-rows.js';
import type { RenderDataStore } from '../../store/render-extras.js';
import type { TeamRegistry } from './registry.js';
import type { TeamReplica } from '../team/team-replica.js';

export interface CatchUpDeps {
  readonly logger: Logger;
  readonly store: ReplicaStore;
  readonly renderData: RenderDataStore;
  readonly registry: TeamRegistry;
  /** A team being synced or backfilled here: its row and projects are this instance's own writes (not read again). */
  readonly busy: (teamId: string) => boolean;
  /** Where a retry's catch-up is handed (Peers follows it: idle() and close() wait for it). */
  readonly follow?: (p: Promise<void>) => void;
  /** The first retry after a failed catch-up (doubled each time; 0: no retry). Default 1 s. */
  readonly retryMs?: number;
}

/** Retries of a failed catch-up before the teams it could not read are read whole instead. */
const RETRIES = 6;

/** What the catch-ups did so far (the operators' log, tests). */
export interface CatchUpCounts {
  /** Catch-ups run (one per resync signal, coalesced). */
  runs: number;
  /** Teams caught up in place. */
  teams: number;
  /** Teams read whole again instead (no mark, a repair, gone from the store, reads failing again and again). */
  reloaded: number;
  /** Teams whose catch-up failed (kept as they were, their marks unmoved, tried again). */
  failed: number;
  /** Render rows read since the teams' marks. */
  rows: number;
}

/**
 * After a resync signal (the change bus was lost: announcements may have been missed), every team held in memory reads
 * only what changed in the store since its change mark: the render rows written since (applied under the newest-state
 * rule, with the data the gateway sent for them), the projects dropped since (dropped here too; one back in the store
 * since is read whole again, its renders included), then its row and projects. A team the store cannot tell the changes
 * of is forgotten and read whole on its next read: one with no mark (adopted empty), one a repair rewrote
 * (`index verify --repair`), and one gone from the store. A team whose catch-up fails (the store unreachable: PostgreSQL
 * restarting drops the LISTEN connection too) keeps its copy and mark and is tried again — at the next signal (listening
 * again), or after 1 s, doubled each time; when the 6th retry in a row fails too, it is read whole on its next read.
 * Signals arriving during a catch-up make one more after it.
 */
export class CatchUp {
  readonly counts: CatchUpCounts = { runs: 0, teams: 0, reloaded: 0, rows: 0, failed: 0 };
  private current: Promise<void> | undefined;
  private next: Promise<void> | undefined;
  /** Failed catch-ups in a row, and the retry waiting. */
  private failures = 0;
  private retry: NodeJS.Timeout | undefined;

  constructor(private readonly deps: CatchUpDeps) {}

  /** Catches every held team up; resolves once a catch-up that started after this call is done. */
  request(): Promise<void> {
    if (!this.current) {
      this.current = this.run().finally(() => { this.current = undefined; });
      return this.current;
    }
    this.next ??= this.current.catch(() => undefined).then(() => {
      this.next = undefined;
      return this.request();
    });
    return this.next;
  }

  private async run(): Promise<void> {
    const { registry, logger } = this.deps;
    // a team being read from the store took its mark before its read: it is caught up with the others once held
    await Promise.allSettled(registry.pending());
    const before = { ...this.counts };
    this.counts.runs++;
    const teams = [...registry.values()];
    const ok = await Promise.all(teams.map((t) => this.team(t)));
    const failed = teams.filter((_, i) => !ok[i]);
    const done = { teams: this.counts.teams - before.teams, reloaded: this.counts.reloaded - before.reloaded, rows: this.counts.rows - before.rows,
      failed: failed.length };
    // (a catch-up that found nothing to read is routine — an idle SQLite instance resyncs every few seconds: debug)
    const news = done.reloaded > 0 || done.rows > 0 || done.failed > 0;
    logger[news ? 'info' : 'debug'](done, 'render index: caught up with the store after a resync');
    if (failed.length === 0) this.failures = 0;
    else this.retryLater(failed);
  }

  /** Another catch-up later; past RETRIES in a row, the teams still failing are read whole on their next read. */
  private retryLater(failed: readonly TeamReplica[]): void {
    const ms = this.deps.retryMs ?? 1000;
    if (++this.failures > RETRIES || ms <= 0) {
      this.failures = 0;
      for (const t of failed) this.forget(t);
      return;
    }
    if (this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      const p = this.request();
      if (this.deps.follow) this.deps.follow(p);
      else p.catch(() => undefined);
    }, ms * 2 ** (this.failures - 1));
    this.retry.unref();
  }

  /** The team leaves memory (read whole on its next read), unless it is being synced here or already replaced. */
  private forget(t: TeamReplica): void {
    const { registry, busy } = this.deps;
    if (busy(t.id) || registry.get(t.id) !== t) return; // a team being synced here keeps its copy (its mark unmoved)
    registry.forget(t.id);
    this.counts.reloaded++;
  }

  /** One team: its changes since its mark, or forgotten; false when the store could not be read (the copy kept). */
  private async team(t: TeamReplica): Promise<boolean> {
    const { store, registry, busy, logger } = this.deps;
    const mark = t.changeMark;
    const forget = () => {
      this.forget(t);
      return true;
    };
    if (mark === null) return forget();
    try {
      const ids: string[] = [];
      const read = await store.changesSince(t.id, mark, (rows) => {
        for (const row of rows) {
          ids.push(row.render.id);
          if (!held(t, row)) t.apply(row.render, row.seenAt);
        }
      });
      this.counts.rows += read.rows;
      // the data of these renders may have been written meanwhile (it is read from the store when answered)
      t.dataChanged(ids);
      // read after the renders: a repair committed before any of them is seen here
      const rewritten = await store.rewrittenSince(t.id, mark);
      if (rewritten !== false) return forget();
      // a team being synced here: its projects are this instance's own writes
      if (!busy(t.id)) {
        const dropped = (await store.droppedSince(t.id, mark)).filter((id) => t.projects.has(id));
        for (const id of dropped) t.dropProject(id);
        await registry.refreshRow(t);
        for (const id of dropped) if (t.projects.has(id)) await this.project(t, id); // back since: read whole
      }
      t.changeMark = read.mark;
      this.counts.teams++;
      return true;
    } catch (e) {
      logger.warn({ err: e, team: t.id }, 'render index: could not catch a team up with the store (kept as it was, tried again)');
      this.counts.failed++;
      return false;
    }
  }

  /** A project dropped and back: its renders read whole (the rows held of it were dropped with it). */
  private async project(t: TeamReplica, projectId: string): Promise<void> {
    const rows = await this.deps.store.rendersOfProject(projectId);
    this.counts.rows += rows.length;
    for (const row of rows) t.apply(row.render, row.seenAt);
    t.dataChanged(rows.map((r) => r.render.id));
  }
}

/** The team holds this state of the render already, seen no earlier (its own write, or one it followed). */
function held(t: TeamReplica, row: RenderRow): boolean {
  const s = t.renderState(row.render.id);
  return s !== undefined && s.status === row.render.status && s.updated === (row.render.updated_at ?? row.render.created_at) && s.seenAt >= row.seenAt;
}
