import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Kysely } from 'kysely';
import type { Config } from '../config/schema.js';
import type { Mappings } from '../config/mappings.js';
import type { Clock } from '../lib/clock.js';
import type { ChangeBus } from '../store/changes.js';
import type { OverlayStore, RenderDataStore } from '../store/render-extras.js';
import type { Database } from '../store/schema.js';
import type { IdTranslator } from '../translate/ids.js';
import { mapLimit } from '../plan/limit.js';
import type { TeamReaders } from '../plan/team-readers.js';
import type { Rec } from '../query/compile.js';
import { IndexStore } from '../store/render-index.js';
import type { V1Meter, V1Session } from '../v1/client.js';
import { V1NotFoundError, V1UnauthorizedError } from '../v1/errors.js';
import { V1_PAGE_MAX, type V1Render, type V1Team } from '../v1/schemas.js';
import { AnswerCache } from './answer-cache.js';
import { IndexSnapshot } from '../index/read.js';
import { recordBuilder, type Overlays, type RecordBuilder } from './records.js';
import { outputExpiry, refreshAt, urlExpiry } from './signed-urls.js';
import { SyncAborted, TeamSync, TeamUnreachable, type SyncChanges } from './sync.js';
import { TeamReplica } from './team-replica.js';

/** Where a read is answered from, and why. */
export type ReadSource =
  | {
    readonly kind: 'index'; readonly snapshot: IndexSnapshot; readonly ageMs: number; readonly synced: readonly string[];
    /** What the snapshot's answers are computed from (its teams' versions, `epochOf`): the answer cache's validity. */
    readonly epoch: string;
  }
  | { readonly kind: 'live'; readonly reason: string };

/** One team as the operator route shows it. */
export interface TeamStatus {
  readonly team: string;
  readonly name: string;
  readonly state: 'backfilling' | 'ready';
  readonly renders: number;
  readonly projects: number;
  readonly in_memory: boolean;
  readonly backfilled_at: string | null;
  readonly last_sync: string | null;
  readonly age_ms: number | null;
  readonly last_webhook: string | null;
  readonly sync_calls_last_minute: number;
  readonly bound_ms: number;
  readonly syncing: boolean;
  readonly last_error: string | null;
}

