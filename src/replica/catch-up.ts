import type { Logger } from 'pino';
import type { IndexStore, RenderRow } from '../store/render-index.js';
import type { RenderDataStore } from '../store/render-extras.js';
import type { TeamRegistry } from './registry.js';
import type { TeamReplica } from './team-replica.js';

export interface CatchUpDeps {
  readonly logger: Logger;
  readonly store: IndexStore;
  readonly renderData: RenderDataStore;
  readonly registry: TeamRegistry;
  /** A team being synced or backfilled here: its row and projects are this instance's own writes (not read again). */
  readonly busy: (teamId: string) => boolean;
}

/** What the catch-ups did so far (the operators' log, tests). */
export interface CatchUpCounts {
  /** Catch-ups run (one per resync signal, coalesced). */
  runs: number;
  /** Teams caught up in place. */
  teams: number;
  /** Teams read whole again instead (no mark, a repair or a dropped project, a failed read, gone from the store). */
  reloaded: number;
  /** Render rows read since the teams' marks. */
  rows: number;
}

/**
 * After a resync signal (the change bus was lost: announcements may have been missed), every team held in memory reads
 * only what changed in the store since its change mark: the render rows written since (applied under the newest-state
 * rule, with the data the gateway sent for them), then its row and projects (a project gone is dropped). A team the
 * store cannot tell the changes of is forgotten and read whole on its next read: one with no mark (adopted empty), one a
 * repair rewrote (`index verify --repair`) or that lost a project since its mark (rare: a project gone from v1), one whose
 * read failed, and one gone from the store. Signals arriving during a catch-up make one more after it.
 */
export class CatchUp {
  readonly counts: CatchUpCounts = { runs: 0, teams: 0, reloaded: 0, rows: 0 };
  private current: Promise<void> | undefined;
  private next: Promise<void> | undefined;

  constructor(private readonly deps: CatchUpDeps) {}

  /** Catches every held team up; resolves once a catch-up that started after this call is done. */
  request(): Promise<void> {
    if (!this.current) {
      this.current = this.run().finally(() => { this.current = undefined; });
      return this.current;
    }
    this.next ??= this.current.then(() => {
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
    await Promise.all([...registry.values()].map((t) => this.team(t)));
    logger.info({ teams: this.counts.teams - before.teams, reloaded: this.counts.reloaded - before.reloaded, rows: this.counts.rows - before.rows },
      'render index: caught up with the store after a resync');
  }

  /** One team: its changes since its mark, or forgotten. */
  private async team(t: TeamReplica): Promise<void> {
    const { store, registry, busy, logger } = this.deps;
    const mark = t.changeMark;
    const forget = () => {
      if (busy(t.id) || registry.get(t.id) !== t) return; // a team being synced here keeps its copy (its mark unmoved)
      registry.forget(t.id);
      this.counts.reloaded++;
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
      if (ids.length > 0) await this.data(t, ids);
      // read after the renders: a repair committed before any of them is seen here
      const rewritten = await store.rewrittenSince(t.id, mark);
      if (rewritten !== false) return forget();
      if (!busy(t.id)) await registry.refreshRow(t);
      t.changeMark = read.mark;
      this.counts.teams++;
    } catch (e) {
      logger.warn({ err: e, team: t.id }, 'render index: could not catch a team up with the store (it is read whole on its next read)');
      forget();
    }
  }

  /** The data the gateway sent for these renders (written before their rows), where it is new to the team. */
  private async data(t: TeamReplica, ids: readonly string[]): Promise<void> {
    for (const [id, data] of await this.deps.renderData.many(ids)) {
      if (!t.data.has(id) || JSON.stringify(t.data.get(id)) !== JSON.stringify(data)) t.setData(id, data);
    }
  }
}

/** The team holds this state of the render already, seen no earlier (its own write, or one it followed). */
function held(t: TeamReplica, row: RenderRow): boolean {
  const s = t.renderState(row.render.id);
  return s !== undefined && s.status === row.render.status && s.updated === (row.render.updated_at ?? row.render.created_at) && s.seenAt >= row.seenAt;
}
