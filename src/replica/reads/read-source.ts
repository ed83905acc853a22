import { LRUCache } from 'lru-cache';
import type { Config } from '../../config/schema.js';
import type { Clock } from '../../lib/clock.js';
import { ReplicaSnapshot } from './snapshot.js';
import type { V1Session } from '../../v1/client.js';
import type { V1Team } from '../../v1/schemas.js';
import type { SyncBudget } from '../sync/budget.js';
import { epochOf } from '../sync/freshness.js';
import type { RecordInputs } from '../holding/record-inputs.js';
import type { TeamRegistry } from '../holding/registry.js';
import type { SyncScheduler } from '../sync/scheduler.js';
import { pendingProjects, scopeHeld, type PartialState, type ReadScope } from './read-scope.js';
import type { TeamReplica } from '../team/team-replica.js';

/** Where a read is answered from, and why. */
export type ReadSource =
  | {
    readonly kind: 'replica'; readonly snapshot: ReplicaSnapshot; readonly ageMs: number; readonly synced: readonly string[];
    /** What the snapshot's answers are computed from (its teams' versions, `epochOf`): the answer cache's validity. */
    readonly epoch: string;
    /** The staleness bound the answer keeps: the largest of its teams' computed bounds (`freshness.ts`). */
    readonly boundMs: number;
    /** The bound of the active projects and renders not yet final of its teams (checked at every sync; `freshness.ts`). */
    readonly activeBoundMs: number;
    /** Answered from part of the reach (the rest being read from the store or backfilled): never kept by the answer cache. */
    readonly partial?: PartialState;
  }
  | { readonly kind: 'live'; readonly reason: string; readonly partial?: PartialState };

export interface ReadSourcesDeps {
  readonly config: Pick<Config, 'INDEX_ACTIVE_MS' | 'INDEX_MAX_STALENESS_MS' | 'INDEX_RECONCILE_MS' | 'WEBHOOK_RECONCILE_MS' | 'TEMPLATES_RECONCILE_MS'
    | 'KEY_RECHECK_MS' | 'QUERY_LIMIT_DEFAULT' | 'INDEX_LOAD_WAIT_MS' | 'INDEX_ACTIVE_MS'>;
  readonly clock: Clock;
  readonly registry: TeamRegistry;
  readonly scheduler: SyncScheduler;
  readonly budget: SyncBudget;
  readonly inputs: RecordInputs;
  /** True once the replica is shut down. */
  readonly closed: () => boolean;
}

/**
 * Which source answers a read: the replica when every team the key reaches is backfilled and fresh (a stale one is
 * synced first, within its budget); while part of the reach is still being read from the store or backfilled, the held
 * teams when they copy the read's whole scope (partial); else live v1 (a backfill under way, a sync failing). The key's
 * reach is trusted for KEY_RECHECK_MS; a read that needs nothing waited for is decided synchronously.
 */
export class ReadSources {
  private readonly reach = new LRUCache<string, { teams: V1Team[]; at: number }>({ max: 10_000 });
  /** When a read first asked for a team being read from the store (until it is read): reads wait for it until then + INDEX_LOAD_WAIT_MS. */
  private readonly asked = new Map<string, number>();
  /** Reads that waited for teams being read from the store (tests, operators). */
  loadWaits = 0;

  constructor(private readonly deps: ReadSourcesDeps) {}

  /** The teams a key reaches (GET /v1/teams with the request's own key), trusted for KEY_RECHECK_MS. */
  async reachOf(session: V1Session): Promise<V1Team[]> {
    const now = this.deps.clock.now();
    const hit = this.reach.get(session.partition);
    if (hit && this.deps.config.KEY_RECHECK_MS > 0 && now - hit.at < this.deps.config.KEY_RECHECK_MS) return hit.teams;
    const teams = (await session.teams()).data;
    this.reach.set(session.partition, { teams, at: now });
    return teams;
  }

  /** v1 refused a key (a 401 somewhere): every key's reach is asked again on its next read (rare; cheap). */
  forgetReach(): void {
    this.reach.clear();
  }