/** What the replica uses, given by the composition root (src/deps.ts). */
export interface RenderIndexDeps {
  readonly config: Pick<Config, 'ANSWER_CACHE_MB' | 'FANOUT_CONCURRENCY' | 'INDEX_ACTIVE_MS' | 'INDEX_MAX_STALENESS_MS' | 'INDEX_MEMORY_MB'
    | 'INDEX_RECONCILE_MS' | 'INDEX_SYNC_CALLS_PER_MIN' | 'INDEX_SYNC_CONCURRENCY' | 'KEY_RECHECK_MS' | 'QUERY_LIMIT_DEFAULT' | 'SIGNED_URL_TTL_MS'
    | 'V1_TIMESTAMP_UNIT'>;
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

/** How long a sync lease is held before another instance may take the team over. */
const LEASE_MS = 60_000;
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * What answers read from these teams are computed from: their versions (one process-wide sequence that moves on every
 * change an answer can show, overlays and imported ids included). Equal epochs, equal answers: the answer cache's validity.
 */
const epochOf = (teams: readonly TeamReplica[]) => {
  let s = '';
  for (const t of teams) s += `${t.id}:${t.version},`;
  return s;
};

/**
 * The render index: per team, a copy of what any legacy read needs (renders, projects, templates, members), kept in
 * the store and in memory for the teams being read, so a read costs O(answer) and no v1 call while the team is
 * fresh. Fed by the gateway's own writes, by webhooks, and by a background sync of the teams being read (their
 * lists' heads, renders not yet final, project lists) within INDEX_MAX_STALENESS_MS and a per-team call budget.
 * Several instances share the store: one syncs a team at a time (a lease), the others follow its changes (bus).
 */
export class RenderIndex {
  readonly holder = randomUUID();
  readonly store: IndexStore;
  private readonly teams = new Map<string, TeamReplica>();
  private readonly loading = new Map<string, Promise<TeamReplica | undefined>>();
  private readonly syncing = new Map<string, Promise<void>>();
  private readonly backfilling = new Map<string, Promise<void>>();
  private readonly calls = new Map<string, number[]>();
  private readonly failures = new Map<string, { message: string; at: number }>();
  private readonly fullAt = new Map<string, number>();
  private readonly reach = new LRUCache<string, { teams: V1Team[]; at: number }>({ max: 10_000 });
  /** Serialised answers of index reads, valid while the teams they were read from keep their versions. */
  readonly answers: AnswerCache;
  private overlays: Overlays = {};
  private overlaysReady: Promise<void>;
  private readonly builder: RecordBuilder;
  private readonly sync: TeamSync;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly deps: RenderIndexDeps, private readonly readers: TeamReaders) {
    this.store = new IndexStore(deps.db.kysely, () => deps.clock.now());
    this.answers = new AnswerCache(deps.config.ANSWER_CACHE_MB * 1024 * 1024);
    this.builder = recordBuilder({ ids: deps.ids, mappings: deps.mappings, timeUnit: deps.config.V1_TIMESTAMP_UNIT }, () => this.overlays, deps.credits);
    this.sync = new TeamSync({
      store: this.store,
      clock: deps.clock,
      logger: deps.logger,
      concurrency: deps.config.INDEX_SYNC_CONCURRENCY,
      signedUrlTtlMs: deps.config.SIGNED_URL_TTL_MS,
      aborted: () => this.closed,
    });
    this.overlaysReady = this.reloadOverlays();
    const bus = deps.bus;
    bus.on('index_renders', (key) => {
      const [from, team, ids] = key.split(' ');
      const t = team ? this.teams.get(team) : undefined;
      if (from === this.holder || !t || !ids) return;
      this.follow(this.store.rendersById(ids.split(',')).then((rows) => { for (const r of rows) t.apply(r.render, r.seenAt); }));
    });
    bus.on('index_team', (key) => {
      const [from, team] = key.split(' ');
      const t = team ? this.teams.get(team) : undefined;
      if (from === this.holder || !t) return;
      this.follow(this.refreshRow(t));
    });
    // a repair (`index verify --repair`) rewrote the team's rows: its copy is read again on its next read
    bus.on('index_drop', (team) => {
      if (!this.syncing.has(team) && !this.backfilling.has(team)) this.teams.delete(team);
    });
    // what another process wrote is read again (teams being synced here are kept: they are this instance's writes)
    bus.onResync(() => {
      for (const id of [...this.teams.keys()]) if (!this.syncing.has(id) && !this.backfilling.has(id)) this.teams.delete(id);
    });
    bus.on('overlays', () => { this.overlaysReady = this.reloadOverlays(); });
    // imported id pairs change uuids: the records are rebuilt whenever the translator has read them again (an import
    // heard on the bus, or a resync: another process's import reaches SQLite instances only so); a team being loaded
    // meanwhile rebuilds its own (idsVersion)
    deps.ids.onReloaded(() => {
      this.idsVersion++;
      for (const t of this.teams.values()) t.invalidateRecords();
    });
    // pairs a failed write lost are given again (the index remembers which it gave)
    deps.ids.onLost((pairs) => { for (const p of pairs) for (const t of this.teams.values()) t.forgetPaired(p.type, p.v1Id); });
    bus.on('render_data', (id) => {
      const t = [...this.teams.values()].find((x) => x.has(id));
      if (t) this.follow(deps.renderData.many([id]).then((m) => { if (m.has(id)) t.setData(id, m.get(id)); }));
    });
  }

  /** Starts the background sync of the teams being read. */
  start(tickMs = 250): void {
    this.timer ??= setInterval(() => void this.tick(), tickMs).unref();
  }

  /** Stops the background sync and waits for the syncs under way to stop at their next step. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.allSettled([...this.syncing.values(), ...this.backfilling.values(), ...this.loading.values(), ...this.following]);
  }

  private readonly following = new Set<Promise<void>>();

  /** Applies another instance's change in the background (idle() waits for it). */
  private follow(p: Promise<void>): void {
    const q = p.catch((e: unknown) => this.deps.logger.warn({ err: e }, 'render index: could not follow a change')).finally(() => this.following.delete(q));
    this.following.add(q);
  }

