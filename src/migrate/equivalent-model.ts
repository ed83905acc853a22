// What a v1 equivalent is made of — its calls, client steps, parameters, blocked fields — built by equivalent.ts.
import { DATE_FUNCTIONS, type DateFunction } from '../query/schema.js';
import type { OutputsMapping } from '../config/mappings.js';
import { ID_TYPES, idNamespace, type IdType } from '../translate/ids.js';
import type { GuideResource } from './v1-resources.js';

/** How v1 output variants become the legacy output keys (mappings/outputs.json, without its comment). */
export type OutputRule = Pick<OutputsMapping, 'master' | 'byName' | 'sizeOrder' | 'stills' | 'ignored'>;

/** A part of a date as the legacy API writes it (`year(date_created)`): the function and the field; undefined otherwise. */
export function datePartOf(path: string): { readonly part: DateFunction; readonly field: string } | undefined {
  const m = /^(\w+)\(([\w.]+)\)$/.exec(path);
  return m && (DATE_FUNCTIONS as readonly string[]).includes(m[1] as string) ? { part: m[1] as DateFunction, field: m[2] as string } : undefined;
}

/** The list parameters a call may walk id by id, by the name of the id in its path (`each: 'project_id'`: each of `project_ids`). */
export const LIST_PARAMS: Readonly<Record<string, string>> = { render_id: 'render_ids', project_id: 'project_ids', team_id: 'team_ids' };

export interface V1Call {
  /** The name later calls and the snippets refer to this call's result by. */
  readonly name: string;
  readonly method: 'GET' | 'POST';
  /** With `{placeholders}`: `{render_id}` a parameter, `{project.id}` a field of the item of `each`. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  /**
   * Run once per item of that earlier call's result (`projects`), or once per id of a list parameter (`render_id`:
   * each of `render_ids`; `project_id`: each of `project_ids`); null: once.
   */
  readonly each: string | null;
  /** A v1 list: pass `next_cursor` as `cursor` until it is null (never stop on a short page). */
  readonly cursor: boolean;
  /** The legacy answer needs no more than offset + limit items of each list: the loop may stop there. */
  readonly stopAfter: boolean;
  readonly body?: Readonly<Record<string, string>>;
  /** Run once per v1 status the legacy `status` parameter stands for (`{v1_status}` in the query): `ready` is ready and queued. */
  readonly perStatus?: boolean;
  /** Each item is given the id of the item of `each` it was read for, under this name (a team's members: `team_id`). */
  readonly tag?: string;
  readonly why: string;
}

export type ClientStepKind =
  | 'merge' | 'filter' | 'search' | 'sort' | 'page' | 'count' | 'group' | 'aggregate' | 'join' | 'derive' | 'keep' | 'translate';

/**
 * The derived fields the report's translation steps cover (ids and statuses; `v1` fields are renamed and timed, `store`
 * and `none` fields are listed as blocked or unverified). Every other derived field — `download_ready`, `output`'s
 * legacy names, `process_id`, a template's `slug`, an account's `owner` — is a step of its own (`derive`: written out
 * by src/migrate/snippet-derive.ts where it can be, else the client's to do), and the proof reads it from what the
 * snippet printed (held-out check of issue 39: the proof derived them itself and said "equal" where no snippet gave them).
 */
export const TRANSLATED: { readonly [R in GuideResource]: readonly string[] } = {
  render: ['id', 'user_created', 'project', 'account', 'status'],
  project: ['id', 'user_created', 'account'],
  account: ['id'],
  template: ['id'],
  user: [],
};
export interface ClientStep {
  readonly kind: ClientStepKind;
  readonly detail: string;
  /** What the snippets do for the step; absent: the snippet names the step for the client to write. */
  readonly args?: StepArgs;
  /** Only joins lists v1 already narrowed (one project's per-status lists): not counted as work v1 cannot do. */
  readonly check?: boolean;
}

/**
 * One condition a client step tests: a v1 field against a parameter. `gt`…`lte` compare a v1 time (`created_at`, seconds
 * or milliseconds) with an ISO 8601 date parameter (a date alone is midnight UTC; no zone is UTC); an item without the
 * time fails them, as a null fails a comparison in the legacy API.
 */
/** The flag tests (`_null: true`), each with the test it is when true. */
export const FLAG_TESTS = { null: 'absent', nnull: 'present', empty: 'blank', nempty: 'filled' } as const;
export type FlagTest = keyof typeof FLAG_TESTS;