  /**
   * Where this read is answered from (see `ReplicaService.source`). `scope`: what the read can touch (its plan's); with
   * it, a read of a reach part of which is still being read from the store or backfilled is answered from the teams
   * held when they copy its whole scope (marked partial), else live. No read waits for a team's load longer than
   * INDEX_LOAD_WAIT_MS: the loads of a reach run at once, and go on in the background past that.
   */
  async source(session: V1Session, now: number, scope?: ReadScope): Promise<ReadSource> {
    const { config, scheduler, budget } = this.deps;
    const quick = this.sourceHeld(session, now);
    if (quick) return quick;
    if (this.deps.closed()) return { kind: 'live', reason: 'the index is shut down' };
    const reach = await this.reachOf(session);
    await this.deps.inputs.ready;
    // every reachable team, not only those the filter names: total_count counts everything the key reaches
    const { held, loading, uncopied } = await this.loadReach(reach, now);
    const ready: TeamReplica[] = [];
    const backfilling: TeamReplica[] = [];
    for (const team of reach) {
      const t = held.get(team.id);
      if (t === undefined) continue;
      t.readAt = now;
      if (t.state === 'ready') ready.push(t);
      else {
        backfilling.push(t);
        void scheduler.startBackfill(team);
      }
    }
    if (loading.length > 0 || backfilling.length > 0 || uncopied.length > 0) {
      return this.partialOrLive(scope, ready, backfilling, [...backfilling.map((t) => t.id), ...uncopied], loading, now);
    }
    // a stale team is synced first (its head only: the full reconcile is the background's), within its budget — not one
    // backing off after a failed sync (it is answered from v1 below, without waiting for a try)
    const stale = ready.filter((t) => !this.fresh(t, now) && budget.fits(t) && scheduler.mayTry(t, now));
    await Promise.all(stale.map((t) => scheduler.syncTeam(t, false).catch(() => undefined)));
    // a team whose sync fails (no bound key reaches it any more, v1 refusing) is not answered from an old copy
    const failing = ready.filter((t) => !this.fresh(t, now) && scheduler.failure(t.id) !== undefined);
    if (failing.length > 0) {
      return { kind: 'live', reason: `the index of ${failing.map((t) => t.id).join(', ')} could not be synced: ${scheduler.failure(failing[0]!.id)?.message}` };
    }
    const snapshot = new ReplicaSnapshot(ready, config.QUERY_LIMIT_DEFAULT);
    return { kind: 'replica', snapshot, ageMs: snapshot.ageMs(now), synced: stale.map((t) => t.id), epoch: epochOf(ready), ...this.bounds(ready, now) };
  }

  /**
   * The reach's teams: those in memory, and the others asked of the store (`TeamRegistry.load`: two read at a time, the
   * rest queued), waited for until INDEX_LOAD_WAIT_MS after a read first asked for them — the reads of the first moments
   * after a restart wait a little (small teams are then answered whole), those after it not at all while the loads go on.
   * A team read is held by this read even if memory's bound sends it out again at once. A team the store never held
   * starts its backfill (`uncopied`). `loading`: the teams still being read, in the background.
   */
  private async loadReach(reach: readonly V1Team[], now: number): Promise<{ held: Map<string, TeamReplica>; loading: string[]; uncopied: string[] }> {
    const { registry, scheduler } = this.deps;
    const held = new Map<string, TeamReplica>();
    const uncopied: string[] = [];
    const pending = new Map<string, Promise<void>>();
    const failed: unknown[] = [];
    for (const team of reach) {
      const t = registry.get(team.id);
      if (t) {
        held.set(team.id, t);
        continue;
      }
      const p = registry.load(team.id).then((loaded) => {
        pending.delete(team.id);
        this.asked.delete(team.id);
        if (loaded) {
          loaded.readAt = Math.max(loaded.readAt, now);
          held.set(team.id, loaded);
        } else {
          uncopied.push(team.id);
          void scheduler.startBackfill(team);
        }
      }, (e: unknown) => {
        pending.delete(team.id);
        this.asked.delete(team.id);
        failed.push(e);
      });
      pending.set(team.id, p);
    }
    if (pending.size > 0) {
      const waitMs = this.loadWait(pending.keys(), now);
      if (waitMs > 0) {
        this.loadWaits++;
        await within(Promise.all(pending.values()), waitMs);
      }
    }
    // a store failure within the wait fails the read as before; one after it is the next read's to meet
    if (failed.length > 0) throw failed[0];
    return { held, loading: [...pending.keys()], uncopied: [...uncopied] };
  }

  /** How long a read may still wait for these loads: until INDEX_LOAD_WAIT_MS after the first read that asked for them. */
  private loadWait(teamIds: Iterable<string>, now: number): number {
    let until = 0;
    for (const id of teamIds) {
      let asked = this.asked.get(id);
      if (asked === undefined) this.asked.set(id, (asked = now));
      until = Math.max(until, asked + this.deps.config.INDEX_LOAD_WAIT_MS);
    }
    return until - now;
  }

