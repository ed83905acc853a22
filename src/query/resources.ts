/**
 * The legacy resources answered from records, and the one-to-many relations between them: the tables every record
 * source, the migration proof and the planner key by resource are `Record`s over these names, so a new resource (or
 * relation) added here is a compile error in each place that must learn it. `mappings/resources.json` holds the fields;
 * at start-up its one-to-many relations are checked against `ONE_TO_MANY` (src/config/mappings.ts).
 */
export const RECORD_RESOURCES = ['render', 'project', 'template', 'account'] as const;
export type RecordResource = (typeof RECORD_RESOURCES)[number];

export function isRecordResource(name: string): name is RecordResource {
  return (RECORD_RESOURCES as readonly string[]).includes(name);
}

/** A one-to-many relation: `parent`'s alias field `field` lists the `child` records whose many-to-one `via` names it. */
export interface OneToManyRule {
  readonly parent: RecordResource;
  readonly field: string;
  readonly child: RecordResource;
  readonly via: string;
}

export const ONE_TO_MANY = {
  'project.renders': { parent: 'project', field: 'renders', child: 'render', via: 'project' },
  'account.renders': { parent: 'account', field: 'renders', child: 'render', via: 'account' },
  'account.projects': { parent: 'account', field: 'projects', child: 'project', via: 'account' },
} as const satisfies Readonly<Record<string, OneToManyRule>>;
export type OneToMany = keyof typeof ONE_TO_MANY;

/** The relation of `parentResource`'s field `field`, or undefined (not a one-to-many the records reach). */
export function oneToMany(parentResource: string, field: string): OneToMany | undefined {
  const name = `${parentResource}.${field}`;
  return Object.hasOwn(ONE_TO_MANY, name) ? (name as OneToMany) : undefined;
}

/**
 * What v1 offers for each resource, as the planner and the live source read it: the path of its v1 read by id (a filter
 * on ids is then a direct read), the filter paths that name its account or project (each narrows the teams or projects
 * walked), whether its id is an account's (a team: ids narrow the teams), and whether v1 lists it per project in a
 * creation order and per status (renders: the status and a date_created order are pushed down, the lists merged).
 */
export interface ResourceTraits {
  readonly byId: '/v1/renders' | '/v1/projects' | null;
  readonly accountPaths: readonly string[];
  readonly projectPaths: readonly string[];
  readonly idIsAccount: boolean;
  readonly streamed: boolean;
  /**
   * Held by the replica as typed columns, a row a record (the renders, `replica/team/columns.ts`): a filter is answered
   * on the columns, a part of the reach holding the read's scope may answer it, the id pairs of the records answered are
   * given as they are answered, and an overlay change flags the rows it touches (any other type's rebuilds the team).
   */
  readonly rows: boolean;
  /** Its records carry signed URLs (an output, a poster) the replica refreshes before they are answered. */
  readonly signedUrls: boolean;
  /** The gateway keeps overlay values for it (fields written by PATCH that v1 has not: `mappings/writes.json`). */
  readonly overlays: boolean;
  /** The field that answers the render data the gateway stores (`data`; its bytes weighed before they are read), or null. */
  readonly dataField: string | null;
}

export const RESOURCE_TRAITS = {
  render: {
    byId: '/v1/renders', accountPaths: ['account', 'project.account'], projectPaths: ['project'], idIsAccount: false, streamed: true,
    rows: true, signedUrls: true, overlays: true, dataField: 'data',
  },
  project: {
    byId: '/v1/projects', accountPaths: ['account', 'project.account'], projectPaths: [], idIsAccount: false, streamed: false,
    rows: false, signedUrls: true, overlays: true, dataField: null,
  },
  template: {
    byId: null, accountPaths: ['account', 'project.account'], projectPaths: [], idIsAccount: false, streamed: false,
    rows: false, signedUrls: true, overlays: false, dataField: null,
  },
  account: {
    byId: null, accountPaths: [], projectPaths: [], idIsAccount: true, streamed: false, rows: false, signedUrls: false, overlays: true, dataField: null,
  },
} as const satisfies Readonly<Record<RecordResource, ResourceTraits>>;

/** The resources the gateway keeps overlay values for: those whose traits say `overlays: true` (the type follows the table). */
export type OverlayType = { [R in RecordResource]: (typeof RESOURCE_TRAITS)[R]['overlays'] extends true ? R : never }[RecordResource];

/** A resource's traits; a name that is no record resource (the user) has none of them. */
export function traitsOf(resource: string): ResourceTraits {
  return isRecordResource(resource) ? RESOURCE_TRAITS[resource] : NO_TRAITS;
}

const NO_TRAITS: ResourceTraits = {
  byId: null, accountPaths: [], projectPaths: [], idIsAccount: false, streamed: false, rows: false, signedUrls: false, overlays: false, dataField: null,
};