export interface FilterCond {
  readonly field: string;
  /** `null`/`nnull`/`empty`/`nempty`: a boolean parameter (true: the test; false: its opposite, as Directus 10.3+ reads it). */
  readonly test: 'eq' | 'in' | 'nin' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte' | 'teq' | 'tneq' | 'tin' | 'tnin' | 'tout' | TextTest | FlagTest;
  readonly param: string;
  /**
   * The part of the time `field` holds that is compared, as a number (`year(date_created)`): in UTC, as the legacy API on
   * PostgreSQL reads it — `week` the ISO week, `weekday` 0 for Sunday, `month` from 1. Undefined: the value itself.
   */
  readonly part?: DateFunction;
  /** The branch of an `_or` (from 0) the condition belongs to, in a step that keeps the items one branch passes (`any`). */
  readonly branch?: number;
}

/**
 * The legacy text operators a client step tests (`_contains` → `contains`): a substring, a prefix or a suffix, `i` any
 * case (lower-cased both sides, as the gateway does), `n` negated; a null value passes none of them (as in SQL).
 */
export const TEXT_TESTS = {
  contains: { at: 'in', ci: false, neg: false }, ncontains: { at: 'in', ci: false, neg: true }, icontains: { at: 'in', ci: true, neg: false },
  starts_with: { at: 'start', ci: false, neg: false }, nstarts_with: { at: 'start', ci: false, neg: true },
  istarts_with: { at: 'start', ci: true, neg: false }, nistarts_with: { at: 'start', ci: true, neg: true },
  ends_with: { at: 'end', ci: false, neg: false }, nends_with: { at: 'end', ci: false, neg: true },
  iends_with: { at: 'end', ci: true, neg: false }, niends_with: { at: 'end', ci: true, neg: true },
} as const satisfies Readonly<Record<string, { readonly at: 'in' | 'start' | 'end'; readonly ci: boolean; readonly neg: boolean }>>;
export type TextTest = keyof typeof TEXT_TESTS;

/** The tests of a v1 time against a date parameter (or a list of them): the parameter is an ISO date, `$NOW` resolved. */
export const TIME_TEST_NAMES: Readonly<Record<string, true>> = {
  gt: true, gte: true, lt: true, lte: true, teq: true, tneq: true, tin: true, tnin: true, tout: true,
};


/** v1 field paths (`name`, `project.id`, `created_at`); `status` compared as legacy names through the statuses table. */
/** One aggregate a client computes: its function, the v1 path it reads (`*`: rows), the legacy field it answers. */
export interface AggregateFn { readonly fn: 'count' | 'countDistinct' | 'min' | 'max'; readonly field: string; readonly as: string }

/** A related item's legacy uuid: of the v1 id at path `of` (`team.id`), put on each item as `as` (`account_uuid`). */
export interface RelatedUuid { readonly path: string; readonly as: string }

/** A key of groups: a v1 path, the legacy name it answers, and the part of the time it holds that is the key (or none). */
export interface GroupKey { readonly field: string; readonly as: string; readonly part?: DateFunction }

/** The arguments of one kind of step. */
export type StepArgsOf<K extends StepArgs['op']> = Extract<StepArgs, { readonly op: K }>;

