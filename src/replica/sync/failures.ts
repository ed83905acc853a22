import type { Logger } from 'pino';
import { SCHEDULER_TICK_MS } from './freshness.js';

/** The longest a team whose syncs keep failing waits between two background tries. */
export const RETRY_MOST_MS = 60_000;

/**
 * How long after its last failed sync the background tries a team again: its cadence's interval, doubled with each
 * failure in a row, at most RETRY_MOST_MS. Before, a team v1 kept failing (an outage, a key no longer valid) was tried
 * at every tick once its bound or a deadline had passed, each try a lease and a reservation in the store.
 */
export function retryAfterMs(intervalMs: number, tries: number): number {
  return Math.min(RETRY_MOST_MS, Math.max(SCHEDULER_TICK_MS, intervalMs) * 2 ** Math.min(Math.max(0, tries - 1), 16));
}

/** Why a team's last sync failed, when, and how many failed in a row. */
export interface SyncFailure {
  readonly message: string;
  readonly at: number;
  readonly tries: number;
}

/** Each team's last failed walk (one entry a team held), cleared by the next that succeeds; the back-off it sets. */
export class SyncFailures {
  private readonly byTeam = new Map<string, SyncFailure>();

  get(teamId: string): SyncFailure | undefined {
    return this.byTeam.get(teamId);
  }

  has(teamId: string): boolean {
    return this.byTeam.has(teamId);
  }

  /** A walk of the team failed at `at` (`e`): one more in a row, logged. */
  add(teamId: string, e: unknown, at: number, logger: Logger): void {
    const message = e instanceof Error ? e.message : String(e);
    this.byTeam.set(teamId, { message, at, tries: (this.byTeam.get(teamId)?.tries ?? 0) + 1 });
    logger.warn({ team: teamId, err: message }, 'render index: sync failed (reads of the team stay on its last state)');
  }

  clear(teamId: string): void {
    this.byTeam.delete(teamId);
  }

  /** Whether the team, synced every `intervalMs` when well, may be tried again at `now` (`retryAfterMs`). */
  mayTry(teamId: string, intervalMs: number, now: number): boolean {
    const failed = this.byTeam.get(teamId);
    return !failed || now - failed.at >= retryAfterMs(intervalMs, failed.tries);
  }
}
