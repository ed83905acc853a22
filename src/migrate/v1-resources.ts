import { isRecordResource, RECORD_RESOURCES, type RecordResource } from '../query/resources.js';

/**
 * Each legacy resource as v1 knows it, for the migration guide: the parameter its read by id takes, the call that lists
 * it (the name its v1 objects have in an equivalent's calls), and whether v1 signs a delivery for each of its status
 * changes. One entry a resource — a `Record` the compiler holds complete. Pure.
 */
export interface V1Resource {
  /** The parameter its v1 id is given in (`GET /v1/renders/{render_id}`, `?team_id=`). */
  readonly idParam: 'render_id' | 'project_id' | 'team_id' | 'template_id';
  /** The call that lists it (`GET /v1/teams` for the accounts): the name its v1 objects are read back under. */
  readonly list: 'renders' | 'projects' | 'teams' | 'templates';
  /** v1 sends a signed webhook for each status change: polling its status is replaced by a delivery. */
  readonly webhooks: boolean;
}

export const V1_RESOURCES: { readonly [R in RecordResource]: V1Resource } = {
  render: { idParam: 'render_id', list: 'renders', webhooks: true },
  project: { idParam: 'project_id', list: 'projects', webhooks: false },
  account: { idParam: 'team_id', list: 'teams', webhooks: false },
  template: { idParam: 'template_id', list: 'templates', webhooks: false },
};

/**
 * The resources the migration guide describes: those answered from records and the user (`/users/me`). Its tables keyed
 * by resource (`MAIN_CALLS`, `TRANSLATED`, `V1_FIELD`, `RELATION_ID`, `EMBEDDED`, `SORT_FIELD`, the derived fields) are
 * `Record`s over it: a new resource is a compile error in each until the guide learns it.
 */
export const GUIDE_RESOURCES = [...RECORD_RESOURCES, 'user'] as const;
export type GuideResource = (typeof GUIDE_RESOURCES)[number];

export const isGuideResource = (name: string | null | undefined): name is GuideResource =>
  !!name && (GUIDE_RESOURCES as readonly string[]).includes(name);

/** A resource's v1 facts; undefined for a name that is no record resource (the user: `/users/me`, or none). */
export function v1Of(resource: string | null | undefined): V1Resource | undefined {
  return resource && isRecordResource(resource) ? V1_RESOURCES[resource] : undefined;
}
