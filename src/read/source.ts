import type { ReadScope, ReadSource, ReplicaService } from '../replica/service.js';
import type { V1Session } from '../v1/client.js';

/**
 * The one place a read's record source is chosen: the replica when it holds every team the read can touch (a stale team
 * synced first), else live v1. `known`: a source chosen earlier for the same request without the read's scope (the
 * answer cache's look-up, before the query is planned) — kept when it is the replica's; a live one is asked again with
 * the scope, since a part of the reach still loading or backfilling may answer this read.
 */
export async function chooseSource(
  replica: ReplicaService | null, session: V1Session, now: number, scope?: ReadScope, known?: ReadSource,
): Promise<ReadSource> {
  if (!replica) return known ?? { kind: 'live', reason: 'INDEX_ENABLED=false' };
  if (known?.kind === 'replica') return known;
  return replica.source(session, now, scope);
}