export type StepArgs =
  | { readonly op: 'merge'; readonly desc: boolean }
  /**
   * A derived field written out (`download_ready`: complete, with a `master` output URL — mappings/outputs.json names it);
   * `on`: onto the items of that call (the children a one-to-many list is made of), not the answer's.
   */
  | { readonly op: 'derive'; readonly field: 'download_ready'; readonly master: string; readonly on?: string }
  /**
   * `process_id`: the UUID v5 of the v1 id in the gateway's process `namespace`; `legacy_uuid`: the legacy id the gateway
   * derives (in that type's namespace: a legacy order by id follows it); `of`: a related item's, not the item's own.
   */
  | { readonly op: 'derive'; readonly field: 'process_id' | 'legacy_uuid'; readonly namespace: string; readonly of?: RelatedUuid; readonly on?: string }
  /** `output`: the v1 variants under the legacy keys by `rule` (mappings/outputs.json); the poster fallback from call `thumbnails`. */
  | { readonly op: 'derive'; readonly field: 'output'; readonly rule: OutputRule; readonly thumbnails: string; readonly on?: string }
  /** A template's `slug` (of its name, as the gateway makes one) and `description` (its text as HTML paragraphs). */
  | { readonly op: 'derive'; readonly field: 'slug' | 'description' }
  /** A template's `date_created` and `poster`: its project's creation time and thumbnail, the projects read by call `from`. */
  | { readonly op: 'derive'; readonly field: 'date_created' | 'poster'; readonly from: string }
  /** An account's `owner`: the v1 id of its team's first admin by joined_at, the members (tagged `team_id`) read by call `from`. */
  | { readonly op: 'derive'; readonly field: 'owner'; readonly from: string }
  /** Items passing every condition; `any`: passing every condition of one branch (an `_or` of different fields). */
  | { readonly op: 'filter'; readonly conds: readonly FilterCond[]; readonly any?: true }
  | { readonly op: 'search'; readonly param: string }
  /** Items in the order of `keys`; a `number` key is a number the steps hold as text (a list's count, `renders_count`). */
  | { readonly op: 'sort'; readonly keys: readonly { readonly field: string; readonly desc: boolean; readonly number?: true }[] }
  | { readonly op: 'page'; readonly offset: string | null; readonly limit: string }
  /** Rows counted (`count(*)`, or `count(id)`: `of` the field, the legacy `{count: {id: n}}`), per group of the v1 path `groupBy` named `as`. */
  /**
   * `part`: the groups are a part of the time `groupBy` holds (`year(date_created)`), keyed by it as a number string.
   * `ordered`: the groups in the legacy order (by their key, ascending: numbers as numbers, no key last), for a page of them.
   */
  | {
    readonly op: 'count'; readonly groupBy: string | null; readonly as: string | null; readonly of: string | null; readonly part?: DateFunction;
    readonly ordered?: 'text' | 'number';
    /** The further keys of a group by several fields (`groupBy=project,status`): each a v1 path and the legacy name it answers. */
    readonly also?: readonly GroupKey[];
  }
  /** `meta=filter_count`: the items left after the filter and search, counted before the sort and the page. */
  /** `from`: the items of that call counted (a walk of the whole collection of its own), not the answer's. */
  | { readonly op: 'meta'; readonly count: 'filter_count' | 'total_count'; readonly from?: string }
  | { readonly op: 'keep'; readonly field: string; readonly param: string }
  /**
   * One row of aggregates: `count(*)`, `count(id)`, `countDistinct(f)`, and `min`/`max` of a time (an ISO date); with
   * `groups`, one row per group of those keys, each keyed by them.
   */
  | { readonly op: 'aggregate'; readonly fns: readonly AggregateFn[]; readonly groups?: readonly GroupKey[] }
  /**
   * Each item given `as`: the item of call `from` whose id is its v1 path `by` (a render's project: `project.id`), or
   * null; `type`: the resource those items are.
   */
  | { readonly op: 'relate'; readonly from: string; readonly by: string; readonly as: string; readonly type: string }
  /**
   * A one-to-many list written out: each item given `field`, the v1 ids of the items of call `from` whose v1 path `by`
   * is its id (null: every one — the user's accounts, the teams the key reaches; `admin`: those whose role is admin), in
   * legacy-id order (each v1 id's UUID v5 in `namespace`; null: the call's order), the first `limit` (null: all) — as
   * `list` asks; and their number under `${field}_count`, a number string (`count(renders)`), as `count` asks. `on`: the
   * items of that call are given the list instead of the answer's (a render's project, joined after: `project.*`).
   */
  | {
    readonly op: 'children'; readonly field: string; readonly from: string; readonly by: string | null; readonly admin?: true;
    readonly namespace: string | null; readonly limit: number | null; readonly list: boolean; readonly count: boolean; readonly on?: string;
    /** The list holds the children's v1 objects, not their ids (`projects.id,projects.title`: fields read through it). */
    readonly objects?: true;
  }
  /**
   * A legacy-only field (mappings: source `none`) given the fixed value the gateway answers for it; `on`: to the items of
   * that call instead of the answer's (a render's project, joined after: `project.*`).
   */
  | { readonly op: 'constant'; readonly field: string; readonly value: unknown; readonly on?: string }
  /** Each item given `as`: the `field` of the item of call `from` whose id is its `by` (a template given its project's created_at). */
  | { readonly op: 'attach'; readonly from: string; readonly by: string; readonly field: string; readonly as: string };

