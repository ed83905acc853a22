import type { TeamCounted } from '../../store/replica-rows.js';
import type { TeamReplica } from '../team/team-replica.js';

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
  /** When the team's last sync started, on whichever instance (the lease records it). */
  readonly last_sync_started: string | null;
  readonly last_webhook: string | null;
  /**
   * `trusted`: its webhooks registered and nothing lost since its last catch-up (not head-polled); `catch-up`: deliveries
   * may have been lost (polled until its renders are walked again for that window); `polled`: no webhooks registered.
   */
  readonly webhooks: WebhookState;
  readonly sync_calls_last_minute: number;
  /** The team's computed staleness bound: a true upper bound for any of its renders (its quiet projects' rotation included). */
  readonly bound_ms: number;
  /** The bound of its active projects and of its renders not yet final (checked at every sync); `bound_ms` without a rotation. */
  readonly active_bound_ms: number;
  /** Projects with a render created within INDEX_ACTIVE_MS (0 for a team not in memory: not known from its rows). */
  readonly active_projects: number;
  readonly syncing: boolean;
  readonly last_error: string | null;
}

export type WebhookState = 'trusted' | 'catch-up' | 'polled';

/** A team's row in the store with its counts. */
export type StatusRow = TeamCounted;

/** What the status of a team is read from besides its row in the store and its copy in memory. */
export interface StatusFacts {
  readonly now: number;
  readonly callsLastMinute: (teamId: string) => number;
  /** The team's computed staleness bound (from its store rows for a team not in memory). */
  readonly boundOf: (row: StatusRow, t: TeamReplica | undefined) => number;
  /** The bound of the team's active projects and how many they are (a team not in memory: its bound, none). */
  readonly activity: (row: StatusRow, t: TeamReplica | undefined, bound: number) => { readonly boundMs: number; readonly projects: number };
  readonly busy: (teamId: string) => boolean;
  readonly lastError: (teamId: string) => string | null;
  readonly webhooks: (teamId: string) => WebhookState;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A team as operators see it (`/_gateway/index`, `legacy-gateway index status`): the store's row, memory's copy. */
export function teamStatus(row: StatusRow, t: TeamReplica | undefined, f: StatusFacts): TeamStatus {
  const synced = Math.max(row.syncedAt ?? 0, t?.syncedAt ?? 0) || null;
  const bound = f.boundOf(row, t);
  const active = f.activity(row, t, bound);
  return {
    team: row.team.id,
    name: row.team.name,
    state: t?.state ?? row.state,
    renders: t?.size ?? row.renders,
    projects: t?.projects.size ?? row.projects,
    in_memory: !!t,
    backfilled_at: iso(row.backfilledAt),
    last_sync: iso(synced),
    age_ms: synced === null ? null : f.now - synced,
    last_sync_started: iso(row.syncStartedAt ?? null),
    last_webhook: iso(Math.max(row.webhookAt ?? 0, t?.webhookAt ?? 0) || null),
    webhooks: f.webhooks(row.team.id),
    sync_calls_last_minute: f.callsLastMinute(row.team.id),
    bound_ms: bound,
    active_bound_ms: active.boundMs,
    active_projects: active.projects,
    syncing: f.busy(row.team.id),
    last_error: f.lastError(row.team.id),
  };
}

/** Ages of the backfilled teams in memory (for /metrics: max and a histogram, never a label per team). */
export function ages(teams: Iterable<TeamReplica>, now: number): number[] {
  return [...teams].filter((t) => t.state === 'ready').map((t) => now - (t.syncedAt ?? 0));
}

/** Renders held in memory, every team counted. */
export function rendersIn(teams: Iterable<TeamReplica>): number {
  let n = 0;
  for (const t of teams) n += t.size;
  return n;
}
