import type { TeamReplica } from '../team/team-replica.js';
import { traitsOf } from '../../query/resources.js';

/**
 * What a read can touch, in legacy uuids, as its plan narrows it: the records it names (`ids`), the projects
 * (`projects`) or accounts (`accounts`) its filter names; none of them: every team of the key's reach.
 */
export interface ReadScope {
  readonly resource: string;
  readonly ids: readonly string[] | null;
  readonly projects: readonly string[] | null;
  readonly accounts: readonly string[] | null;
  /** The answer counts the whole reach (`meta=total_count`): never answered from part of it. */
  readonly total: boolean;
  /** The answer reads a one-to-many relation (a project's or an account's renders, an account's projects). */
  readonly manyRelations: boolean;
}

/** Why a read is answered from part of the reach, and what is still missing. */
export interface PartialState {
  readonly reason: string;
  /** Teams of the reach not held whole: being read from the store, or being backfilled (ids). */
  readonly loading: readonly string[];
  readonly backfilling: readonly string[];
  /** Projects of the backfilling teams held in memory but not checkpointed yet (v1 ids). */
  readonly projectsPending: readonly string[];
}

/** Whether a project of a team held in memory is copied whole: the team backfilled, or the project checkpointed. */
export function projectHeld(t: TeamReplica, projectId: string): boolean {
  return t.state === 'ready' || t.projects.get(projectId)?.backfilled === true;
}

/**
 * Whether every record the scope can touch is held whole by the given teams (those in memory: backfilled, or being
 * backfilled with some projects checkpointed): each named render found in a copied project, else each named project
 * copied, else each named account's team backfilled. A scope naming nothing (the whole reach) is never held by part of
 * it; nor is a count of the reach or a one-to-many relation (it may reach a project not copied yet). Only renders.
 */
export function scopeHeld(scope: ReadScope, teams: readonly TeamReplica[], held: ProjectHeld = projectHeld): boolean {
  if (!traitsOf(scope.resource).rows || scope.total || scope.manyRelations) return false;
  if (scope.ids) return scope.ids.length > 0 && scope.ids.every((u) => renderHeld(teams, u.toLowerCase(), held));
  if (scope.projects) return scope.projects.length > 0 && scope.projects.every((u) => projectUuidHeld(teams, u.toLowerCase(), held));
  if (scope.accounts) return scope.accounts.length > 0 && scope.accounts.every((u) => accountHeld(teams, u.toLowerCase()));
  return false;
}

/** Whether a project of a team held in memory may answer for itself (`projectHeld`, or a narrower rule). */
export type ProjectHeld = (t: TeamReplica, projectId: string) => boolean;

function renderHeld(teams: readonly TeamReplica[], uuid: string, held: ProjectHeld): boolean {
  for (const t of teams) {
    const v1 = t.renderV1(uuid);
    if (v1 === undefined) continue;
    const project = t.projectOf(v1);
    return project !== undefined && held(t, project);
  }
  return false;
}

function projectUuidHeld(teams: readonly TeamReplica[], uuid: string, held: ProjectHeld): boolean {
  for (const t of teams) {
    const v1 = t.projectV1(uuid);
    if (v1 !== undefined) return held(t, v1);
  }
  return false;
}

function accountHeld(teams: readonly TeamReplica[], uuid: string): boolean {
  const t = teams.find((x) => x.accountRecord().id === uuid);
  return t !== undefined && t.state === 'ready';
}

/** The projects of backfilling teams not copied (checkpointed yet, or by `held`'s rule): what explain lists as pending. */
export function pendingProjects(teams: readonly TeamReplica[], held: ProjectHeld = projectHeld): string[] {
  const out: string[] = [];
  for (const t of teams) {
    if (t.state === 'ready') continue;
    for (const id of t.projects.keys()) if (!held(t, id)) out.push(id);
  }
  return out;
}
