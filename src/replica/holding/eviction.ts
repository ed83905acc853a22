import type { Logger } from 'pino';
import type { TeamReplica } from '../team/team-replica.js';

export interface EvictionOptions {
  /** INDEX_MEMORY_MB in bytes. */
  readonly maxBytes: number;
  /** A team being synced or backfilled stays (its sync writes to it). */
  readonly busy: (teamId: string) => boolean;
  readonly logger: Logger;
}

/**
 * Teams beyond the memory bound leave memory, least recently read first (they are read back from the store); the team
 * `keep` (just loaded or filled), a busy team and the last team stay.
 */
export function evict(teams: Map<string, TeamReplica>, o: EvictionOptions, keep?: string): void {
  let total = 0;
  for (const t of teams.values()) total += t.approxBytes;
  const order = [...teams.values()].sort((a, b) => a.readAt - b.readAt);
  for (const t of order) {
    if (total <= o.maxBytes || teams.size <= 1) break;
    if (t.id === keep || o.busy(t.id)) continue;
    teams.delete(t.id);
    total -= t.approxBytes;
    o.logger.info({ team: t.id }, 'render index: team evicted from memory (INDEX_MEMORY_MB)');
  }
}
