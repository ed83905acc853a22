import type { Logger } from 'pino';
import type { Clock } from '../../lib/clock.js';
import { pace } from '../../lib/pace.js';
import { mapLimit } from '../../lib/limit.js';
import type { ReplicaStore } from '../../store/replica-store.js';
import type { V1Session } from '../../v1/client.js';
import { V1NotFoundError } from '../../v1/errors.js';
import { V1_PAGE_MAX, type V1Project, type V1Render } from '../../v1/schemas.js';
import { repollMoving } from './repoll.js';
import { nearExpiry, outputExpiry, urlExpiry } from './signed-urls.js';
import type { TeamReplica } from '../team/team-replica.js';

/** What a sync changed, for the other instances (they read these rows from the store). */
export interface SyncChanges {
  readonly renders: string[];
  /** Keeps the team's sync lease while the walk goes on (throws once another instance holds it: the walk stops). */
  readonly renew?: () => Promise<void>;
}

export interface SyncOptions {
  readonly store: ReplicaStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly concurrency: number;
  readonly signedUrlTtlMs: number;
  /** True once the gateway shuts down: a sync stops at its next step. */
  readonly aborted?: () => boolean;
}

/** The gateway is shutting down. */
export class SyncAborted extends Error {}

/** The team is not reachable with the key the sync was given (v1 answered 404/401 for the team). */
export class TeamUnreachable extends Error {}

/** The first page of a head check asks for a few renders only: most syncs find nothing new. */
const HEAD_PAGE = 20;
/** Renders of a page applied to the team between two turns of the event loop. */
const APPLY_SLICE = 32;

/** Waits for this work's turn when the current slice of the event loop is used up (`pace`). */
const paced = async (): Promise<void> => {
  const turn = pace();
  if (turn) await turn;
};

/**
 * Walks v1 for one team of the replica: the backfill (every project's renders once, checkpointed per project) and the
 * incremental sync (the project list, the head of each project's list, a re-poll of renders not yet final). Every
 * change is written to the store first, then to the team's replica in memory, under the same newest-state rule.
 */
export class TeamSync {
  /**
   * The backfills under way here: when each project's walk started (its copy is as v1 showed it then, plus webhooks and
   * the gateway's own writes: its head is not synced before the backfill ends). Partial reads trust a copy only while
   * it is younger than their bound (`ReadSources`).
   */
  private readonly walked = new Map<string, Map<string, number>>();

  constructor(private readonly o: SyncOptions) {}

  /** When the walk of a project of a team being backfilled here started (undefined: not walked by this backfill). */
  copiedAt(teamId: string, projectId: string): number | undefined {
    return this.walked.get(teamId)?.get(projectId);
  }

  /** Walks what the replica does not hold yet; resumes at the first project without its checkpoint. */
  async backfill(t: TeamReplica, s: V1Session, changes: SyncChanges): Promise<void> {
    const started = this.o.clock.now();
    await this.refreshTeam(t, s);
    const projects = await this.refreshProjects(t, s, true);
    let done = projects.filter((p) => t.projects.get(p.id)?.backfilled).length;
    await this.fanOut(projects, async (p) => {
      if (t.projects.get(p.id)?.templates === null) await this.templates(t, s, p);
      if (t.projects.get(p.id)?.backfilled) return;
      await this.walkProject(t, s, p.id, changes);
      done++;
      this.o.logger.info({ team: t.id, projects: `${done}/${projects.length}`, renders: t.size }, 'index backfill: project done');
    });
    await this.o.store.markBackfilled(t.id, started);
    this.walked.delete(t.id);
    t.state = 'ready';
    t.backfilledAt = started;
    t.syncedAt = Math.max(t.syncedAt ?? 0, started);
  }

