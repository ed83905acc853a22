import type { Config } from '../../config/schema.js';
import { isRecordResource, type RecordResource } from '../../query/resources.js';
import type { Clock } from '../../lib/clock.js';
import type { ReplicaSnapshot } from './snapshot.js';
import { mapLimit } from '../../lib/limit.js';
import type { Rec } from '../../query/compile.js';
import type { ReplicaStore } from '../../store/replica-store.js';
import type { V1Session } from '../../v1/client.js';
import { V1NotFoundError } from '../../v1/errors.js';
import { V1_PAGE_MAX, type V1Project, type V1Render } from '../../v1/schemas.js';
import type { Peers } from '../holding/peers.js';
import { outputExpiry, refreshAt, urlExpiry } from '../sync/signed-urls.js';
import { SyncAborted, type TeamSync } from '../sync/sync.js';
import type { ProjectEntry } from '../team/team-records.js';
import type { TeamReplica } from '../team/team-replica.js';

/**
 * When a project's signed thumbnail (its poster) must be refreshed: its expiry read from the URL once per copy held, its
 * lifetime counted from when the gateway got the project (undefined: no thumbnail).
 */
function posterRefreshAt(e: ProjectEntry, ttl: number): number | undefined {
  const url = e.project.thumbnail_url;
  if (!url) return undefined;
  e.expiresAt ??= urlExpiry(url, e.seenAt, ttl);
  return refreshAt(e.expiresAt, e.seenAt);
}

/**
 * One read's walk of its projects' render pages, kept across the chunks of a streamed answer: each chunk's refresh goes
 * on from where the last one stopped (the project's cursor) instead of from the head again, so a whole export reads each
 * project's pages once.
 */
export class RefreshWalk {
  private readonly projects = new Map<string, { cursor: string | undefined; covered: number; done: boolean }>();

  /**
   * `whole`: the read answers every match of its scope (`limit=-1`), a chunk at a time in date order, so a project whose
   * renders are due is met again chunk after chunk: its pages are walked even for one render (never by id — the walk
   * would pass that render again), and the calls of the whole export stay within one walk of the scope's pages.
   */
  constructor(readonly whole = false) {}

  /** Teams whose project list this read has read (once a read: a poster still due after it is read by id). */
  readonly projectListsRead = new Set<string>();

  /** Where the walk of a project stands: renders read so far (newest first), the cursor of the next page. */
  of(projectId: string): { cursor: string | undefined; covered: number; done: boolean } {
    let st = this.projects.get(projectId);
    if (!st) {
      st = { cursor: undefined, covered: 0, done: false };
      this.projects.set(projectId, st);
    }
    return st;
  }
}

/**
 * Where each resource's signed URLs are: a render's output (and its poster, its project's thumbnail when it has no
 * still), or a poster that is its project's signed thumbnail (the project's v1 id, read from the team), or none.
 */
const SIGNED: { readonly [R in RecordResource]: 'output' | ((t: TeamReplica, id: string) => string | undefined) | null } = {
  render: 'output',
  project: (t, id) => t.projectV1(id),
  template: (t, id) => t.template(id)?.projectId,
  account: null,
};

export interface OutputRefreshDeps {
  readonly config: Pick<Config, 'FANOUT_CONCURRENCY' | 'SIGNED_URL_TTL_MS'>;
  readonly clock: Clock;
  readonly store: ReplicaStore;
  readonly sync: TeamSync;
  readonly peers: Peers;
}

/**
 * Signed URLs near the end of their life, refreshed before they are answered: render outputs (through their project's
 * list pages or by id, whichever takes fewer calls) and project and template posters (the project's signed thumbnail),
 * written back to the replica and announced to the other instances.
 */
export class OutputRefresh {
  constructor(private readonly deps: OutputRefreshDeps) {}

