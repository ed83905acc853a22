import { LRUCache } from 'lru-cache';
import type { Config } from '../config/schema.js';
import type { Clock } from '../lib/clock.js';
import { ReplicaSnapshot } from './snapshot.js';
import type { V1Session } from '../v1/client.js';
import type { V1Team } from '../v1/schemas.js';
import type { SyncBudget } from './budget.js';
import { boundOf, epochOf, isFresh } from './freshness.js';
import type { RecordInputs } from './record-inputs.js';
import type { TeamRegistry } from './registry.js';
import type { SyncScheduler } from './scheduler.js';
import type { TeamReplica } from './team-replica.js';

/** Where a read is answered from, and why. */
export type ReadSource =
  | {
    readonly kind: 'index'; readonly snapshot: ReplicaSnapshot; readonly ageMs: number; readonly synced: readonly string[];
    /** What the snapshot's answers are computed from (its teams' versions, `epochOf`): the answer cache's validity. */
    readonly epoch: string;
    /** The staleness bound the answer keeps: the largest of its teams' computed bounds (`freshness.ts`). */
    readonly boundMs: number;
  }
  | { readonly kind: 'live'; readonly reason: string };

export interface ReadSourcesDeps {
  readonly config: Pick<Config, 'INDEX_MAX_STALENESS_MS' | 'INDEX_RECONCILE_MS' | 'KEY_RECHECK_MS' | 'QUERY_LIMIT_DEFAULT'>;
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
 * synced first, within its budget), else live v1 (a backfill under way, a sync failing). The key's reach is trusted
 * for KEY_RECHECK_MS; a read that needs nothing waited for is decided synchronously.
 */
export class ReadSources {
  private readonly reach = new LRUCache<string, { teams: V1Team[]; at: number }>({ max: 10_000 });

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

  /** Where this read is answered from (see `ReplicaService.source`). */
  async source(session: V1Session, now: number): Promise<ReadSource> {
    const { config, registry, scheduler, budget } = this.deps;
    const held = this.sourceHeld(session, now);
    if (held) return held;
    if (this.deps.closed()) return { kind: 'live', reason: 'the index is shut down' };
    const reach = await this.reachOf(session);
    await this.deps.inputs.ready;
    // every reachable team, not only those the filter names: total_count counts everything the key reaches
    const ready: TeamReplica[] = [];
    const pending: string[] = [];
    for (const team of reach) {
      const t = await registry.load(team.id);
      if (t) t.readAt = now;
      if (t?.state === 'ready') ready.push(t);
      else {
        pending.push(team.id);
        scheduler.startBackfill(team);
      }
    }
    if (pending.length > 0) return { kind: 'live', reason: `the index of ${pending.join(', ')} is not backfilled yet` };
    // a stale team is synced first (its head only: the full reconcile is the background's), within its budget
    const stale = ready.filter((t) => !this.fresh(t, now) && budget.fits(t));
    await Promise.all(stale.map((t) => scheduler.syncTeam(t, false).catch(() => undefined)));
    // a team whose sync fails (no bound key reaches it any more, v1 refusing) is not answered from an old copy
    const failing = ready.filter((t) => !this.fresh(t, now) && scheduler.failure(t.id) !== undefined);
    if (failing.length > 0) {
      return { kind: 'live', reason: `the index of ${failing.map((t) => t.id).join(', ')} could not be synced: ${scheduler.failure(failing[0]!.id)?.message}` };
    }
    const snapshot = new ReplicaSnapshot(ready, config.QUERY_LIMIT_DEFAULT);
    return { kind: 'index', snapshot, ageMs: snapshot.ageMs(now), synced: stale.map((t) => t.id), epoch: epochOf(ready), boundMs: this.boundOf(ready, now) };
  }

  /**
   * The same answer as `source` without waiting, when nothing needs waiting for (most reads of a team being read): the
   * key's reach trusted, the overlays read, every team of the reach in memory, backfilled and fresh. Undefined otherwise.
   */
  private sourceHeld(session: V1Session, now: number): ReadSource | undefined {
    const ready = this.heldTeams(session.partition, now);
    if (!ready) return undefined;
    const snapshot = new ReplicaSnapshot(ready, this.deps.config.QUERY_LIMIT_DEFAULT);
    return { kind: 'index', snapshot, ageMs: snapshot.ageMs(now), synced: [], epoch: epochOf(ready), boundMs: this.boundOf(ready, now) };
  }

  /** Whether the team may answer as it is: its last sync within its computed bound. */
  private fresh(t: TeamReplica, now: number): boolean {
    return isFresh(this.deps.config, t, now, this.deps.budget.callsPerMin(t.id));
  }

  /** The largest computed bound of the teams a read covers. */
  private boundOf(teams: readonly TeamReplica[], now: number): number {
    let b = this.deps.config.INDEX_MAX_STALENESS_MS;
    for (const t of teams) b = Math.max(b, boundOf(this.deps.config, t, now, this.deps.budget.callsPerMin(t.id)));
    return b;
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
