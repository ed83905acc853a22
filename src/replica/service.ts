import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Kysely } from 'kysely';
import type { Config } from '../config/schema.js';
import type { Mappings } from '../config/mappings.js';
import type { Clock } from '../lib/clock.js';
import type { ChangeBus } from '../store/changes.js';
import type { OverlayStore, RenderDataStore } from '../store/render-extras.js';
import type { Database } from '../store/schema.js';
import type { IdTranslator } from '../translate/ids.js';
import type { TeamReaders } from '../live/team-readers.js';
import type { Rec } from '../query/compile.js';
import type { ReplicaSnapshot } from './reads/snapshot.js';
import { ReplicaStore } from '../store/replica-store.js';
import { SyncCallStore } from '../store/sync-calls.js';
import { WebhookHealthStore } from '../store/webhook-health.js';
import type { V1Session } from '../v1/client.js';
import type { V1Render, V1Team } from '../v1/schemas.js';
import { AnswerCache } from './reads/answer-cache.js';
import { SyncBudget } from './sync/budget.js';
import { activityOf, boundFrom, SCHEDULER_TICK_MS } from './sync/freshness.js';
import { SyncLeases } from './sync/lease.js';
import { ReceiverHealth } from './sync/receiver-health.js';
import { OutputRefresh, type RefreshWalk } from './reads/output-refresh.js';
import { Peers } from './holding/peers.js';
import { ReadSources, type ReadSource } from './reads/read-source.js';
import type { ReadScope } from './reads/read-scope.js';
import { RecordInputs } from './holding/record-inputs.js';
import { TeamRegistry } from './holding/registry.js';
import { SyncScheduler } from './sync/scheduler.js';
import { ages, rendersIn, teamStatus, type StatusRow, type TeamStatus } from './reads/status.js';
import { TeamSync } from './sync/sync.js';
import type { TeamReplica } from './team/team-replica.js';

export type { ReadSource } from './reads/read-source.js';
export type { PartialState, ReadScope } from './reads/read-scope.js';
export type { TeamStatus } from './reads/status.js';

/** What the replica uses, given by the composition root (src/deps.ts). */
export interface ReplicaServiceDeps {
  readonly config: Pick<Config, 'ANSWER_CACHE_MB' | 'FANOUT_CONCURRENCY' | 'INDEX_ACTIVE_MS' | 'INDEX_MAX_STALENESS_MS' | 'INDEX_MEMORY_MB'
    | 'INDEX_RECONCILE_MS' | 'INDEX_SYNC_CALLS_PER_MIN' | 'INDEX_SYNC_CALLS_PER_KEY_PER_MIN' | 'INDEX_LEASE_HEARTBEAT_MS' | 'INDEX_SYNC_CONCURRENCY'
    | 'KEY_RECHECK_MS' | 'QUERY_LIMIT_DEFAULT' | 'SIGNED_URL_TTL_MS' | 'V1_TIMESTAMP_UNIT' | 'INDEX_LOAD_WAIT_MS' | 'WEBHOOK_RECONCILE_MS'
    | 'TEMPLATES_RECONCILE_MS'
    | 'WEBHOOK_RETRY_SPAN_MS' | 'webhookSecrets'>;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly bus: ChangeBus;
  readonly db: { readonly kysely: Kysely<Database> };
  readonly ids: IdTranslator;
  readonly mappings: Mappings;
  readonly overlays: OverlayStore;
  readonly renderData: RenderDataStore;
  readonly credits: Config['renderCredits'];
}

/**
 * The replica: per team, a copy of what any legacy read needs (renders, projects, templates, members), kept in the
 * store and in memory for the teams being read, so a read costs O(answer) and no v1 call while the team is fresh. Fed
 * by the gateway's own writes, by webhooks, and by a background sync of the teams being read (their lists' heads,
 * renders not yet final, project lists) within INDEX_MAX_STALENESS_MS and a per-team call budget. Several instances
 * share the store: one syncs a team at a time (a lease), the others follow its changes (bus).
 *
 * This class composes the parts, each with one job: the teams in memory (`TeamRegistry`, with eviction), what records
 * are built with (`RecordInputs`), the other instances (`Peers`), when teams are walked (`SyncScheduler`, `SyncBudget`),
 * which source answers a read (`ReadSources`, `freshness.ts`), signed outputs (`OutputRefresh`) and the operators' view
 * (`status.ts`).
 */
