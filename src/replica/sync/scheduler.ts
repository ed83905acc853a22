import type { Logger } from 'pino';
import type { Config } from '../../config/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { TeamReaders } from '../../live/team-readers.js';
import type { ReplicaStore } from '../../store/replica-store.js';
import type { RenderDataStore } from '../../store/render-extras.js';
import type { V1Team } from '../../v1/schemas.js';
import type { Spend, SyncBudget } from './budget.js';
import { HeadDeadlines } from './deadlines.js';
import { SyncFailures, type SyncFailure } from './failures.js';
import { spread } from './minute-room.js';
import {
  activityOf, cadenceOf, dueAfter, SCHEDULER_TICK_MS, syncCallsOf, syncCallsWith, type Cadence,
} from './freshness.js';
import type { HeldLease, SyncLeases } from './lease.js';
import type { Peers } from '../holding/peers.js';
import type { TeamRegistry } from '../holding/registry.js';
import type { ReceiverHealth } from './receiver-health.js';
import { headsDue, templatesDue } from './rotation.js';
import { SyncSpreads } from './spreads.js';
import { FullSyncs } from './full-sync.js';
import type { TeamSync, SyncChanges } from './sync.js';
import { withReader } from './with-reader.js';
import type { TeamReplica } from '../team/team-replica.js';

export interface SyncSchedulerDeps {
  readonly config: Pick<Config, 'INDEX_ACTIVE_MS' | 'INDEX_MAX_STALENESS_MS' | 'INDEX_RECONCILE_MS' | 'WEBHOOK_RECONCILE_MS' | 'TEMPLATES_RECONCILE_MS'>;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly store: ReplicaStore;
  readonly renderData: RenderDataStore;
  readonly readers: TeamReaders;
  readonly registry: TeamRegistry;
  readonly peers: Peers;
  readonly budget: SyncBudget;
  /** The team's sync lease, renewed by a heartbeat (INDEX_LEASE_HEARTBEAT_MS). */
  readonly leases: SyncLeases;
  readonly sync: TeamSync;
  /** This instance, as its leases name it. */
  readonly holder: string;
  /** True once the replica is shut down. */
  readonly closed: () => boolean;
  /** The webhook receivers' health: the windows of possibly lost deliveries each team is walked again for. */
  readonly health?: Pick<ReceiverHealth, 'due' | 'caughtUp'>;
}

/**
 * When a team is walked: its backfill (started by its first read, resumed from the store's checkpoints), its syncs
 * (coalesced; the periodic full reconcile), the background tick over the teams being read, each under the team's lease
 * (one instance at a time) with a key that reaches it; and why the last one failed.
 */
export class SyncScheduler {
  private readonly syncing = new Map<string, Promise<void>>();
  private readonly backfilling = new Map<string, Promise<void>>();
  /** Why each team's last sync failed, when, and how many failed in a row: its back-off. */
  private readonly failures = new SyncFailures();
  /** A background sync that found another instance holding the team's lease: that one's announcement (a joined read waits). */
  private readonly heldElsewhere = new Map<string, Promise<void>>();
  private readonly deadlines = new HeadDeadlines();
  /** Each team's last sync mark set here (a sync or backfill of this instance): whether the team's last sync was this one's. */
  private readonly syncedHere = new Map<string, number | null>();
  /** Each team's last sync's duration here (ms): when its next is due (`dueAfter`). */
  private readonly lastMs = new Map<string, number>();
  private readonly spreads: SyncSpreads;
  /** Each team's periodic full sync: when it falls due, and run alone when the templates rotate. */
  private readonly fulls: FullSyncs;

  constructor(private readonly deps: SyncSchedulerDeps) {
    this.spreads = new SyncSpreads(deps.config, this.deadlines);
    this.fulls = new FullSyncs(deps, {
      take: (teamId, spend) => this.take(teamId, spend),
      end: (teamId, spend, lease) => this.end(teamId, spend, lease),
      fail: (teamId, e) => this.fail(teamId, e),
      intervalMs: (t, now) => this.cadence(t, now).intervalMs,
    });
  }

