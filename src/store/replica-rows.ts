import type { V1Project, V1Render, V1Team, V1TeamMember, V1TemplateSummary } from '../v1/schemas.js';
import type { Database } from './schema.js';

/** The rows of the replica's tables as the store gives them (src/store/replica-store.ts). */

export type BackfillState = 'backfilling' | 'ready';

/** What the store keeps of one indexed team besides its renders. */
export interface TeamRow {
  readonly team: V1Team;
  readonly members: readonly V1TeamMember[];
  readonly state: BackfillState;
  readonly backfilledAt: number | null;
  readonly syncedAt: number | null;
  readonly webhookAt: number | null;
  /** When the last sync of the team started, on whichever instance (null: none since migration 0014). */
  readonly syncStartedAt?: number | null;
}

export interface ProjectRow {
  readonly project: V1Project;
  readonly templates: readonly V1TemplateSummary[] | null;
  readonly backfilled: boolean;
  /** The newest created_at as of the last completed walk of the project's list (null: never walked to the end). */
  readonly headMark?: number | null;
}

/** A render as v1 showed it, and when the gateway saw it (signed URLs are dated from then). */
export interface RenderRow {
  readonly render: V1Render;
  readonly seenAt: number;
}

/** What changed in a team's renders since a change mark (`ReplicaStore.changesSince`). */
export interface ChangesSince {
  /** Rows read. */
  readonly rows: number;
  /** The mark to read from next time (every change not read here is at or after it). */
  readonly mark: number;
}

/** A team's row with its counts (`ReplicaStore.teams`). */
export type TeamCounted = TeamRow & { readonly renders: number; readonly projects: number; readonly moving: number };

export function toTeamRow(r: Database['index_teams']): TeamRow {
  const n = (v: number | null) => (v === null ? null : Number(v));
  return {
    team: JSON.parse(r.team) as V1Team,
    members: JSON.parse(r.members) as V1TeamMember[],
    state: r.state === 'ready' ? 'ready' : 'backfilling',
    backfilledAt: n(r.backfilled_at),
    syncedAt: n(r.synced_at),
    webhookAt: n(r.webhook_at),
    ...(r.sync_started_at === null || r.sync_started_at === undefined ? {} : { syncStartedAt: Number(r.sync_started_at) }),
  };
}

export function toProjectRow(r: Database['index_projects']): ProjectRow {
  return {
    project: JSON.parse(r.project) as V1Project,
    templates: r.templates === null ? null : (JSON.parse(r.templates) as V1TemplateSummary[]),
    backfilled: Number(r.backfilled) === 1,
    headMark: r.head_mark === null || r.head_mark === undefined ? null : Number(r.head_mark),
  };
}
