import type { Config } from '../../config/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { TeamReaders } from '../../live/team-readers.js';
import type { Peers } from '../holding/peers.js';
import type { Spend, SyncBudget } from './budget.js';
import { templatesRotate } from './freshness.js';
import type { HeldLease } from './lease.js';
import { templatesDue } from './rotation.js';
import type { SyncChanges, TeamSync } from './sync.js';
import { withReader } from './with-reader.js';
import type { TeamReplica } from '../team/team-replica.js';

/** What a full sync run alone takes from the scheduler: its lease, its end, its failures, the team's interval. */
export interface FullSyncWalk {
  take(teamId: string, spend: Spend): Promise<HeldLease | undefined>;
  end(teamId: string, spend: Spend, lease: HeldLease | undefined): Promise<void>;
  fail(teamId: string, e: unknown): void;
  intervalMs(t: TeamReplica, now: number): number;
}

/**
 * Each team's periodic full sync (the team, its members, the templates due: every INDEX_RECONCILE_MS, counted from this
 * instance's last). Without a rotation of templates it rides on the next regular sync once due. With one
 * (`templatesRotate`), it runs at the first tick past its due time, alone when no regular sync is due then (`runAlone`;
 * by the instance that ran the team's last sync: the scheduler's to know):
 * reserved as what it reads — exactly what `fullCallsPerMin` keeps aside — the team's sync mark, heads and cadence
 * left alone. Riding on the next regular sync instead, up to an interval later, it read the templates of a longer
 * window than kept aside (review M1 of issue 43); run on time as one more whole sync (d21b6e8, reverted), its project
 * list, heads and re-poll were calls nothing kept aside.
 */
export class FullSyncs {
  private readonly at = new Map<string, number>();
  private readonly alone = new Map<string, Promise<void>>();
  /** Until when a team's full sync alone waits, after it found another instance holding the lease. */
  private readonly heldUntil = new Map<string, number>();

  constructor(
    private readonly deps: {
      readonly config: Pick<Config, 'INDEX_RECONCILE_MS' | 'TEMPLATES_RECONCILE_MS'>;
      readonly clock: Clock;
      readonly budget: SyncBudget;
      readonly readers: TeamReaders;
      readonly sync: TeamSync;
      readonly peers: Peers;
    },
    private readonly walk: FullSyncWalk,
  ) {}

  /** This instance's last full sync of the team (null: none yet). */
  lastAt(teamId: string): number | null {
    return this.at.get(teamId) ?? null;
  }

  /** When the team's next full sync falls due. */
  dueAt(teamId: string): number {
    return (this.at.get(teamId) ?? 0) + this.deps.config.INDEX_RECONCILE_MS;
  }

  /** A full sync of the team (or its backfill) that started at `startedAt` is done. */
  done(teamId: string, startedAt: number): void {
    this.at.set(teamId, startedAt);
  }

  /** Whether the team's full sync should run alone at `now` (no regular sync being due is the caller's to know). */
  aloneDue(teamId: string, now: number): boolean {
    return templatesRotate(this.deps.config) && now >= this.dueAt(teamId) && now >= (this.heldUntil.get(teamId) ?? 0);
  }

  /** The team's full sync running alone here, if one is. */
  running(teamId: string): Promise<void> | undefined {
    return this.alone.get(teamId);
  }

  pending(): Promise<void>[] {
    return [...this.alone.values()];
  }

  /** Runs the team's full sync alone (its failure is the scheduler's: recorded there). */
  runAlone(t: TeamReplica): Promise<void> {
    const p = this.run(t).catch(() => undefined).finally(() => this.alone.delete(t.id));
    this.alone.set(t.id, p);
    return p;
  }

  private async run(t: TeamReplica): Promise<void> {
    const { clock, budget, config } = this.deps;
    const spend = budget.open(t.id);
    const lease = await this.walk.take(t.id, spend);
    const started = clock.now();
    if (!lease) {
      // another instance walks the team: tried again an interval later, not at every tick
      this.heldUntil.set(t.id, started + this.walk.intervalMs(t, started));
      return;
    }
    let done = false;
    try {
      const due = templatesDue(t.projects.keys(), config.TEMPLATES_RECONCILE_MS, this.lastAt(t.id), started);
      const changes: SyncChanges = { renders: [], renew: async () => lease.check() };
      let spent = false;
      const ok = await withReader(this.deps.readers, t.id, spend, async (s) => {
        if (!spend.reserved && !(await budget.reserve(t, spend, due.length + 2, 0))) {
          spent = true;
          return;
        }
        await this.deps.sync.full(t, s, due, changes);
      });
      if (spent) return;
      if (!ok) throw new Error('no bound key reaches the team');
      this.done(t.id, started);
      done = true;
    } catch (e) {
      this.walk.fail(t.id, e);
      throw e;
    } finally {
      await this.walk.end(t.id, spend, lease);
    }
    // the team's row (members) is read again by the other instances
    if (done) await this.deps.peers.publishTeam(t.id);
  }
}