  /** Whether the team is being synced or backfilled here. */
  busy(teamId: string): boolean {
    return this.syncing.has(teamId) || this.backfilling.has(teamId) || this.fulls.running(teamId) !== undefined;
  }

  /** When this instance's backfill of the team under way started walking the project (`TeamSync.copiedAt`). */
  copiedAt(teamId: string, projectId: string): number | undefined {
    return this.deps.sync.copiedAt(teamId, projectId);
  }

  /** Why the team's last sync failed (cleared by the next that succeeds). */
  failure(teamId: string): SyncFailure | undefined {
    return this.failures.get(teamId);
  }

  /**
   * Whether the team may be synced now: not while it backs off after a failed sync (`retryAfterMs`) — neither by the
   * background nor by a read, which answers it from v1 meanwhile (during an outage every read of it tried a sync first).
   */
  mayTry(t: TeamReplica, now: number): boolean {
    return !this.failures.has(t.id) || this.failures.mayTry(t.id, cadenceOf(this.deps.config, t, now, this.deps.budget.callsPerMin(t.id)).intervalMs, now);
  }

  /** Walks under way (close waits for them). */
  pending(): Promise<void>[] {
    return [...this.syncing.values(), ...this.backfilling.values(), ...this.fulls.pending()];
  }

  /** Starts (or joins) the team's backfill in the background; resumes from the store's checkpoints. */
  startBackfill(team: V1Team): Promise<void> {
    let p = this.backfilling.get(team.id);
    if (p) return p;
    const failed = this.failures.get(team.id);
    if (failed && this.deps.clock.now() - failed.at < this.deps.config.INDEX_MAX_STALENESS_MS) return Promise.resolve();
    p = this.backfill(team).finally(() => this.backfilling.delete(team.id));
    this.backfilling.set(team.id, p);
    return p;
  }

  private async backfill(team: V1Team): Promise<void> {
    const { store, registry, logger, clock, budget } = this.deps;
    // a backfill's calls are counted against the team's budget, never refused by it (the team has no copy to answer from)
    const spend = budget.open(team.id);
    let lease: HeldLease | undefined;
    let done: TeamReplica | undefined;
    try {
      lease = await this.take(team.id, spend);
      if (!lease) {
        const row = await store.team(team.id);
        if (row) return; // another instance is at it; this one follows its changes
        await store.putTeam(team, []);
        lease = await this.take(team.id, spend);
        if (!lease) return;
      }
      const t = (await registry.load(team.id)) ?? registry.adopt(team);
      logger.info({ team: team.id }, 'render index: backfill started');
      const held = lease;
      const changes: SyncChanges = { renders: [], renew: async () => held.check() };
      const ok = await withReader(this.deps.readers, team.id, spend, (s) => this.deps.sync.backfill(t, s, changes));
      if (!ok) throw new Error('no bound key reaches the team');
      this.fulls.done(team.id, t.backfilledAt ?? clock.now());
      this.syncedHere.set(team.id, t.syncedAt);
      this.failures.clear(team.id);
      t.compact();
      registry.evict(team.id); // memory grew by a whole team
      logger.info({ team: team.id, renders: t.size, projects: t.projects.size }, 'render index: backfill done');
      await this.deps.peers.publishTeam(team.id);
      done = t;
    } catch (e) {
      this.fail(team.id, e);
    } finally {
      await this.end(team.id, spend, lease);
    }
    // a backfill's calls may have spent the minute's budget: the team's syncs then wait, and its bound says so
    if (done) await budget.noteSpent(team.id, syncCallsOf(done), spend.key).catch(() => undefined);
  }

  /**
   * The team's lease, its heartbeat counting the walk's calls so far in the store; `sync`: a sync's start recorded with
   * the take (for every instance to see; a sync that then finds the minute's budget spent leaves it recorded).
   */
  private take(teamId: string, spend: Spend, sync = false): Promise<HeldLease | undefined> {
    return this.deps.leases.take(teamId, { sync, beat: () => this.deps.budget.flush(spend) });
  }