/** Legacy field → the v1 field it is read from, per resource (what the snippets filter, sort and group on). */
export const V1_FIELD: { readonly [R in GuideResource]: Readonly<Record<string, string>> } = {
  render: { id: 'id', title: 'name', status: 'status', date_created: 'created_at', date_updated: 'updated_at', project: 'project.id',
    account: 'project.team', 'project.account': 'project.team', user_created: 'created_by' },
  project: { id: 'id', title: 'name', date_created: 'created_at', date_updated: 'updated_at', account: 'team.id', poster: 'thumbnail_url',
    user_created: 'created_by', 'account.name': 'team.name' },
  account: { id: 'id', name: 'name', date_created: 'created_at' },
  template: { id: 'id', title: 'name', description: 'description' },
  user: { id: 'id', email: 'email' },
};

/**
 * A relation's legacy id, per resource: the v1 path that holds the related v1 id and the related type. A sort by the
 * relation is by the legacy uuid of that id (each snippet derives it, as for a sort by id — held-out check of issue 39:
 * `sort=account` sorted by v1's team id).
 */
export const RELATION_ID: { readonly [R in GuideResource]: Readonly<Record<string, { readonly of: string; readonly type: IdType }>> } = {
  render: { project: { of: 'project.id', type: 'project' }, account: { of: 'project.team', type: 'account' },
    'project.account': { of: 'project.team', type: 'account' }, user_created: { of: 'created_by', type: 'user' } },
  project: { account: { of: 'team.id', type: 'account' }, user_created: { of: 'created_by', type: 'user' } },
  template: { project: { of: 'project_id', type: 'project' } },
  account: {},
  user: {},
};

/**
 * The derived fields a filter or a sort may read once a step wrote them out (as the gateway derives them, the same
 * value whatever the client sends): not a template's `date_created` (an ISO date compared as text) nor an `owner` (a v1
 * id, where the legacy one is a uuid).
 */
export const DERIVED_KEYS: Readonly<Record<string, 'text' | 'boolean'>> = { slug: 'text', description: 'text', download_ready: 'boolean', process_id: 'text' };

/**
 * A related object v1 embeds in an item of a resource: `relation`'s object is the item's `at`, as the items of the call
 * that lists such objects (a project's team). Fields read through it need no join.
 */
export const EMBEDDED: { readonly [R in GuideResource]: { readonly relation: string; readonly at: string; readonly call: string } | null } = {
  project: { relation: 'account', at: 'team', call: 'teams' }, render: null, account: null, template: null, user: null,
};

/**
 * The parameter that carries the ids export's imported pairs of the type whose legacy ids are derived in `namespace`
 * (`user_uuids`: v1 id → legacy uuid), or null (the process namespace: nothing imported). A legacy uuid is the imported
 * one where there is one, else the UUID v5 — a gateway user's is its own (`users add`): a sort by user_created derived
 * every one and put the creators in another order, and the proof said "equal" (the sixth held-out check of issue 39).
 */
export function importedParam(namespace: string): string | null {
  const type = (Object.keys(ID_TYPES) as IdType[]).find((t) => idNamespace(t) === namespace);
  return type ? `${type}_uuids` : null;
}

/** The field a sort reads where it is not V1_FIELD's: a template's date_created is its project's created_at, attached. */
export const SORT_FIELD: { readonly [R in GuideResource]: Readonly<Record<string, string>> } = {
  template: { date_created: 'project_created_at' }, render: {}, project: {}, account: {}, user: {},
};

/** A value the client passes in: a legacy value turned into its v1 form. */
export interface Param {
  readonly name: string;
  readonly legacy: string;
  readonly v1: string;
}

export interface BlockedField {
  readonly field: string;
  readonly source: 'store' | 'none' | 'overlay';
  readonly why: string;
}

export interface Equivalent {
  readonly resource: string | null;
  readonly calls: readonly V1Call[];
  /** Steps the client does after the calls; `translate` steps (ids, statuses, times) are not counted as work v1 cannot do. */
  readonly clientSteps: readonly ClientStep[];
  readonly params: readonly Param[];
  /** legacy status → the v1 statuses it stands for, when the shape reads or filters statuses. */
  readonly statuses: Readonly<Record<string, readonly string[]>> | null;
  readonly blocked: readonly BlockedField[];
  /** Fields reached only through `*`: v1 has no source for them, but the client may not read them. */
  readonly unverified: readonly string[];
  readonly notes: readonly string[];
}