  /**
   * What of the answered records must be refreshed at `now` (signed URLs near expiry: render outputs, project and
   * template posters), and from when the first of them must be (`refreshAt`; ≤ now when some already must).
   */
  private examine(snapshot: ReplicaSnapshot, recs: readonly Rec[], resource: string, now: number) {
    const ttl = this.deps.config.SIGNED_URL_TTL_MS;
    const byProject = new Map<string, { t: TeamReplica; ids: Set<string> }>();
    const thumbnails = new Map<string, TeamReplica>();
    let first = Number.POSITIVE_INFINITY;
    /** Whether a URL to refresh from `at` is due now (the first such moment kept). */
    const dueFrom = (at: number) => {
      first = Math.min(first, at);
      return now >= at;
    };
    // a project's poster: due when its signed thumbnail is (posterRefreshAt)
    const nearEnd = (t: TeamReplica, projectId: string) => {
      const e = t.projects.get(projectId);
      const at = e ? posterRefreshAt(e, ttl) : undefined;
      return at !== undefined && dueFrom(at);
    };
    const signed = isRecordResource(resource) ? SIGNED[resource] : null;
    if (typeof signed === 'function') {
      // a project's or a template's poster: its project's signed thumbnail
      for (const rec of recs) {
        for (const t of snapshot.teams) {
          const v1 = signed(t, rec.id as string);
          if (v1 && nearEnd(t, v1)) thumbnails.set(v1, t);
        }
      }
    }
    // (an output's expiry is read from its URLs once per state held)
    const expiry = (r: V1Render, seenAt: number) => outputExpiry(r.output, seenAt, ttl);
    for (const rec of signed === 'output' ? recs : []) {
      // the render's row found once, in the team holding it
      let t: TeamReplica | undefined;
      let out: ReturnType<TeamReplica['outputOf']>;
      for (const team of snapshot.teams) {
        out = team.outputOf(rec.id as string, expiry);
        if (out !== undefined) {
          t = team;
          break;
        }
      }
      if (!t || !out) continue;
      // an output without a still shows its project's thumbnail (signed too)
      if (nearEnd(t, out.projectId)) thumbnails.set(out.projectId, t);
      if (!dueFrom(refreshAt(out.expiresAt, out.seenAt))) continue;
      const g = byProject.get(out.projectId) ?? { t, ids: new Set<string>() };
      g.ids.add(t.idOfRow(out.row));
      byProject.set(out.projectId, g);
    }
    return { thumbnails, byProject, refreshAt: first };
  }

  /**
   * Refreshes the answered renders whose output URLs near expiry, with the request's own key and meter: by id, or
   * through their project's list pages when that takes fewer calls. Written back to the replica. Resolves with the
   * moment the first signed URL of these records must be refreshed next (an answer kept longer is not given).
   */
  async refresh(session: V1Session, snapshot: ReplicaSnapshot, recs: readonly Rec[], resource: string, walk = new RefreshWalk()): Promise<number> {
    const { config, clock } = this.deps;
    const { thumbnails, byProject, refreshAt: next } = this.examine(snapshot, recs, resource, clock.now());
    if (thumbnails.size === 0 && byProject.size === 0) return next; // nothing due: the usual case, looked at once
    // posters: a team with more of them due than its project list has pages is read through those pages (every project
    // they show kept fresh: an export meets them all), the others project by project
    const byTeam = new Map<TeamReplica, string[]>();
    for (const [projectId, t] of thumbnails) byTeam.set(t, [...(byTeam.get(t) ?? []), projectId]);
    const single: [string, TeamReplica][] = [];
    for (const [t, ids] of byTeam) {
      // (a whole read meets every project of its scope: the team's due posters count, not only this chunk's)
      const due = walk.whole ? this.postersDue(t, clock.now()) : ids.length;
      if (due > Math.ceil(t.projects.size / V1_PAGE_MAX) && !walk.projectListsRead.has(t.id)) {
        walk.projectListsRead.add(t.id);
        if (await this.projectPages(session, t)) continue;
      }
      for (const id of ids) single.push([id, t]);
    }
    await mapLimit(single, config.FANOUT_CONCURRENCY, async ([projectId, t]) => {
      try {
        const p = await session.project(projectId);
        await this.deps.store.putProjects(t.id, [p]);
        t.setProject({ project: p, templates: null, backfilled: false }, clock.now()); // (templates and checkpoint are kept)
      } catch (e) {
        if (!(e instanceof V1NotFoundError)) throw e;
      }
    });
    await mapLimit([...byProject], config.FANOUT_CONCURRENCY, async ([projectId, { t, ids }]) => {
      const fresh = await this.read(session, t, projectId, ids, walk);
      try {
        await this.deps.sync.put(t, fresh, { renders: [] });
      } catch (e) {
        if (e instanceof SyncAborted) return; // shutting down: the fresh copies are answered, not kept
        throw e;
      }
      await this.deps.peers.publishRenders(t.id, fresh.map((r) => r.id));
    });
    return this.examine(snapshot, recs, resource, clock.now()).refreshAt;
  }