  /**
   * One incremental sync: new projects (walked whole), the heads of the projects in `heads` (in its order: the active
   * projects first, then the quiet ones due in the rotation; every known project's when absent) down to a known render
   * older than the newest one known, and the renders not yet final; `full` (the periodic full sync, given the projects
   * whose templates are due) also refreshes the team, its members and those projects' templates (there are no events
   * for them). Marks the team synced as of the sync's start (in memory;
   * the store's mark is its caller's): `startedAt`,
   * the moment `heads` was planned at when given (the next sync's rotation takes the quiet projects due after it: a later
   * moment would leave those due in between to the next cycle).
   */
  async sync(
    t: TeamReplica, s: V1Session, full: ReadonlySet<string> | undefined, changes: SyncChanges, heads?: readonly string[], startedAt?: number,
  ): Promise<void> {
    const started = startedAt ?? this.o.clock.now();
    if (full) await this.refreshTeam(t, s);
    // the projects that changed only, full sync or not (a thumbnail nearing its end counts: `projectChanged`) — a full
    // sync rewrote every project row, ~a quarter of the store's writes at scale (issue 43, docs/scale.md)
    const projects = await this.refreshProjects(t, s, false);
    const checked = heads === undefined ? null : new Set(heads);
    const headSeen = new Set<string>();
    await this.fanOut(inHeadOrder(projects, heads), async (p) => {
      const entry = t.projects.get(p.id);
      if (!entry?.backfilled) {
        await this.templates(t, s, p);
        await this.walkProject(t, s, p.id, changes);
        return;
      }
      if (full?.has(p.id)) await this.templates(t, s, p);
      if (checked !== null && !checked.has(p.id)) return;
      for (const id of await this.head(t, s, p.id, changes)) headSeen.add(id);
    });
    await repollMoving(t, s, headSeen, {
      fanOut: (items, fn) => this.fanOut(items, fn),
      put: (renders) => this.put(t, renders, changes),
      putChanged: (renders) => this.putChanged(t, renders, changes),
    });
    // the store's mark is written with the lease given back (the scheduler: one statement, before the announcement)
    t.syncedAt = Math.max(t.syncedAt ?? 0, started);
  }

  /**
   * The periodic full sync alone, when it falls due between two regular syncs (templates read in a rotation,
   * `templatesRotate`): the team, its members and the templates of `projectIds` — no project list, no head, no re-poll,
   * and the team's sync mark left alone (what `fullCallsPerMin` keeps aside, and nothing else).
   */
  async full(t: TeamReplica, s: V1Session, projectIds: readonly string[], changes: SyncChanges): Promise<void> {
    await this.refreshTeam(t, s);
    const projects: V1Project[] = [];
    for (const id of projectIds) {
      const p = t.projects.get(id)?.project;
      if (p) projects.push(p);
    }
    await this.fanOut(projects, async (p) => {
      if (this.o.aborted?.()) throw new SyncAborted('the gateway is shutting down');
      await changes.renew?.();
      await this.templates(t, s, p);
    });
  }

  private async refreshTeam(t: TeamReplica, s: V1Session): Promise<void> {
    const team = (await s.teams()).data.find((x) => x.id === t.id);
    if (!team) throw new TeamUnreachable(t.id);
    const members = (await s.members(t.id)).data;
    await this.o.store.putTeam(team, members);
    t.setRow({ team, members, state: t.state, backfilledAt: t.backfilledAt, syncedAt: t.syncedAt, webhookAt: t.webhookAt });
  }

  /**
   * The team's project list: new and changed projects are stored (`every`: all of them — the backfill's first walk),
   * projects gone from v1 are dropped.
   */
  private async refreshProjects(t: TeamReplica, s: V1Session, every: boolean): Promise<V1Project[]> {
    const projects: V1Project[] = [];
    try {
      for await (const page of s.pages((cursor) => s.projectsPage(t.id, { limit: V1_PAGE_MAX, ...(cursor ? { cursor } : {}) }))) projects.push(...page);
    } catch (e) {
      if (e instanceof V1NotFoundError) throw new TeamUnreachable(t.id);
      throw e;
    }
    const now = this.o.clock.now();
    const changed = projects.filter((p) => every || projectChanged(t.projects.get(p.id)?.project, p, now, this.o.signedUrlTtlMs));
    if (changed.length > 0) {
      await this.o.store.putProjects(t.id, changed);
      for (const p of changed) t.setProject({ project: p, templates: null, backfilled: false }, now);
    }
    const live = new Set(projects.map((p) => p.id));
    const gone = [...t.projects.keys()].filter((id) => !live.has(id));
    if (gone.length > 0) {
      await this.o.store.dropProjects(gone);
      for (const id of gone) t.dropProject(id);
    }
    return projects;
  }

