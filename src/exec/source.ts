import type { TextWork } from '../query/like.js';
import type { Tallied } from '../query/aggregate.js';
import type { FilterNode, SortNode } from '../query/ast.js';
import type { Comparator, Lookup, Predicate, Rec } from '../query/compile.js';
import type { MergeSource } from '../plan/merge.js';
import type { Plan } from '../plan/plan.js';

/** A record in date order, as a walk gives it: `at` orders it (date created, in the source's own unit), `ref` names it to its source. */
export interface Walked {
  readonly rec: Rec;
  readonly at: number;
  readonly ref: string;
}

/**
 * The query's filter, offered to a walk that can test its rows before it builds records (the replica's columns): only
 * the rows passing it are handed on, with `tested` saying how many rows were read for the batch. A source that cannot
 * (some part of the filter is not a column) hands on every record, as without it.
 */
export interface RowFilter {
  readonly filter: FilterNode | null;
  /** Compiles a filter, or one comparison of it, as records are filtered. */
  readonly compile: (node: FilterNode) => Predicate;
  /** The request's text work, which the rows' own text tests spend too. */
  readonly work?: TextWork;
}

/** One v1 call the plan will make on a source (explain shows the list). */
export interface PlannedCall {
  readonly call: string;
  /** How many times: a number, or what it is repeated for ("each project in scope"). */
  readonly times: number | string;
  readonly note?: string;
}

/** Where records come from, as explain shows it. */
export interface SourceDescription {
  readonly kind: 'replica' | 'live';
  /** Milliseconds since the oldest team read was last synced (the replica), or 0 (live). */
  readonly ageMs: number;
  readonly calls: readonly PlannedCall[];
}


/**
 * A filter answered on a source's columns (the replica's typed arrays): which records of the scope pass it, counted or
 * grouped without building a record; only the records that pass are built.
 */
export interface ColumnScan {
  /** How many records of the scope pass the filter (the scope's size is how many were tested). */
  count(): { tested: number; matched: number };
  /**
   * The records passing the filter grouped by the values of `groupBy` (none: one group; at most two fields), each group
   * with how many records have each of `fields` non-null (`id` included); undefined when a field is not held in a column.
   */
  tally(groupBy: readonly string[], fields: readonly string[]): { tested: number; groups: Tallied[] } | undefined;
  /**
   * Optional: the first `n` records passing the filter in the query's order (`sort`, `cmp` comparing records by it), read
   * from orders the source keeps sorted; undefined when it keeps none for this sort.
   */
  inOrder?(sort: readonly SortNode[], cmp: Comparator, n: number): Promise<{ tested: number; recs: Rec[] } | undefined>;
  /**
   * Optional: `count()` and, when at most `few` records pass, the first `n` of them in the order `cmp` gives (one pass:
   * a count of a selective filter would otherwise be followed by a walk of a whole kept order); without `recs` when more
   * pass.
   */
  countFirst?(cmp: (a: Rec, b: Rec) => number, n: number, few: number): { tested: number; matched: number; recs?: Rec[] };
  /** The records passing the filter, a batch at a time (only these are built); returns how many rows were tested. */
  matches(take: (batch: readonly Rec[]) => Promise<void> | void): Promise<number>;
}

/**
 * Where the executor's records come from: the replica (records held in memory, relations answered synchronously) or
 * live v1 (records fetched as the plan asks: a project's pages, renders by id, a team's projects). The executor does
 * everything else once — filter, merge, top-k, paging, aggregation, projection and streaming — over either.
 * A source is also the Lookup relations are resolved through; `settle` evaluates until nothing more can be fetched.
 */
export interface RecordSource extends Lookup {
  readonly kind: 'replica' | 'live';
  /** Items per one-to-many field (Directus's nested default limit). */
  readonly nestedLimit: number;
  /** Past this many wanted items, a scan keeps its candidates as sort keys and JSON bytes (Infinity: records are held anyway). */
  readonly compactAfter: number;
  /**
   * Runs `evaluate` until the relations it reads are all at hand (the replica: once, and again with the render data it
   * read). `most`: the bytes of data it may hold (the replica throws HandFull past them, nothing read). `kept`: the room
   * the data took in the data room is not given back when the evaluation ends but handed to it, to give back once what
   * was built is counted where it goes (a stream's next part asked for: src/exec/answer-parts.ts).
   */
  settle<T>(evaluate: () => T, most?: number, kept?: (drop: () => void) => void): Promise<T>;
  /**
   * Optional: `settle` for filter tests and sort comparisons, which may read values as a stand-in where the stand-in
   * answers as the value would (the replica: render data, a json field only tested for null); else `settle`.
   */
  settleTests?<T>(evaluate: () => T): Promise<T>;
  /** The plan's records by id (strategy `direct`). */
  byIds(resource: string, plan: Plan): Promise<Rec[]>;
  /**
   * The render scope as ordered runs (one per project or team), each in date-created order (`plan.pushdown.order`),
   * `convert` applied a batch at a time as the run is read; runs are read only as far as the merge pulls them.
   */
  walk<T extends { readonly at: number }>(
    plan: Plan, withData: boolean, convert: (batch: Walked[], tested?: number) => Promise<T[]>, rows?: RowFilter,
  ): Promise<MergeSource<T>[]>;
  /** Every record of the scope, a batch at a time (batches may overlap in time); returns how many were read. */
  scan(resource: string, plan: Plan, withData: boolean, take: (batch: readonly Rec[]) => Promise<void> | void): Promise<number>;
  /** total_count: every record of the resource in reach (`scanned`: what the scan read, when that is the answer). */
  total(resource: string, plan: Plan, scanned: number): Promise<number>;
  /** The name of a record to its source (kept by candidates that no longer hold the record). */
  ref(rec: Rec): string;
  /** The records about to be answered, made ready: data read, signed URLs refreshed (the current records returned). */
  prepare(recs: readonly Rec[], refs: readonly string[], resource: string): Promise<Rec[]>;
  /** Answered renders: their uuid ↔ v1 pairs are recorded (so any instance resolves them); `flush` writes them. */
  remember(resource: string, refs: readonly string[]): void;
  flush(): Promise<void>;
  describe(plan: Plan): SourceDescription;
  /**
   * Optional: a record as answered by a selection that reads the record alone (`key` naming the selection, `project`
   * projecting it), which the source may keep, frozen and with its JSON text, until the record changes.
   */
  shaped?(rec: Rec, key: string, project: (r: Rec) => unknown): unknown;
  /**
   * Optional: the plan's filter answered on columns (`compile` compiles a filter, or one comparison of it, as records are
   * filtered); undefined when the source keeps no columns for the resource or some part of the filter is not a column.
   */
  columns?(resource: string, plan: Plan, filter: FilterNode | null, compile: (node: FilterNode) => Predicate, work?: TextWork): ColumnScan | undefined;
}