  /**
   * Part of the reach is not held whole (being read from the store, or backfilled): the held teams answer when they
   * copy the read's whole scope (`scopeHeld`), the answer marked partial and never kept; otherwise live.
   */
  private partialOrLive(
    scope: ReadScope | undefined, ready: TeamReplica[], backfilling: TeamReplica[], unbackfilled: string[], loading: string[], now: number,
  ): ReadSource {
    const held = [...ready, ...backfilling];
    // a stale team of the scope is not synced here: a partial answer is only offered while nothing needs waiting for.
    // A project copied by a backfill under way is not synced before it ends: it answers while its walk started within
    // the answer's bound (one copied by an earlier run, or by another instance, not at all)
    const bounds = this.bounds(ready, now);
    const copiedAt = (t: TeamReplica, projectId: string) => this.deps.scheduler.copiedAt(t.id, projectId) ?? Number.NEGATIVE_INFINITY;
    const copied = (t: TeamReplica, projectId: string) => t.state === 'ready' || (t.projects.get(projectId)?.backfilled === true
      && now - copiedAt(t, projectId) <= bounds.boundMs);
    const partial: PartialState = {
      reason: loading.length > 0 ? 'teams of the reach are being read from the store' : 'teams of the reach are being backfilled',
      loading, backfilling: unbackfilled, projectsPending: pendingProjects(backfilling, copied),
    };
    if (scope && scopeHeld(scope, held, copied) && ready.every((t) => this.fresh(t, now))) {
      const snapshot = new ReplicaSnapshot(held, this.deps.config.QUERY_LIMIT_DEFAULT);
      // the age of what may answer: the teams held whole since their last sync, the copied projects since their walk
      let oldest = now;
      for (const t of ready) oldest = Math.min(oldest, t.syncedAt ?? 0);
      for (const t of backfilling) for (const id of t.projects.keys()) if (copied(t, id)) oldest = Math.min(oldest, copiedAt(t, id));
      return { kind: 'replica', snapshot, ageMs: now - oldest, synced: [], epoch: epochOf(held), ...bounds, partial };
    }
    const why = [loading.length > 0 ? `${loading.join(', ')} being read from the store` : '', unbackfilled.length > 0
      ? `${unbackfilled.join(', ')} not backfilled yet` : ''].filter((x) => x !== '').join('; ');
    return { kind: 'live', reason: `the index of ${why}`, partial };
  }

  /**
   * The same answer as `source` without waiting, when nothing needs waiting for (most reads of a team being read): the
   * key's reach trusted, the overlays read, every team of the reach in memory, backfilled and fresh. Undefined otherwise.
   */
  private sourceHeld(session: V1Session, now: number): ReadSource | undefined {
    const ready = this.heldTeams(session.partition, now);
    if (!ready) return undefined;
    const snapshot = new ReplicaSnapshot(ready, this.deps.config.QUERY_LIMIT_DEFAULT);
    return { kind: 'replica', snapshot, ageMs: snapshot.ageMs(now), synced: [], epoch: epochOf(ready), ...this.bounds(ready, now) };
  }

  /**
   * Whether the team may answer as it is: its last sync within its active bound (as the scheduler spaces its syncs), or —
   * its last sync not failed — while its budget is known spent for the minute: a sync before the read would wait for
   * the next minute, so the slow path answers from the team as it is too, and the fast path and the answer cache may
   * (issue 43, L6). A team whose sync failed is fresh only within its active bound (then answered live).
   */
  private fresh(t: TeamReplica, now: number): boolean {
    if (now - (t.syncedAt ?? 0) <= this.deps.scheduler.cadence(t, now).activeBoundMs) return true;
    return this.deps.budget.waitMs(t.id, now) > 0 && this.deps.scheduler.failure(t.id) === undefined;
  }

  /** The largest computed bounds of the teams a read covers: the teams' and their active projects'. */
  private bounds(teams: readonly TeamReplica[], now: number): { boundMs: number; activeBoundMs: number } {
    let b = this.deps.config.INDEX_MAX_STALENESS_MS;
    let a = b;
    for (const t of teams) {
      // (while the team's budget is known spent, the wait for the next minute: as ReplicaService.boundOf states it)
      const c = this.deps.scheduler.statedBounds(t, now);
      b = Math.max(b, c.boundMs);
      a = Math.max(a, c.activeBoundMs);
    }
    return { boundMs: b, activeBoundMs: a };
  }

  /** The epoch `source` would give a key's read now (its teams marked read), without building a snapshot. */
  epochHeld(partition: string, now: number): string | undefined {
    const ready = this.heldTeams(partition, now);
    return ready ? epochOf(ready) : undefined;
  }

  /** The teams a key's read finds held: reach trusted, overlays read, every team in memory, backfilled and fresh. */
  private heldTeams(partition: string, now: number): TeamReplica[] | undefined {
    const c = this.deps.config;
    if (this.deps.closed() || !this.deps.inputs.settled || c.KEY_RECHECK_MS <= 0) return undefined;
    const hit = this.reach.get(partition);
    if (!hit || now - hit.at >= c.KEY_RECHECK_MS) return undefined;
    const ready: TeamReplica[] = [];
    for (const team of hit.teams) {
      const t = this.deps.registry.get(team.id);
      if (!t || t.state !== 'ready' || !this.fresh(t, now)) return undefined;
      ready.push(t);
    }
    for (const t of ready) t.readAt = now;
    return ready;
  }
}

/** Resolves when `p` settles or after `ms`, whichever is first (`p` goes on). */
async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => { timer = setTimeout(resolve, ms); });
  try {
    await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}
