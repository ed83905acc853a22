import { LRUCache } from 'lru-cache';
import type { V1Cache } from './v1-cache.js';
import type { V1Meter, V1Session } from '../v1/client.js';
import { V1UnauthorizedError } from '../v1/errors.js';
import { Catalog } from './catalog.js';
import { CallMeter } from './meter.js';

/** What the team readers use, given by the composition root. */
export interface TeamReadersDeps {
  readonly config: { readonly UPSTREAM_CALL_BUDGET: number; readonly FANOUT_CONCURRENCY: number };
  readonly users: { boundUsers(): Promise<readonly { readonly id: string }[]> };
  readonly cache: V1Cache;
  v1For(userId: string, meter?: V1Meter, requestId?: string): Promise<V1Session>;
}

/**
 * The gateway's own access to a team's data, for work no legacy request asks for (checking a webhook against the
 * team's projects; filling the render index): the key of the first bound user whose key reaches the team.
 * Which user reaches which team is learned from `GET /v1/teams` per key (behind the per-key cache) and kept for
 * the metadata TTL; a refused key is skipped (`refused`) and the next one tried.
 */
export class TeamReaders {
  private readonly byTeam = new LRUCache<string, string>({ max: 10_000, ttl: 60_000 });
  /** Users whose key v1 refused lately: not asked again for a while. */
  private readonly skip = new LRUCache<string, true>({ max: 10_000, ttl: 60_000 });
  /** Users whose key no longer reaches a team (`user team`). */
  private readonly skipFor = new LRUCache<string, true>({ max: 10_000, ttl: 60_000 });

  constructor(private readonly deps: TeamReadersDeps) {}

  /** A catalog that reads team `teamId` with some bound user's key, or undefined when no bound key reaches it. */
  async catalogFor(teamId: string): Promise<Catalog | undefined> {
    const user = await this.userFor(teamId);
    return user ? this.catalogOf(user) : undefined;
  }

  /** A v1 session (calls reported to `meter`) of a bound user whose key reaches the team. */
  async sessionFor(teamId: string, meter: V1Meter, requestId?: string): Promise<{ session: V1Session; user: string } | undefined> {
    const user = await this.userFor(teamId);
    if (!user) return undefined;
    try {
      return { session: await this.deps.v1For(user, meter, requestId), user };
    } catch {
      return undefined;
    }
  }

  /**
   * The key of `user` was refused for `teamId`: the next bound user is tried from now on — for every team when v1 refused
   * the key itself (`everywhere`), else for this team only (the user left it).
   */
  refused(teamId: string, user: string, everywhere = true): void {
    if (this.byTeam.get(teamId) === user) this.byTeam.delete(teamId);
    if (everywhere) this.skip.set(user, true);
    else this.skipFor.set(`${user} ${teamId}`, true);
  }

  /** The bound user whose key reaches the team (the one found before, while it still does). */
  async userFor(teamId: string): Promise<string | undefined> {
    const known = this.byTeam.get(teamId);
    if (known && !this.skip.has(known) && !this.skipFor.has(`${known} ${teamId}`)) {
      const c = await this.catalogOf(known);
      try {
        if (c && (await c.teams()).some((t) => t.id === teamId)) return known;
      } catch (e) {
        if (!(e instanceof V1UnauthorizedError)) throw e;
      }
      this.byTeam.delete(teamId);
    }
    for (const u of await this.deps.users.boundUsers()) {
      if (this.skip.has(u.id) || this.skipFor.has(`${u.id} ${teamId}`)) continue;
      const c = await this.catalogOf(u.id);
      if (!c) continue;
      let teams;
      try { teams = await c.teams(); } catch (e) { if (e instanceof V1UnauthorizedError) { this.skip.set(u.id, true); continue; } throw e; }
      for (const t of teams) if (!this.byTeam.has(t.id)) this.byTeam.set(t.id, u.id);
      if (teams.some((t) => t.id === teamId)) return u.id;
    }
    return undefined;
  }

  private async catalogOf(userId: string): Promise<Catalog | undefined> {
    try {
      const meter = new CallMeter(this.deps.config.UPSTREAM_CALL_BUDGET);
      return new Catalog(await this.deps.v1For(userId, meter), this.deps.cache, meter, this.deps.config.FANOUT_CONCURRENCY);
    } catch {
      return undefined; // no key bound any more
    }
  }
}
