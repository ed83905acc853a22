import type { FilterNode } from './ast.js';
import type { Issues } from './issues.js';

/**
 * The most items each list of one query may hold (docs/security.md, "Bounds on input"): past a cap the query is one 400
 * INVALID_QUERY naming it, before any item is checked against the schema. Filter terms are counted across the whole
 * filter, at any depth: every `_and`/`_or` item and every operator applied to a field (`{"_or":[{"id":{"_eq":1}}, …]}`
 * counts two an item: 1 000 such items fit); `filterValues` bounds one `_in`/`_nin` list; `alias` the names given, `deepKeys`
 * the keys of each level of `deep` (attack pass 11, M: 50 000 aliases took 1.4 s a request).
 */
export const QUERY_CAPS = {
  fields: 1000, sort: 100, groupBy: 100, aggregate: 100, filterTerms: 2000, filterValues: 10_000, alias: 1000, deepKeys: 1000,
} as const;

/** False (after recording one issue at `path`) when `items` holds more than `cap` entries. */
export function withinCap(items: readonly unknown[], cap: number, name: string, path: string, issues: Issues): boolean {
  if (items.length <= cap) return true;
  issues.add(path, `"${name}" has ${items.length} items; at most ${cap} are allowed`);
  return false;
}

/** The terms of one filter counted as it is parsed; true once the cap is passed (told once, at `filter`). */
export class TermCount {
  private n = 0;
  private over = false;
  constructor(private readonly issues: Issues, private readonly cap: number = QUERY_CAPS.filterTerms) {}

  /** Counts `k` more terms; false when that passes the cap (the filter is then parsed no further). */
  add(k: number): boolean {
    if (this.over) return false;
    this.n += k;
    if (this.n <= this.cap) return true;
    this.over = true;
    this.issues.add('filter', `The filter has more than ${this.cap} terms`);
    return false;
  }
}

/** The terms of a parsed filter: each `_and`/`_or` and each comparison, relational quantifiers and what they hold. */
export function termsOf(node: FilterNode | null): number {
  if (!node) return 0;
  switch (node.kind) {
    case 'And':
    case 'Or': {
      let n = 1;
      for (const c of node.children) n += termsOf(c);
      return n;
    }
    case 'Relation': return 1 + termsOf(node.filter);
    case 'Compare': return 1;
    case 'True': return 0;
  }
}
