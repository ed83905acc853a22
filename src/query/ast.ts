import type { DateFunction, Operator } from './schema.js';

/**
 * The typed, immutable AST of a legacy query, shared by the planner and the evaluator. Every node is
 * frozen and carries a `kind`.
 */
export type Scalar = string | number | boolean | null;

/** A function of a field: a date part, or `count` of a one-to-many field's related items. */
export type FieldFn = DateFunction | 'count';

/** A field reference: a dot path over many-to-one relations, optionally wrapped in a function. */
export interface FieldRef {
  readonly kind: 'FieldRef';
  readonly path: readonly string[];
  readonly fn?: FieldFn;
}

export interface CompareNode {
  readonly kind: 'Compare';
  readonly field: FieldRef;
  readonly op: Operator;
  /** Resolved value: dynamic variables replaced, `$NOW` as an ISO string, lists for _in/_between. */
  readonly value: Scalar | readonly Scalar[];
}
export interface AndNode {
  readonly kind: 'And';
  readonly children: readonly FilterNode[];
}
export interface OrNode {
  readonly kind: 'Or';
  readonly children: readonly FilterNode[];
}
/** A one-to-many condition: some (or no) related item matches `filter`. `path` leads to the o2m field. */
export interface RelationNode {
  readonly kind: 'Relation';
  readonly path: readonly string[];
  readonly quantifier: 'some' | 'none';
  readonly filter: FilterNode;
}
export interface TrueNode {
  readonly kind: 'True';
}
export type FilterNode = CompareNode | AndNode | OrNode | RelationNode | TrueNode;

export interface SortNode {
  readonly kind: 'Sort';
  readonly field: FieldRef;
  readonly direction: 'asc' | 'desc';
}

export type AggregateFn = 'count' | 'countDistinct' | 'sum' | 'sumDistinct' | 'avg' | 'avgDistinct' | 'min' | 'max';
export interface AggregateNode {
  readonly kind: 'Aggregate';
  readonly fn: AggregateFn;
  readonly field: string;
}

/** A selected field: a path (`project.title`, `renders.*`, `*`), or a date function of a root field. */
export interface SelectNode {
  readonly kind: 'Select';
  readonly path: readonly string[];
  readonly fn?: DateFunction;
  /** `count(<one-to-many>)`: the number of related items, answered as `<field>_count` (a PostgreSQL number string). */
  readonly count?: true;
}

/**
 * Directus's `deep`: per one-to-many field, how its related items are chosen — filter, search, sort, offset, limit
 * (undefined: the default limit) — and the same for relations below it.
 */
export interface DeepNode {
  readonly filter: FilterNode | null;
  readonly search: string | null;
  readonly sort: readonly SortNode[];
  readonly limit?: number;
  readonly offset: number;
  readonly children: Readonly<Record<string, DeepNode>>;
}

export type MetaKey = 'total_count' | 'filter_count';

export interface QueryNode {
  readonly kind: 'Query';
  readonly resource: string;
  readonly fields: readonly SelectNode[];
  readonly filter: FilterNode | null;
  readonly search: string | null;
  /** Explicit sort of the request; empty when the request has none (the resource default applies). */
  readonly sort: readonly SortNode[];
  /** -1 means no limit. */
  readonly limit: number;
  readonly offset: number;
  readonly meta: readonly MetaKey[];
  readonly aggregate: readonly AggregateNode[];
  readonly groupBy: readonly FieldRef[];
  /** `deep`: options of related items, by relation name (absent: none given). */
  readonly deep?: DeepNode;
  /** `alias`: extra names for top-level fields (name → field), usable in `fields` and `deep`. */
  readonly alias?: Readonly<Record<string, string>>;
}

const freeze = <T extends object>(o: T): Readonly<T> => Object.freeze(o);

export const FieldRef = {
  create: (path: readonly string[], fn?: FieldFn): FieldRef => freeze({ kind: 'FieldRef', path: freeze([...path]), ...(fn ? { fn } : {}) }),
  /** The output key of a field reference: `date_created_year` for year(date_created). */
  key: (f: FieldRef): string => (f.fn ? `${f.path.join('.')}_${f.fn}` : f.path.join('.')),
};
export const Compare = {
  create: (field: FieldRef, op: Operator, value: Scalar | readonly Scalar[]): CompareNode =>
    freeze({ kind: 'Compare', field, op, value: Array.isArray(value) ? freeze([...value]) : value }),
};
export const And = { create: (children: readonly FilterNode[]): AndNode => freeze({ kind: 'And', children: freeze([...children]) }) };
export const Or = { create: (children: readonly FilterNode[]): OrNode => freeze({ kind: 'Or', children: freeze([...children]) }) };
export const Relation = {
  create: (path: readonly string[], quantifier: 'some' | 'none', filter: FilterNode): RelationNode =>
    freeze({ kind: 'Relation', path: freeze([...path]), quantifier, filter }),
};
export const True: TrueNode = freeze({ kind: 'True' });
export const Sort = { create: (field: FieldRef, direction: 'asc' | 'desc'): SortNode => freeze({ kind: 'Sort', field, direction }) };
export const Aggregate = { create: (fn: AggregateFn, field: string): AggregateNode => freeze({ kind: 'Aggregate', fn, field }) };
export const Select = {
  create: (path: readonly string[], fn?: DateFunction): SelectNode => freeze({ kind: 'Select', path: freeze([...path]), ...(fn ? { fn } : {}) }),
  count: (field: string): SelectNode => freeze({ kind: 'Select', path: freeze([field]), count: true }),
};
export const Query = {
  create: (q: Omit<QueryNode, 'kind'>): QueryNode => freeze({ kind: 'Query', ...q }),
  /** A copy with some parts replaced (the AST is never mutated). */
  with: (q: QueryNode, patch: Partial<Omit<QueryNode, 'kind'>>): QueryNode => freeze({ ...q, ...patch }),
};