  /** Resolves once every change heard from other instances so far is applied (tests, the CLI). */
  async idle(): Promise<void> {
    while (this.following.size > 0) await Promise.all([...this.following]);
  }

  private overlaysSeq = 0;
  /** Bumped when new overlays are in use (a team loaded meanwhile rebuilds its records). */
  private overlaysVersion = 0;

  /**
   * Reads the overlays every record is built with; only the newest of overlapping reloads is applied, and a failed one
   * keeps the last good set (logged; the next change reloads).
   */
  private async reloadOverlays(): Promise<void> {
    const seq = ++this.overlaysSeq;
    this.overlaysSettled = false;
    try {
      const types = ['render', 'project', 'account'];
      const loaded = await Promise.all(types.map(async (t) => [t, await this.deps.overlays.ofType(t)] as const));
      if (seq !== this.overlaysSeq) return;
      this.overlays = Object.fromEntries(loaded);
      this.overlaysVersion++;
      for (const t of this.teams.values()) t.invalidateRecords();
    } catch (e) {
      this.deps.logger.warn({ err: e }, 'render index: could not read the overlays (the last ones read stay in use)');
    } finally {
      if (seq === this.overlaysSeq) this.overlaysSettled = true;
    }
  }

  /** Bumped when imported id pairs are read again (a team loaded meanwhile rebuilds its records). */
  private idsVersion = 0;

  /** False while overlays are being read again (a read waits for them). */
  private overlaysSettled = false;

