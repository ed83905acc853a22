import { LRUCache } from 'lru-cache';
import type { Deps } from '../deps.js';
import { V1UnauthorizedError } from '../v1/errors.js';
import { Catalog } from './catalog.js';
import { CallMeter } from './meter.js';

/**
 * The gateway's own access to a team's data, for work no legacy request asks for (checking a webhook against the
 * team's projects; later, filling the render index): the key of the first bound user whose key reaches the team.
 * Which user reaches which team is learned from `GET /v1/teams` per key (behind the per-key cache) and kept for
 * the metadata TTL; a refused key is skipped and the next one tried.
 */
export class TeamReaders {
  private readonly byTeam = new LRUCache<string, string>({ max: 10_000, ttl: 60_000 });

  constructor(private readonly deps: Deps) {}

  /** A catalog that reads team `teamId` with some bound user's key, or undefined when no bound key reaches it. */
  async catalogFor(teamId: string): Promise<Catalog | undefined> {
    const known = this.byTeam.get(teamId);
    if (known) {
      const c = await this.catalogOf(known);
      if (c && (await c.teams()).some((t) => t.id === teamId)) return c;
      this.byTeam.delete(teamId);
    }
    for (const u of await this.deps.users.boundUsers()) {
      const c = await this.catalogOf(u.id);
      if (!c) continue;
      let teams;
      try { teams = await c.teams(); } catch (e) { if (e instanceof V1UnauthorizedError) continue; throw e; }
      for (const t of teams) if (!this.byTeam.has(t.id)) this.byTeam.set(t.id, u.id);
      if (teams.some((t) => t.id === teamId)) return c;
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