  private async templates(t: TeamReplica, s: V1Session, p: V1Project): Promise<void> {
    let templates;
    try {
      templates = (await s.templates(p.id)).data;
    } catch (e) {
      if (e instanceof V1NotFoundError) return; // the project went away meanwhile: the next project list drops it
      throw e;
    }
    const entry = t.projects.get(p.id);
    if (entry && JSON.stringify(entry.templates) === JSON.stringify(templates)) return;
    await this.o.store.putTemplates(p.id, templates);
    t.setProject({ project: entry?.project ?? p, templates, backfilled: entry?.backfilled ?? false }, this.o.clock.now());
  }

  /** Every render of one project, page by page, then its checkpoint. */
  private async walkProject(t: TeamReplica, s: V1Session, projectId: string, changes: SyncChanges): Promise<void> {
    const started = this.o.clock.now();
    try {
      for await (const page of s.pages((cursor) => s.rendersPage(projectId, { limit: V1_PAGE_MAX, ...(cursor ? { cursor } : {}) }))) {
        await this.put(t, page, changes);
      }
    } catch (e) {
      if (e instanceof V1NotFoundError) return;
      throw e;
    }
    await this.o.store.markProjectBackfilled(projectId);
    const entry = t.projects.get(projectId);
    if (entry) entry.backfilled = true;
    if (t.state !== 'ready') {
      let walked = this.walked.get(t.id);
      if (!walked) this.walked.set(t.id, (walked = new Map()));
      walked.set(projectId, started);
    }
    await this.mark(t, projectId, t.head(projectId));
  }

  /** A walk of the project's list completed: its head mark moves (in memory and in the store). */
  private async mark(t: TeamReplica, projectId: string, at: number | null): Promise<void> {
    t.setHeadMark(projectId, at);
    const kept = t.headMark(projectId);
    // written only when it moves (a head sync of a quiet project, every few seconds, writes nothing)
    if (kept !== null && t.storedMarks.get(projectId) !== kept) {
      await this.o.store.setHeadMark(projectId, kept);
      t.storedMarks.set(projectId, kept);
    }
  }

  /**
   * The head of a project's list, newest first: read until a known render older than the newest known one (so
   * every render sharing that created_at is passed, and a render missed below the head is still found). Returns
   * the ids it saw.
   */
  private async head(t: TeamReplica, s: V1Session, projectId: string, changes: SyncChanges): Promise<string[]> {
    // the project's head as of the last walk that completed (renders that arrived since by webhooks or the gateway's own
    // creates do not move it: renders v1 made before them may still be unknown)
    const mark = t.headMark(projectId);
    const seen: string[] = [];
    let newest: number | null = null;
    let cursor: string | undefined;
    try {
      for (;;) {
        const page = await s.rendersPage(projectId, { limit: cursor ? V1_PAGE_MAX : HEAD_PAGE, ...(cursor ? { cursor } : {}) });
        // known before this page was applied: a render this walk adds is no proof that older ones are known
        const reachedKnown = mark !== null && page.data.some((r) => r.created_at < mark && t.has(r.id));
        await this.putChanged(t, page.data, changes);
        for (const r of page.data) {
          seen.push(r.id);
          if (newest === null || r.created_at > newest) newest = r.created_at;
        }
        if (reachedKnown || !page.next_cursor) break;
        cursor = page.next_cursor;
      }
    } catch (e) {
      if (!(e instanceof V1NotFoundError)) throw e;
    }
    await this.mark(t, projectId, newest ?? mark);
    return seen;
  }

  /**
   * Bounded fan-out that stops taking items once one has failed (the sync is over: its lease goes back, and no worker
   * keeps calling v1 behind it).
   */
  private async fanOut<T>(items: readonly T[], fn: (item: T) => Promise<void>): Promise<void> {
    let failed = false;
    await mapLimit(items, this.o.concurrency, async (item) => {
      if (failed) return;
      try {
        await fn(item);
      } catch (e) {
        failed = true;
        throw e;
      }
    });
  }