  // ------------------------------------------------------------------ the read path

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
   * Where this read is answered from: the index when every team in scope is backfilled (a stale one is synced first,
   * within its budget; N readers of one stale team wait for one sync), else live, while the backfill runs. `now` is the
   * request's moment (its context's): freshness is judged at the same time as the rest of the request.
   */
  async source(session: V1Session, now = this.deps.clock.now()): Promise<ReadSource> {
    const held = this.sourceHeld(session, now);
    if (held) return held;
    if (this.closed) return { kind: 'live', reason: 'the index is shut down' };
    const reach = await this.reachOf(session);
    await this.overlaysReady;
    // every reachable team, not only those the filter names: total_count counts everything the key reaches
    const ready: TeamReplica[] = [];
    const pending: string[] = [];
    for (const team of reach) {
      const t = await this.load(team.id);
      if (t) t.readAt = now;
      if (t?.state === 'ready') ready.push(t);
      else {
        pending.push(team.id);
        this.startBackfill(team);
      }
    }
    if (pending.length > 0) return { kind: 'live', reason: `the index of ${pending.join(', ')} is not backfilled yet` };
    // a stale team is synced first (its head only: the full reconcile is the background's), within its budget
    const stale = ready.filter((t) => !this.fresh(t, now) && this.withinBudget(t));
    await Promise.all(stale.map((t) => this.syncTeam(t, false).catch(() => undefined)));
    // a team whose sync fails (no bound key reaches it any more, v1 refusing) is not answered from an old copy
    const failing = ready.filter((t) => !this.fresh(t, now) && this.failures.has(t.id));
    if (failing.length > 0) {
      return { kind: 'live', reason: `the index of ${failing.map((t) => t.id).join(', ')} could not be synced: ${this.failures.get(failing[0]!.id)?.message}` };
    }
    const snapshot = new IndexSnapshot(ready, this.deps.config.QUERY_LIMIT_DEFAULT);
    return { kind: 'index', snapshot, ageMs: snapshot.ageMs(now), synced: stale.map((t) => t.id), epoch: epochOf(ready) };
  }

  /**
   * The same answer as `source` without waiting, when nothing needs waiting for (most reads of a team being read): the
   * key's reach trusted, the overlays read, every team of the reach in memory, backfilled and fresh. Undefined otherwise.
   */
  private sourceHeld(session: V1Session, now: number): ReadSource | undefined {
    const ready = this.heldTeams(session.partition, now);
    if (!ready) return undefined;
    const snapshot = new IndexSnapshot(ready, this.deps.config.QUERY_LIMIT_DEFAULT);
    return { kind: 'index', snapshot, ageMs: snapshot.ageMs(now), synced: [], epoch: epochOf(ready) };
  }

  /** The epoch `source` would give a key's read now (its teams marked read), without building a snapshot. */
  epochHeld(partition: string, now = this.deps.clock.now()): string | undefined {
    const ready = this.heldTeams(partition, now);
    return ready ? epochOf(ready) : undefined;
  }

  /** The teams a key's read finds held: reach trusted, overlays read, every team in memory, backfilled and fresh. */
  private heldTeams(partition: string, now: number): TeamReplica[] | undefined {
    const c = this.deps.config;
    if (this.closed || !this.overlaysSettled || c.KEY_RECHECK_MS <= 0) return undefined;
    const hit = this.reach.get(partition);
    if (!hit || now - hit.at >= c.KEY_RECHECK_MS) return undefined;
    const ready: TeamReplica[] = [];
    for (const team of hit.teams) {
      const t = this.teams.get(team.id);
      if (!t || t.state !== 'ready' || !this.fresh(t, now)) return undefined;
      ready.push(t);
    }
    for (const t of ready) t.readAt = now;
    return ready;
  }

  /** The staleness bound of a team: INDEX_RECONCILE_MS while its webhooks arrive, else INDEX_MAX_STALENESS_MS. */
  boundOf(t: TeamReplica, now = this.deps.clock.now()): number {
    const c = this.deps.config;
    const hooks = t.webhookAt !== null && now - t.webhookAt < c.INDEX_RECONCILE_MS;
    return hooks ? Math.max(c.INDEX_RECONCILE_MS, c.INDEX_MAX_STALENESS_MS) : c.INDEX_MAX_STALENESS_MS;
  }

  private fresh(t: TeamReplica, now = this.deps.clock.now()): boolean {
    return now - (t.syncedAt ?? 0) <= this.boundOf(t, now);
  }

  /** v1 calls the team's syncs made in the last minute. */
  callsLastMinute(teamId: string): number {
    const since = this.deps.clock.now() - 60_000;
    const list = (this.calls.get(teamId) ?? []).filter((x) => x > since);
    this.calls.set(teamId, list);
    return list.length;
  }

  /** Whether a sync of the team (about one call per project, plus the re-poll) still fits its budget this minute. */
  private withinBudget(t: TeamReplica): boolean {
    const estimate = t.projects.size + Math.min(t.movingIds().length, 2 * t.projects.size) + 1;
    return this.callsLastMinute(t.id) + estimate <= this.deps.config.INDEX_SYNC_CALLS_PER_MIN;
  }

  /**
   * What of the answered records must be refreshed at `now` (signed URLs near expiry: render outputs, project and
   * template posters), and from when the first of them must be (`refreshAt`; ≤ now when some already must).
   */
  private examine(snapshot: IndexSnapshot, recs: readonly Rec[], resource: string, now: number) {
    const ttl = this.deps.config.SIGNED_URL_TTL_MS;
    const byProject = new Map<string, { t: TeamReplica; ids: Set<string> }>();
    const thumbnails = new Map<string, TeamReplica>();
    let first = Number.POSITIVE_INFINITY;
    const due = (expiresAt: number, seenAt: number) => {
      const at = refreshAt(expiresAt, seenAt);
      first = Math.min(first, at);
      return now >= at;
    };
    // a project's thumbnail: its expiry read from the URL, its lifetime counted from when the gateway got the project
    const nearEnd = (t: TeamReplica, projectId: string) => {
      const e = t.projects.get(projectId);
      const url = e?.project.thumbnail_url;
      if (!e || !url) return false;
      e.expiresAt ??= urlExpiry(url, e.seenAt, ttl); // read from the URL once per copy held
      return due(e.expiresAt, e.seenAt);
    };
    if (resource === 'template') {
      // a template's poster is its project's signed thumbnail
      for (const rec of recs) {
        for (const t of snapshot.teams) {
          const x = t.template(rec.id as string);
          if (x && nearEnd(t, x.projectId)) thumbnails.set(x.projectId, t);
        }
      }
    }
    if (resource === 'project') {
      // a project's poster is its signed thumbnail
      for (const rec of recs) {
        for (const t of snapshot.teams) {
          const v1 = t.projectV1(rec.id as string);
          if (v1 && nearEnd(t, v1)) thumbnails.set(v1, t);
        }
      }
    }
    for (const rec of resource === 'render' ? recs : []) {
      const t = snapshot.teamOfRender(rec.id as string);
      const v1 = t?.renderV1(rec.id as string);
      const projectId = v1 ? t?.projectOf(v1) : undefined;
      if (!t || !v1 || projectId === undefined || !t.hasOutput(v1)) continue;
      // an output without a still shows its project's thumbnail (signed too)
      if (nearEnd(t, projectId)) thumbnails.set(projectId, t);
      // read from the URLs once per state held
      const expiresAt = t.expiryOf(v1, (r, seenAt) => outputExpiry(r.output, seenAt, ttl)) as number;
      if (!due(expiresAt, t.renderState(v1)?.seenAt ?? now)) continue;
      const g = byProject.get(projectId) ?? { t, ids: new Set<string>() };
      g.ids.add(v1);
      byProject.set(projectId, g);
    }
    return { thumbnails, byProject, refreshAt: first };
  }

  /**
   * Refreshes the answered renders whose output URLs near expiry, with the request's own key and meter: by id, or
   * through their project's list pages when that takes fewer calls. Written back to the index. Resolves with the moment
   * the first signed URL of these records must be refreshed next (an answer kept longer is not given).
   */
  async refreshOutputs(session: V1Session, snapshot: IndexSnapshot, recs: readonly Rec[], resource = 'render'): Promise<number> {
    const { thumbnails, byProject, refreshAt: next } = this.examine(snapshot, recs, resource, this.deps.clock.now());
    if (thumbnails.size === 0 && byProject.size === 0) return next; // nothing due: the usual case, looked at once
    await mapLimit([...thumbnails], this.deps.config.FANOUT_CONCURRENCY, async ([projectId, t]) => {
      try {
        const p = await session.project(projectId);
        await this.store.putProjects(t.id, [p]);
        t.setProject({ project: p, templates: null, backfilled: false }, this.deps.clock.now()); // (templates and checkpoint are kept)
      } catch (e) {
        if (!(e instanceof V1NotFoundError)) throw e;
      }
    });
    await mapLimit([...byProject], this.deps.config.FANOUT_CONCURRENCY, async ([projectId, { t, ids }]) => {
      const fresh: V1Render[] = [];
      // by list pages (60 a call, newest first) when the deepest of them is reached in fewer calls than one per render;
      // every render those pages show is kept fresh too (a streamed limit=-1 asks for the next ones a chunk later)
      if (ids.size > 1) {
        const position = new Map(t.projectRenderIds(projectId).map((id, i) => [id, i]));
        const deepest = Math.max(...[...ids].map((id) => position.get(id) ?? 0));
        const pages = Math.floor(deepest / V1_PAGE_MAX) + 1;
        if (pages < ids.size) {
          let cursor: string | undefined;
          try {
            for (let i = 0; i < pages; i++) {
              const page = await session.rendersPage(projectId, { limit: V1_PAGE_MAX, ...(cursor ? { cursor } : {}) });
              fresh.push(...page.data);
              if (!page.next_cursor) break;
              cursor = page.next_cursor;
            }
          } catch (e) {
            if (!(e instanceof V1NotFoundError)) throw e;
          }
        }
      }
      const read = new Set(fresh.map((r) => r.id));
      const missing = [...ids].filter((id) => !read.has(id));
      for (const id of missing) {
        try {
          fresh.push(await session.render(id));
        } catch (e) {
          if (!(e instanceof V1NotFoundError)) throw e;
        }
      }
      try {
        await this.sync.put(t, fresh, { renders: [] });
      } catch (e) {
        if (e instanceof SyncAborted) return; // shutting down: the fresh copies are answered, not kept
        throw e;
      }
      await this.publishRenders(t.id, fresh.map((r) => r.id));
    });
    return this.examine(snapshot, recs, resource, this.deps.clock.now()).refreshAt;
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
    const t = this.teams.get(teamId);
    if (o.data !== undefined) t?.setData(r.id, o.data);
    t?.apply(r, now);
    if (o.webhook) {
      await this.store.markWebhook(teamId, now);
      if (t) t.webhookAt = now;
    }
    await this.publishRenders(teamId, [r.id]);
  }

  private async publishRenders(teamId: string, ids: readonly string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += 100) await this.deps.bus.publish('index_renders', `${this.holder} ${teamId} ${ids.slice(i, i + 100).join(',')}`);
  }

  // ------------------------------------------------------------------ loading, backfill, sync

  /** The team's index in memory, read from the store when it is not (undefined: never indexed). */
  async load(teamId: string): Promise<TeamReplica | undefined> {
    const t = this.teams.get(teamId);
    if (t) return t;
    let p = this.loading.get(teamId);
    if (!p) {
      p = (async () => {
        const row = await this.store.team(teamId);
        if (!row) return undefined;
        const overlays = this.overlaysVersion;
        const ids = this.idsVersion;
        const fresh = new TeamReplica(row, this.builder);
        fresh.readAt = this.deps.clock.now(); // loaded to be read: not the first to leave memory
        for (const pr of await this.store.projects(teamId)) fresh.setProject(pr, this.deps.clock.now());
        await this.store.eachRenders(teamId, (rows) => fresh.load(rows));
        fresh.compact();
        for (const [id, data] of await this.store.renderData(teamId)) fresh.setData(id, data);
        // new overlays or imported ids arrived while it was read
        if (this.overlaysVersion !== overlays || this.idsVersion !== ids) fresh.invalidateRecords();
        // a backfill or sync that started meanwhile holds the newer copy
        const current = this.teams.get(teamId);
        if (current) return current;
        this.teams.set(teamId, fresh);
        this.evict(teamId);
        return fresh;
      })().finally(() => this.loading.delete(teamId));
      this.loading.set(teamId, p);
    }
    return p;
  }

  private async refreshRow(t: TeamReplica): Promise<void> {
    const row = await this.store.team(t.id);
    if (!row) return;
    if (row.state === 'ready' && t.state !== 'ready') {
      this.teams.delete(t.id); // backfilled elsewhere: read whole on next use
      return;
    }
    t.setRow(row);
    const projects = await this.store.projects(t.id);
    const live = new Set(projects.map((p) => p.project.id));
    for (const id of [...t.projects.keys()]) if (!live.has(id)) t.dropProject(id);
    for (const p of projects) {
      const prev = t.projects.get(p.project.id);
      const same = prev && JSON.stringify(prev.project) === JSON.stringify(p.project) && JSON.stringify(prev.templates) === JSON.stringify(p.templates);
      if (!same) t.setProject(p, this.deps.clock.now());
      else if (p.headMark !== undefined && p.headMark !== null) { // another instance's walk
        t.setHeadMark(p.project.id, p.headMark);
        t.storedMarks.set(p.project.id, p.headMark);
      }
    }
  }

  /** Teams beyond INDEX_MEMORY_MB leave memory, least recently read first (they are read back from the store). */
  private evict(keep?: string): void {
    const max = this.deps.config.INDEX_MEMORY_MB * 1024 * 1024;
    let total = 0;
    for (const t of this.teams.values()) total += t.approxBytes;
    const order = [...this.teams.values()].sort((a, b) => a.readAt - b.readAt);
    for (const t of order) {
      if (total <= max || this.teams.size <= 1) break;
      if (t.id === keep || this.syncing.has(t.id) || this.backfilling.has(t.id)) continue;
      this.teams.delete(t.id);
      total -= t.approxBytes;
      this.deps.logger.info({ team: t.id }, 'render index: team evicted from memory (INDEX_MEMORY_MB)');
    }
  }

  /** A meter that counts the sync's calls against the team's budget. */
  private meterFor(teamId: string): V1Meter {
    return { onCall: () => { const l = this.calls.get(teamId) ?? []; l.push(this.deps.clock.now()); this.calls.set(teamId, l); } };
  }

  /** Runs `work` with a key that reaches the team, the next bound key when one is refused; false when none does. */
  private async withReader(teamId: string, work: (s: V1Session) => Promise<void>): Promise<boolean> {
    for (let attempt = 0; attempt < 5; attempt++) {
      // the sync's calls carry a request id of their own (v1's logs tell them from legacy requests)
      const r = await this.readers.sessionFor(teamId, this.meterFor(teamId), `gateway-index-${teamId}`);
      if (!r) return false;
      try {
        await work(r.session);
        return true;
      } catch (e) {
        if (!(e instanceof TeamUnreachable || e instanceof V1UnauthorizedError)) throw e;
        // a refused key (401) is skipped everywhere; a key that no longer reaches this team, for this team only
        this.readers.refused(teamId, r.user, e instanceof V1UnauthorizedError);
      }
    }
    return false;
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
    try {
      if (!(await this.store.lease(team.id, this.holder, LEASE_MS))) {
        const row = await this.store.team(team.id);
        if (row) return; // another instance is at it; this one follows its changes
        await this.store.putTeam(team, []);
        if (!(await this.store.lease(team.id, this.holder, LEASE_MS))) return;
      }
      const t = (await this.load(team.id)) ?? this.adopt(team);
      this.deps.logger.info({ team: team.id }, 'render index: backfill started');
      const changes: SyncChanges = { renders: [], renew: this.renewer(team.id) };
      const ok = await this.withReader(team.id, (s) => this.sync.backfill(t, s, changes));
      if (!ok) throw new Error('no bound key reaches the team');
      // the data the gateway sent for the renders it created (before the team was indexed)
      for (const [id, data] of await this.store.renderData(team.id)) t.setData(id, data);
      this.fullAt.set(team.id, t.backfilledAt ?? this.deps.clock.now());
      this.failures.delete(team.id);
      t.compact();
      this.evict(team.id); // memory grew by a whole team
      this.deps.logger.info({ team: team.id, renders: t.size, projects: t.projects.size }, 'render index: backfill done');
      await this.deps.bus.publish('index_team', `${this.holder} ${team.id}`);
    } catch (e) {
      this.fail(team.id, e);
    } finally {
      await this.store.release(team.id, this.holder).catch(() => undefined);
    }
  }

  /** A team new to the store: its row, and an empty index in memory. */
  private adopt(team: V1Team): TeamReplica {
    const t = new TeamReplica({ team, members: [], state: 'backfilling', backfilledAt: null, syncedAt: null, webhookAt: null }, this.builder);
    t.readAt = this.deps.clock.now();
    this.teams.set(team.id, t);
    return t;
  }

  private fail(teamId: string, e: unknown): void {
    if (this.closed) return;
    const message = e instanceof Error ? e.message : String(e);
    this.failures.set(teamId, { message, at: this.deps.clock.now() });
    this.deps.logger.warn({ team: teamId, err: message }, 'render index: sync failed (reads of the team stay on its last state)');
  }

  /**
   * One incremental sync of a team (coalesced: concurrent callers share it), under the team's lease. `allowFull`: the
   * background may make it the periodic full reconcile; a read never waits for one.
   */
  syncTeam(t: TeamReplica, allowFull = true): Promise<void> {
    let p = this.syncing.get(t.id);
    if (p) return p;
    p = this.runSync(t, allowFull).finally(() => this.syncing.delete(t.id));
    this.syncing.set(t.id, p);
    return p;
  }

  /** A renewal of the team's lease at most every third of its length, for a walk that may outlast it. */
  private renewer(teamId: string): () => Promise<void> {
    let last = this.deps.clock.now();
    return async () => {
      const now = this.deps.clock.now();
      if (now - last < LEASE_MS / 3) return;
      last = now;
      if (!(await this.store.lease(teamId, this.holder, LEASE_MS))) throw new Error('another instance took over the sync of this team');
    };
  }

  private async runSync(t: TeamReplica, allowFull: boolean): Promise<void> {
    // a backfill of the team under way holds its lease: the sync waits for it rather than share the lease
    const backfill = this.backfilling.get(t.id);
    if (backfill) {
      await backfill;
      return;
    }
    if (!(await this.store.lease(t.id, this.holder, LEASE_MS))) {
      await this.refreshRow(t); // another instance syncs it: take its sync time
      return;
    }
    try {
      const started = this.deps.clock.now();
      const full = allowFull && started - (this.fullAt.get(t.id) ?? 0) >= this.deps.config.INDEX_RECONCILE_MS;
      const changes: SyncChanges = { renders: [], renew: this.renewer(t.id) };
      const ok = await this.withReader(t.id, (s) => this.sync.sync(t, s, full, changes));
      if (!ok) throw new Error('no bound key reaches the team');
      // renders new to the index may be the gateway's own (made on an instance that did not hold the team)
      const fresh = changes.renders.filter((id) => !t.data.has(id));
      if (fresh.length > 0) for (const [id, data] of await this.deps.renderData.many(fresh)) t.setData(id, data);
      if (full) this.fullAt.set(t.id, started);
      this.failures.delete(t.id);
      await this.publishRenders(t.id, changes.renders);
      await this.deps.bus.publish('index_team', `${this.holder} ${t.id}`);
    } catch (e) {
      this.fail(t.id, e);
      throw e;
    } finally {
      await this.store.release(t.id, this.holder).catch(() => undefined);
    }
  }

  /** The background sync: every team read within INDEX_ACTIVE_MS whose sync is due and within its budget. */
  async tick(): Promise<void> {
    if (this.closed) return;
    const now = this.deps.clock.now();
    const due: Promise<void>[] = [];
    for (const t of this.teams.values()) {
      if (t.state !== 'ready' || now - t.readAt > this.deps.config.INDEX_ACTIVE_MS || this.syncing.has(t.id)) continue;
      // half the bound: a reader finds the team fresh instead of syncing it itself
      if (now - (t.syncedAt ?? 0) < this.boundOf(t) / 2 || !this.withinBudget(t)) continue;
      due.push(this.syncTeam(t, true).catch(() => undefined));
    }
    await Promise.all(due);
  }

  /** Syncs (or backfills) the given teams (by id) now, waiting for the end (the CLI's `index sync`). */
  async syncNow(teamIds: readonly string[]): Promise<void> {
    for (const id of teamIds) {
      // the backfill's first step reads the team itself; this stands in until then
      const team: V1Team = (await this.store.team(id))?.team ?? { id, name: id, account_id: 'acc_unknown', role: null, created_at: 0 };
      const t = await this.load(team.id);
      if (!t || t.state !== 'ready') {
        await this.startBackfill(team);
        const failed = this.failures.get(team.id);
        if (failed) throw new Error(`${team.id}: ${failed.message}`);
        continue;
      }
      await this.syncTeam(t);
    }
  }

  // ------------------------------------------------------------------ what operators see

  async status(): Promise<TeamStatus[]> {
    const now = this.deps.clock.now();
    return (await this.store.teams()).map((row) => {
      const t = this.teams.get(row.team.id);
      const synced = Math.max(row.syncedAt ?? 0, t?.syncedAt ?? 0) || null;
      return {
        team: row.team.id,
        name: row.team.name,
        state: t?.state ?? row.state,
        renders: t?.size ?? row.renders,
        projects: t?.projects.size ?? 0,
        in_memory: !!t,
        backfilled_at: iso(row.backfilledAt),
        last_sync: iso(synced),
        age_ms: synced === null ? null : now - synced,
        last_webhook: iso(Math.max(row.webhookAt ?? 0, t?.webhookAt ?? 0) || null),
        sync_calls_last_minute: this.callsLastMinute(row.team.id),
        bound_ms: t ? this.boundOf(t) : this.deps.config.INDEX_MAX_STALENESS_MS,
        syncing: this.syncing.has(row.team.id) || this.backfilling.has(row.team.id),
        last_error: this.failures.get(row.team.id)?.message ?? null,
      };
    });
  }

  /** Ages of the teams in memory (for /metrics: max and a histogram, never a label per team). */
  ages(): number[] {
    const now = this.deps.clock.now();
    return [...this.teams.values()].filter((t) => t.state === 'ready').map((t) => now - (t.syncedAt ?? 0));
  }

  get rendersInMemory(): number {
    let n = 0;
    for (const t of this.teams.values()) n += t.size;
    return n;
  }

  /** The team's index in memory (tests and the CLI's verify). */
  team(teamId: string): TeamReplica | undefined {
    return this.teams.get(teamId);
  }
}