export class ReplicaService {
  /** This instance, as its leases and announcements name it. */
  readonly holder = randomUUID();
  readonly store: ReplicaStore;
  /** Serialised answers of replica reads, valid while the teams they were read from keep their versions. */
  readonly answers: AnswerCache;
  private readonly registry: TeamRegistry;
  private readonly inputs: RecordInputs;
  private readonly peers: Peers;
  private readonly budget: SyncBudget;
  private readonly leases: SyncLeases;
  private readonly scheduler: SyncScheduler;
  private readonly sources: ReadSources;
  private readonly outputs: OutputRefresh;
  /** The webhook receivers of every instance and what follows for each team's trust. */
  readonly health: ReceiverHealth;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly deps: ReplicaServiceDeps, readers: TeamReaders) {
    const { config, logger, clock, bus } = deps;
    const closed = () => this.closed;
    const busy = (teamId: string) => this.scheduler.busy(teamId);
    this.store = new ReplicaStore(deps.db.kysely, () => clock.now());
    this.answers = new AnswerCache(config.ANSWER_CACHE_MB * 1024 * 1024);
    this.inputs = new RecordInputs({
      logger, bus, ids: deps.ids, mappings: deps.mappings, overlays: deps.overlays, timeUnit: config.V1_TIMESTAMP_UNIT, credits: deps.credits,
      teams: () => this.registry.values(),
    });
    const sync = new TeamSync({
      store: this.store, clock, logger, concurrency: config.INDEX_SYNC_CONCURRENCY, signedUrlTtlMs: config.SIGNED_URL_TTL_MS, aborted: closed,
    });
    this.health = new ReceiverHealth({
      store: new WebhookHealthStore(deps.db.kysely), clock, logger, holder: this.holder, registered: new Set(Object.keys(config.webhookSecrets)),
      reconcileMs: config.WEBHOOK_RECONCILE_MS, retrySpanMs: config.WEBHOOK_RETRY_SPAN_MS, beatMs: config.INDEX_LEASE_HEARTBEAT_MS,
    });
    this.registry = new TeamRegistry({
      store: this.store, clock, inputs: this.inputs, eviction: { maxBytes: config.INDEX_MEMORY_MB * 1024 * 1024, busy, logger }, trust: this.health,
    });
    this.peers = new Peers({ holder: this.holder, bus, logger, store: this.store, renderData: deps.renderData, registry: this.registry, busy });
    const limits = { perTeam: config.INDEX_SYNC_CALLS_PER_MIN, perKey: config.INDEX_SYNC_CALLS_PER_KEY_PER_MIN };
    this.budget = new SyncBudget(clock, limits, new SyncCallStore(deps.db.kysely));
    this.leases = new SyncLeases(this.store, this.holder, config.INDEX_LEASE_HEARTBEAT_MS);
    this.scheduler = new SyncScheduler({
      config, logger, clock, store: this.store, renderData: deps.renderData, readers, registry: this.registry, peers: this.peers,
      budget: this.budget, leases: this.leases, sync, holder: this.holder, closed, health: this.health,
    });
    this.sources = new ReadSources({
      config, clock, registry: this.registry, scheduler: this.scheduler, budget: this.budget, inputs: this.inputs, closed,
    });
    this.outputs = new OutputRefresh({ config, clock, store: this.store, sync, peers: this.peers });
    this.peers.listen();
    this.inputs.listen();
    this.peers.listenData();
  }

  /** Starts the background sync of the teams being read. */
  start(tickMs = SCHEDULER_TICK_MS): void {
    this.timer ??= setInterval(() => void this.tick(), tickMs).unref();
  }

  /**
   * Before the first read: the window no instance's webhook receiver answered in is recorded (the teams trusting their
   * webhooks are walked again for it), and this receiver recorded as answering.
   */
  openReceivers(): Promise<void> {
    return this.health.open();
  }

  /** Stops the background sync and waits for the syncs under way to stop at their next step. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.allSettled([...this.scheduler.pending(), ...this.registry.pending(), ...this.peers.pending()]);
    await this.health.close();
  }

  /** Resolves once every change heard from other instances so far is applied (tests, the CLI). */
  idle(): Promise<void> {
    return this.peers.idle();
  }

  // ------------------------------------------------------------------ the read path

  /** The teams a key reaches (GET /v1/teams with the request's own key), trusted for KEY_RECHECK_MS. */
  reachOf(session: V1Session): Promise<V1Team[]> {
    return this.sources.reachOf(session);
  }

  /** v1 refused a key (a 401 somewhere): every key's reach is asked again on its next read (rare; cheap). */
  forgetReach(): void {
    this.sources.forgetReach();
  }

  /**
   * Where this read is answered from: the replica when every team in scope is backfilled (a stale one is synced first,
   * within its budget; N readers of one stale team wait for one sync); while part of the reach is read from the store or
   * backfilled, the teams held when they copy the whole `scope` (partial), else live. `now` is the request's moment (its
   * context's): freshness is judged at the same time as the rest of the request.
   */
  source(session: V1Session, now = this.deps.clock.now(), scope?: ReadScope): Promise<ReadSource> {
    return this.sources.source(session, now, scope);
  }

  /** Reads that waited (at most INDEX_LOAD_WAIT_MS after the first to ask) for teams being read from the store. */
  get loadWaits(): number {
    return this.sources.loadWaits;
  }

  /** The epoch `source` would give a key's read now (its teams marked read), without building a snapshot. */
  epochHeld(partition: string, now = this.deps.clock.now()): string | undefined {
    return this.sources.epochHeld(partition, now);
  }

  /**
   * The staleness bound of a team, computed from its projects, its budget and whether its webhooks arrive (`freshness.ts`;
   * spread over what its budget has left of the minute, `minute-room.ts`),
   * plus the wait for the next minute while its budget is known spent (`SyncBudget.waitMs`: after a large backfill, or
   * a sync refused): a render made now is found within it.
   */
  boundOf(t: TeamReplica, now = this.deps.clock.now()): number {
    return this.scheduler.statedBounds(t, now).boundMs;
  }

  /** The bound of a team's active projects (checked at every sync) and how many they are (`freshness.ts`). */
  activity(t: TeamReplica, now = this.deps.clock.now()): { readonly boundMs: number; readonly projects: number } {
    const { config } = this.deps;
    const boundMs = this.scheduler.statedBounds(t, now).activeBoundMs;
    return { boundMs, projects: activityOf(t, now, config.INDEX_ACTIVE_MS).shape.active };
  }

  /** How long a sync lease lasts past its holder's last heartbeat (2 × INDEX_LEASE_HEARTBEAT_MS). */
  get leaseMs(): number {
    return this.leases.leaseMs;
  }

  /**
   * Refreshes the answered records' signed URLs that near expiry, with the request's own key and meter, written back
   * to the replica (`OutputRefresh`). Resolves with the moment the first signed URL of these records must be refreshed
   * next (an answer kept longer is not given).
   */
  /** `walk`: one read's walk of its projects' pages, kept across its chunks (a new one per read). */
  refreshOutputs(session: V1Session, snapshot: ReplicaSnapshot, recs: readonly Rec[], resource: string, walk?: RefreshWalk): Promise<number> {
    return this.outputs.refresh(session, snapshot, recs, resource, walk);
  }

  // ------------------------------------------------------------------ changes

  /**
   * A render the gateway learned of outside a sync (its own create, a webhook): in the store and in this instance's
   * memory before the caller answers, and announced to the other instances.
   */
  async applyRender(r: V1Render, o: { data?: unknown; webhook?: boolean } = {}): Promise<void> {
    const teamId = r.project.team;
    const now = this.deps.clock.now();
    await this.store.putRenders(teamId, [r], now);
    const t = this.registry.get(teamId);
    t?.apply(r, now);
    if (o.data !== undefined) t?.dataChanged([r.id]);
    if (o.webhook) {
      await this.store.markWebhook(teamId, now);
      if (t) t.webhookAt = now;
    }
    await this.peers.publishRenders(teamId, [r.id]);
  }

  // ------------------------------------------------------------------ loading, backfill, sync

  /** The team's replica in memory, read from the store when it is not (undefined: never filled). */
  load(teamId: string): Promise<TeamReplica | undefined> {
    return this.registry.load(teamId);
  }

  /** Starts (or joins) the team's backfill in the background; resumes from the store's checkpoints. */
  startBackfill(team: V1Team): Promise<void> {
    return this.scheduler.startBackfill(team);
  }

  /** One incremental sync of a team (coalesced); `allowFull`: it may be the periodic full reconcile. */
  syncTeam(t: TeamReplica, allowFull = true): Promise<void> {
    return this.scheduler.syncTeam(t, allowFull);
  }

  /** The background sync: every team read within INDEX_ACTIVE_MS whose sync is due and within its budget. */
  async tick(): Promise<void> {
    await this.health.tick();
    return this.scheduler.tick();
  }

  /** Syncs (or backfills) the given teams (by id) now, waiting for the end (the CLI's `index sync`). */
  syncNow(teamIds: readonly string[]): Promise<void> {
    return this.scheduler.syncNow(teamIds);
  }

  // ------------------------------------------------------------------ what operators see

  async status(): Promise<TeamStatus[]> {
    const { clock, config } = this.deps;
    const calls = await this.budget.callsThisMinute();
    const facts = {
      now: clock.now(),
      callsLastMinute: (id: string) => calls.get(id) ?? 0,
      boundOf: (row: StatusRow, t: TeamReplica | undefined) => (t ? this.boundOf(t)
        : boundFrom(config, row.projects, row.moving, {
          trusted: this.health.trusted(row.team.id, clock.now()), webhookAt: this.health.pending(row.team.id, clock.now()) ? null : row.webhookAt },
          clock.now(), this.budget.callsPerMin(row.team.id))),
      activity: (_row: StatusRow, t: TeamReplica | undefined, bound: number) => (t ? this.activity(t) : { boundMs: bound, projects: 0 }),
      busy: (id: string) => this.scheduler.busy(id),
      lastError: (id: string) => this.scheduler.failure(id)?.message ?? null,
      webhooks: (id: string) => {
        if (!this.health.registered(id)) return 'polled' as const;
        return this.health.trusted(id, clock.now()) ? 'trusted' as const : 'catch-up' as const;
      },
    };
    // a team in memory is described from memory (its store rows are not counted): the copy seen when counting, kept
    // (one evicted while the other teams are counted is still described by it, not by counts never made)
    const held = new Map<string, TeamReplica>();
    const rows = await this.store.teams((id) => {
      const t = this.registry.get(id);
      if (t) held.set(id, t);
      return t !== undefined;
    });
    return rows.map((row) => teamStatus(row, held.get(row.team.id), facts));
  }

  /** Ages of the teams in memory (for /metrics: max and a histogram, never a label per team). */
  ages(): number[] {
    return ages(this.registry.values(), this.deps.clock.now());
  }

  /** Staleness bounds of the backfilled teams in memory (for /metrics: max and a histogram, never a label per team). */
  bounds(): number[] {
    const now = this.deps.clock.now();
    return [...this.registry.values()].filter((t) => t.state === 'ready').map((t) => this.boundOf(t, now));
  }

  get rendersInMemory(): number {
    return rendersIn(this.registry.values());
  }

  /** The team's replica in memory (tests and the CLI's verify). */
  team(teamId: string): TeamReplica | undefined {
    return this.registry.get(teamId);
  }
}
