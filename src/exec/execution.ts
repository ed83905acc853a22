import type { ExpansionBudget } from '../query/budget.js';
import type { SchemaRegistry } from '../query/schema.js';

/** How an answer was computed (explain shows it beside the plan). */
export interface Execution {
  readonly strategy:
    | 'newest-first walk' | 'oldest-first walk' | 'aggregate over the scope' | 'top-k over the scope' | 'sort of the scope'
    // the filter answered on the source's columns: counted without records, or only the records passing it built
    | 'count on the columns' | 'aggregate over the column matches' | 'top-k over the column matches' | 'sort of the column matches'
    // a page read from an order the source keeps sorted, rows tested on its columns until the page is full; or, counted,
    // the few matches of the count's pass sorted
    | 'page of a kept order'
    | 'page of the few matches';
  /** Records tested against the filter (a streamed answer counts those tested before its first item). */
  readonly tested: number;
  readonly matched: number;
}

export interface ExecContext {
  readonly schemas: SchemaRegistry;
  /** Related items this request's answer may still expand (MAX_RELATED_ITEMS). */
  readonly budget: ExpansionBudget;
  /** Told how the answer was computed. */
  readonly report?: (how: Execution) => void;
  /** MAX_ITEM_MB: the render data one item may hold is refused past it before it is read (default: no bound). */
  readonly itemMb?: number;
  /**
   * The caller writes the answer as its items are read (a list read): a page whose items may be large (render data, or
   * relations expanded) is given as a stream built a part at a time (`QueryResult.lazy`), never whole at once.
   */
  readonly lazy?: boolean;
  /**
   * An answer of one item sent whole (a read by id): the room its render data took in the data room is handed here, to be
   * given back once the answer is counted in the answer memory (so no other evaluation of the key is let in between).
   */
  readonly kept?: (drop: () => void) => void;
}