  /**
   * A walk is over: its calls settled in the store, its lease given back — `syncedAt`, a sync that started then and
   * completed: the team marked synced as of it with the release (one statement; alone when the lease was lost meanwhile).
   */
  private async end(teamId: string, spend: Spend, lease: HeldLease | undefined, syncedAt?: number): Promise<void> {
    await this.deps.budget.settle(spend).catch(() => undefined);
    const marked = await (lease?.release(syncedAt) ?? Promise.resolve(false)).catch(() => false);
    if (syncedAt !== undefined && !marked) await this.deps.store.markSynced(teamId, syncedAt);
  }

  /**
   * One incremental sync of a team (coalesced: concurrent callers share it), under the team's lease. `allowFull`: the
   * background may make it the periodic full reconcile; a read (false) never waits for one, and waits for another
   * instance's sync of the team instead of running one beside it. `every`: the head of every project is checked, the
   * quiet ones' rotation aside (the command line's `index sync`).
   */
  syncTeam(t: TeamReplica, allowFull = true, every = false): Promise<void> {
    let p = this.syncing.get(t.id);
    // (a read joining a background sync that found the lease taken then waits for the holder, as its own sync would)
    if (p) return allowFull ? p : p.then(() => this.holderDone(t));
    // (after a full sync running alone: one walk of the team at a time here)
    const full = this.fulls.running(t.id);
    p = (full ? full.then(() => this.runSync(t, allowFull, every)) : this.runSync(t, allowFull, every)).finally(() => this.syncing.delete(t.id));
    this.syncing.set(t.id, p);
    return p;
  }

  /** After a joined sync: the holder's announcement when that sync found another instance holding the lease, its row read again. */
  private async holderDone(t: TeamReplica): Promise<void> {
    const heard = this.heldElsewhere.get(t.id);
    if (!heard) return;
    await heard;
    await this.deps.registry.refreshRow(t);
  }

  private async runSync(t: TeamReplica, allowFull: boolean, every: boolean): Promise<void> {
    const { clock, budget, config } = this.deps;
    this.heldElsewhere.delete(t.id); // (an earlier sync's: a read joining this one waits for this one's holder only)
    // a backfill of the team under way holds its lease: the sync waits for it rather than share the lease
    const backfill = this.backfilling.get(t.id);
    if (backfill) {
      await backfill;
      return;
    }
    const spend = budget.open(t.id);
    // one instance syncs a team at a time: a read elsewhere takes the holder's work (its changes come on the bus); the
    // sync's start is recorded with the lease
    const lease = await this.take(t.id, spend, true);
    if (!lease) {
      // another instance syncs it: a read goes through that sync (its end, announced on the bus, waited for at most a
      // heartbeat or INDEX_MAX_STALENESS_MS, whichever is shorter), then takes its sync time
      // (listened for from now: the holder may announce before a read joins the background's sync)
      const heard = this.deps.peers.announced(t.id, Math.min(this.deps.leases.heartbeatMs, this.deps.config.INDEX_MAX_STALENESS_MS));
      if (allowFull) {
        this.heldElsewhere.set(t.id, heard);
      } else await heard;
      await this.deps.registry.refreshRow(t);
      return;
    }
    // the sync's bookkeeping is three statements whatever it finds (issue 43): the lease taken with its start, the calls
    // reserved for the team and the key, the lease given back with the sync mark; then the announcement (a NOTIFY)
    let done: number | undefined;
    let catchUp: ReturnType<NonNullable<SyncSchedulerDeps['health']>['due']> = null;
    const changes: SyncChanges = { renders: [], renew: async () => lease.check() };
    try {
      const started = clock.now();
      // the bound readers are promised now: what the heads this sync checks owe next, even if its walk lengthens it
      const stated = this.cadence(t, started).boundMs;
      const full = allowFull && started >= this.fulls.dueAt(t.id);
      // (a full sync reads the templates due since this instance's last: TEMPLATES_RECONCILE_MS; `every`, all of them)
      const templates = !full ? undefined
        : new Set(every ? t.projects.keys() : templatesDue(t.projects.keys(), config.TEMPLATES_RECONCILE_MS, this.fulls.lastAt(t.id), started));
      // deliveries may have been lost in a window (no receiver up, refusals): every head walked and every render not
      // yet final read again, the window then marked caught up
      catchUp = this.deps.health?.due(t.id, started) ?? null;
      const walkAll = every || catchUp !== null;
      let spent = false;
      let plan: { heads: string[]; calls: number } | undefined;
      const ok = await withReader(this.deps.readers, t.id, spend, async (s) => {
        // the calls it needs reserved in the store first, for the team and the key, shared by every instance
        if (!spend.reserved) {
          plan = this.plan(t, started, walkAll);
          if (!(await budget.reserve(t, spend, templates ? templates.size + 2 : 0, plan.calls))) {
            spent = true;
            return;
          }
        }
        await this.deps.sync.sync(t, s, templates, changes, plan?.heads, started);
      });
      if (spent) return;
      if (!ok) throw new Error('no bound key reaches the team');
      if (full) this.fulls.done(t.id, started);
      this.deadlines.checked(t, plan?.heads ?? [...t.projects.keys()], started, Math.min(stated, this.cadence(t, started).boundMs));
      this.lastMs.set(t.id, Math.max(0, clock.now() - started));
      done = started;
      this.syncedHere.set(t.id, t.syncedAt);
    } catch (e) {
      this.fail(t.id, e);
      throw e;
    } finally {
      await this.end(t.id, spend, lease, done);
    }
    if (done === undefined) return;
    try {
      this.failures.clear(t.id);
      if (catchUp) await this.deps.health?.caughtUp(t.id, catchUp);
      // announced once the store has the sync mark: peers read the team's row again
      await this.deps.peers.publishRenders(t.id, changes.renders);
      await this.deps.peers.publishTeam(t.id);
    } catch (e) {
      this.fail(t.id, e);
      throw e;
    }
  }

