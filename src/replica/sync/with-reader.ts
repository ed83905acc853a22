import type { TeamReaders } from '../../live/team-readers.js';
import type { V1Session } from '../../v1/client.js';
import { V1UnauthorizedError } from '../../v1/errors.js';
import type { Spend } from './budget.js';
import { TeamUnreachable } from './sync.js';

/**
 * Runs a walk of the team (`work`) with a key that reaches it, the next bound key when one is refused; false when none
 * does. The walk's calls are metered by `spend`, which learns the key's partition, and carry a request id of their own
 * (v1's logs tell them from legacy requests).
 */
export async function withReader(readers: TeamReaders, teamId: string, spend: Spend, work: (s: V1Session) => Promise<void>): Promise<boolean> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const r = await readers.sessionFor(teamId, spend.meter, `gateway-index-${teamId}`);
    if (!r) return false;
    spend.key = r.session.partition;
    try {
      await work(r.session);
      return true;
    } catch (e) {
      if (!(e instanceof TeamUnreachable || e instanceof V1UnauthorizedError)) throw e;
      // a refused key (401) is skipped everywhere; a key that no longer reaches this team, for this team only
      readers.refused(teamId, r.user, e instanceof V1UnauthorizedError);
    }
  }
  return false;
}