  /** How many of the team's projects have a signed thumbnail that must be refreshed at `now`. */
  private postersDue(t: TeamReplica, now: number): number {
    const ttl = this.deps.config.SIGNED_URL_TTL_MS;
    let n = 0;
    for (const e of t.projects.values()) {
      const at = posterRefreshAt(e, ttl);
      if (at !== undefined && now >= at) n++;
    }
    return n;
  }

  /** A team's projects read again through its project list pages (false: the team is not reachable with this key). */
  private async projectPages(session: V1Session, t: TeamReplica): Promise<boolean> {
    const held: V1Project[] = [];
    try {
      for await (const page of session.pages((cursor) => session.projectsPage(t.id, { limit: V1_PAGE_MAX, ...(cursor ? { cursor } : {}) }))) {
        for (const p of page) if (t.projects.has(p.id)) held.push(p);
      }
    } catch (e) {
      if (e instanceof V1NotFoundError) return false;
      throw e;
    }
    if (held.length > 0) await this.deps.store.putProjects(t.id, held);
    const now = this.deps.clock.now();
    for (const p of held) t.setProject({ project: p, templates: null, backfilled: false }, now); // (templates and checkpoint are kept)
    return true;
  }

  /**
   * The renders of one project read again: through its list pages when fewer calls — going on from where this read's
   * walk of the project stopped — the rest by id.
   */
  private async read(session: V1Session, t: TeamReplica, projectId: string, ids: ReadonlySet<string>, walk: RefreshWalk): Promise<V1Render[]> {
    const fresh: V1Render[] = [];
    const st = walk.of(projectId);
    // by list pages (60 a call, newest first) when the deepest of them is reached in fewer calls than one per render;
    // every render those pages show is kept fresh too (a streamed limit=-1's next chunk finds them fresh, and its
    // deeper renders are read on from the walk's cursor)
    if (!st.done && (ids.size > 1 || st.covered > 0 || walk.whole)) {
      const position = new Map(t.projectRenderIds(projectId).map((id, i) => [id, i]));
      // the renders the walk has not passed yet (v1's pages are often short: they are looked for, not counted); in a
      // whole read every due render counts while the walk goes on: one just behind the cursor by the replica's order
      // may be on v1's next page (renders created the same second are not ordered alike), which the walk reads anyway
      const ahead = new Set([...ids].filter((id) => walk.whole || (position.get(id) ?? 0) >= st.covered));
      const deepest = Math.max(-1, ...[...ahead].map((id) => position.get(id) ?? 0));
      const estimate = deepest < 0 ? 0 : Math.max(1, Math.floor((deepest - st.covered) / V1_PAGE_MAX) + 1);
      // (a whole read walks on unless the deepest due render lies far deeper than a page a render: a sparse match)
      if (estimate > 0 && estimate < ahead.size + (st.covered > 0 || walk.whole ? 1 : 0)) {
        try {
          // never more calls than one per render
          const most = ahead.size;
          for (let i = 0; i < most && ahead.size > 0 && !st.done; i++) {
            const page = await session.rendersPage(projectId, { limit: V1_PAGE_MAX, ...(st.cursor ? { cursor: st.cursor } : {}) });
            fresh.push(...page.data);
            for (const r of page.data) ahead.delete(r.id);
            st.covered += page.data.length;
            st.cursor = page.next_cursor ?? undefined;
            if (!st.cursor) st.done = true;
          }
        } catch (e) {
          if (!(e instanceof V1NotFoundError)) throw e;
          st.done = true;
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
    return fresh;
  }
}