  /**
   * The renders v1 shows differently from the replica, written (store first, then memory); those whose signed URLs alone
   * were signed afresh as the held ones near their end are kept in memory only: a new signature is no change, and the
   * store's copy is refreshed when it is read (`reads/output-refresh.ts`) — the store's writes follow what changed
   * (issue 43: head renders rewritten for their URLs were half of them at scale).
   */
  private async putChanged(t: TeamReplica, renders: readonly V1Render[], changes: SyncChanges): Promise<void> {
    const now = this.o.clock.now();
    const changed: V1Render[] = [];
    for (const r of renders) {
      const d = differs(t, r, now, this.o.signedUrlTtlMs);
      if (d === 'changed') changed.push(r);
      else if (d === 'resigned') t.apply(r, now);
    }
    await this.put(t, changed, changes);
  }

  /** Store first, then memory (same newest-state rule in both). */
  async put(t: TeamReplica, renders: readonly V1Render[], changes: SyncChanges): Promise<void> {
    if (this.o.aborted?.()) throw new SyncAborted('the gateway is shutting down');
    await changes.renew?.();
    if (renders.length === 0) return;
    // a sync's work shares the event loop as long reads do (`pace`): however many teams and projects are walked at once,
    // their pages are written and applied one slice a turn, and requests are answered in between
    await paced();
    const seenAt = this.o.clock.now();
    await this.o.store.putRenders(t.id, renders, seenAt);
    // applied a few at a time (a render moves in each sorted order the team keeps)
    for (let i = 0; i < renders.length; i += APPLY_SLICE) {
      await paced();
      for (const r of renders.slice(i, i + APPLY_SLICE)) if (t.apply(r, seenAt)) changes.renders.push(r.id);
    }
  }
}

/**
 * How a render v1 shows differs from the replica's: `changed` (unknown, in another state, with other output variants),
 * `resigned` (the same, its held output URLs near the end of their lifetime: v1 signs them afresh on every read, a new
 * signature alone is no change), or not at all (null).
 */
function differs(t: TeamReplica, r: V1Render, now: number, ttlMs: number): 'changed' | 'resigned' | null {
  const known = t.renderState(r.id);
  if (!known) return 'changed';
  if (known.status !== r.status || known.updated !== (r.updated_at ?? r.created_at)) return 'changed';
  if (known.variants !== Object.keys(r.output ?? {}).sort().join(',')) return 'changed';
  const expiresAt = t.expiryOf(r.id, (k, seenAt) => outputExpiry(k.output, seenAt, ttlMs)) as number;
  return nearExpiry(expiresAt, known.seenAt, now) ? 'resigned' : null;
}

/**
 * A project whose fields changed; its thumbnail's new signature alone counts once the held URL nears the end of its
 * lifetime (read from the URL; without one, full syncs replace it).
 */
function projectChanged(prev: V1Project | undefined, next: V1Project, now: number, ttlMs: number): boolean {
  if (!prev) return true;
  const strip = (p: V1Project) => JSON.stringify({ ...p, thumbnail_url: p.thumbnail_url?.split('?')[0] ?? null });
  if (strip(prev) !== strip(next)) return true;
  if (!prev.thumbnail_url) return false;
  return urlExpiry(prev.thumbnail_url, now, ttlMs) - now < Math.max(5_000, ttlMs / 5);
}

/** The projects in the order a sync takes them: those in `heads` first, in its order, then the others. */
function inHeadOrder(projects: readonly V1Project[], heads: readonly string[] | undefined): V1Project[] {
  if (heads === undefined) return [...projects];
  const rank = new Map(heads.map((id, i) => [id, i]));
  const first = projects.filter((p) => rank.has(p.id)).sort((a, b) => (rank.get(a.id) as number) - (rank.get(b.id) as number));
  return [...first, ...projects.filter((p) => !rank.has(p.id))];
}