  /**
   * The heads one sync of the team checks (its active projects' first, then the quiet ones due in its rotation since
   * its last sync, on any instance; `every`: all of them) and the calls that takes.
   */
  private plan(t: TeamReplica, now: number, every: boolean): { heads: string[]; calls: number } {
    const cadence = this.cadence(t, now);
    const { active, shape } = activityOf(t, now, this.deps.config.INDEX_ACTIVE_MS);
    const heads = headsDue(t.projects.keys(), active, every ? 0 : cadence.cycleMs, t.syncedAt, now);
    // and the projects that would owe a check before the next sync (a cadence changed since their last: `deadlines.ts`)
    if (heads.length < shape.projects) {
      const planned = new Set(heads);
      for (const id of this.deadlines.owedBy(t, now + cadence.intervalMs + SCHEDULER_TICK_MS)) if (!planned.has(id)) heads.push(id);
    }
    return { heads, calls: syncCallsWith(heads.length, shape.projects, shape.moving) };
  }

  /**
   * The cadence the team is synced at `now` (`cadenceOf`), its syncs spread over what its budget has left of the minute
   * when that is less than the rest of the minute needs (`roomSpacing`). Not spread: no room learnt this minute, a
   * minute known spent (the wait is stated on top: `statedBounds`), a team whose last sync failed (it counts stale, and
   * is answered live).
   */
  cadence(t: TeamReplica, now: number): Cadence {
    const callsPerMin = this.deps.budget.callsPerMin(t.id);
    const cadence = cadenceOf(this.deps.config, t, now, callsPerMin);
    return spread(cadence, this.spreadOf(t, now, cadence, callsPerMin));
  }

  /** How much further apart than its cadence's the team's syncs run now (`cadence`; 0: not spread). */
  private spreadOf(t: TeamReplica, now: number, cadence: Cadence, callsPerMin: number): number {
    const room = this.deps.budget.room(t.id, now);
    if (room === undefined || t.syncedAt === null || this.deps.budget.waitMs(t.id, now) > 0 || this.failures.has(t.id)) return 0;
    const facts = { lastFull: this.fulls.lastAt(t.id), fullDueAt: this.fulls.dueAt(t.id), lastMs: this.lastMs.get(t.id) };
    return this.spreads.ms(t, now, cadence, room, callsPerMin, facts);
  }

