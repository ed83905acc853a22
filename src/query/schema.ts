/** Field types of the legacy resources (Directus types) and the filter operators each allows. */
export type FieldType = 'uuid' | 'string' | 'text' | 'integer' | 'float' | 'boolean' | 'timestamp' | 'json' | 'alias';

export interface Relation {
  readonly kind: 'm2o' | 'o2m';
  readonly resource: string;
}

export interface FieldDef {
  readonly name: string;
  readonly type: FieldType;
  readonly relation?: Relation;
  /** `alias[name]=field`: this name answers the field `aliasOf` (a second look at one relation, with its own `deep`). */
  readonly aliasOf?: string;
}

/** The resource as a query with `alias` sees it: each alias a field of its own that reads the aliased one. */
export function withAliases(resource: ResourceSchema, alias: Readonly<Record<string, string>> | undefined): ResourceSchema {
  if (!alias || Object.keys(alias).length === 0) return resource;
  const fields: Record<string, FieldDef> = Object.assign(Object.create(null) as Record<string, FieldDef>, resource.fields);
  for (const [name, of] of Object.entries(alias)) {
    const target = resource.fields[of];
    if (target) fields[name] = { ...target, name, aliasOf: of };
  }
  return { ...resource, fields };
}

export interface ResourceSchema {
  /** Registry key (`render`); `name` is the legacy collection (`renders`). */
  readonly key: string;
  readonly name: string;
  readonly fields: Readonly<Record<string, FieldDef>>;
  /** Sort applied when the request has none, e.g. ['-date_created', 'id']. */
  readonly defaultSort: readonly string[];
}

export type SchemaRegistry = Readonly<Record<string, ResourceSchema>>;

const STRING_OPS = [
  '_eq',
  '_neq',
  '_contains',
  '_ncontains',
  '_icontains',
  '_starts_with',
  '_nstarts_with',
  '_istarts_with',
  '_nistarts_with',
  '_ends_with',
  '_nends_with',
  '_iends_with',
  '_niends_with',
  '_empty',
  '_nempty',
  '_null',
  '_nnull',
  '_in',
  '_nin',
] as const;
const NUMBER_OPS = ['_eq', '_neq', '_lt', '_lte', '_gt', '_gte', '_between', '_nbetween', '_null', '_nnull', '_in', '_nin'] as const;
const TIMESTAMP_OPS = [
  '_eq',
  '_neq',
  '_contains',
  '_ncontains',
  '_lt',
  '_lte',
  '_gt',
  '_gte',
  '_between',
  '_nbetween',
  '_empty',
  '_nempty',
  '_null',
  '_nnull',
  '_in',
  '_nin',
] as const;

export const ALL_OPERATORS = [...new Set<string>([...STRING_OPS, ...NUMBER_OPS, ...TIMESTAMP_OPS])] as const;
export type Operator = (typeof STRING_OPS)[number] | (typeof NUMBER_OPS)[number] | (typeof TIMESTAMP_OPS)[number];

/** Directus's per-type operator table (legacy-semantics §4). */
export const OPERATORS_FOR: Readonly<Record<FieldType, ReadonlySet<string>>> = {
  string: new Set(STRING_OPS),
  text: new Set(STRING_OPS),
  integer: new Set(NUMBER_OPS),
  float: new Set(NUMBER_OPS),
  timestamp: new Set(TIMESTAMP_OPS),
  uuid: new Set(['_eq', '_neq', '_null', '_nnull', '_in', '_nin']),
  boolean: new Set(['_eq', '_neq', '_null', '_nnull']),
  json: new Set(['_null', '_nnull']),
  alias: new Set([]),
};

/** Date functions usable in fields, filter, sort and groupBy; each yields an integer. */
export const DATE_FUNCTIONS = ['year', 'month', 'week', 'day', 'weekday', 'hour', 'minute', 'second'] as const;
export type DateFunction = (typeof DATE_FUNCTIONS)[number];