  /**
   * The bounds the team states at `now`: its cadence's, and while its budget is known spent the wait for the next minute
   * on top — never less than the age a reader may find it at before the sync the minute's end allows.
   */
  statedBounds(t: TeamReplica, now: number): { readonly boundMs: number; readonly activeBoundMs: number } {
    const c = this.cadence(t, now);
    const wait = this.deps.budget.waitMs(t.id, now);
    if (wait <= 0) return c;
    const until = now + wait - (t.syncedAt ?? now) + SCHEDULER_TICK_MS;
    return { boundMs: Math.max(c.boundMs + wait, until), activeBoundMs: Math.max(c.activeBoundMs + wait, until) };
  }

  /** The bound the team states now, for its projects' deadlines (a sync elsewhere counted as the rotation's checks). */
  private owe(t: TeamReplica, now: number, cadence: Cadence): void {
    const { active } = activityOf(t, now, this.deps.config.INDEX_ACTIVE_MS);
    this.deadlines.stated(t, now, cadence.boundMs, (from, to) => headsDue(t.projects.keys(), active, cadence.cycleMs, from, to));
  }

  private fail(teamId: string, e: unknown): void {
    if (!this.deps.closed()) this.failures.add(teamId, e, this.deps.clock.now(), this.deps.logger);
  }

  /** The background sync: every team read within INDEX_ACTIVE_MS whose sync is due and within its budget. */
  async tick(): Promise<void> {
    if (this.deps.closed()) return;
    const { clock, config } = this.deps;
    const now = clock.now();
    const due: Promise<void>[] = [];
    for (const t of this.deps.registry.values()) {
      if (t.state !== 'ready' || now - t.readAt > config.INDEX_ACTIVE_MS || this.syncing.has(t.id) || this.fulls.running(t.id)) continue;
      // as late as its bound allows, ended before a reader finds it stale (`dueAfter`), no more often than its budget
      // allows; at once when deliveries may have been lost, or a project's check would come later than a bound stated
      const catchUp = this.deps.health?.due(t.id, now) ?? null;
      const callsPerMin = this.deps.budget.callsPerMin(t.id);
      const plain = cadenceOf(config, t, now, callsPerMin);
      const spreadMs = this.spreadOf(t, now, plain, callsPerMin);
      this.owe(t, now, spread(plain, spreadMs));
      const owed = this.deadlines.earliest(t) <= now + SCHEDULER_TICK_MS;
      // (the next sync the full one — longer than the last —: due at the interval, the old rule; both spread alike over
      // what the minute has left)
      const fullAt = this.fulls.dueAt(t.id);
      const wait = spreadMs + dueAfter(config, t, now, callsPerMin, now >= fullAt ? undefined : this.lastMs.get(t.id));
      const regular = catchUp !== null || owed || now - (t.syncedAt ?? 0) >= wait;
      // a full sync due between two regular ones runs alone when the templates rotate, by the instance that ran the team's
      // last sync (each instance counts its own full syncs: another one syncing the team makes them); otherwise the next
      // regular sync is the full one
      const full = !regular && this.fulls.aloneDue(t.id, now) && this.syncedHere.get(t.id) === t.syncedAt;
      if ((!regular && !full) || !this.deps.budget.fits(t)) continue;
      // a team whose syncs fail is tried again after a back-off, whatever is owed (it counts stale: reads go to v1)
      if (!this.mayTry(t, now)) continue;
      due.push(regular ? this.syncTeam(t, true).catch(() => undefined) : this.fulls.runAlone(t));
    }
    await Promise.all(due);
  }

  /** Syncs (or backfills) the given teams (by id) now, waiting for the end (the CLI's `index sync`). */
  async syncNow(teamIds: readonly string[]): Promise<void> {
    for (const id of teamIds) {
      // the backfill's first step reads the team itself; this stands in until then
      const team: V1Team = (await this.deps.store.team(id))?.team ?? { id, name: id, account_id: 'acc_unknown', role: null, created_at: 0 };
      const t = await this.deps.registry.load(team.id);
      if (!t || t.state !== 'ready') {
        await this.startBackfill(team);
        const failed = this.failures.get(team.id);
        if (failed) throw new Error(`${team.id}: ${failed.message}`);
        continue;
      }
      await this.syncTeam(t, true, true);
    }
  }
}
