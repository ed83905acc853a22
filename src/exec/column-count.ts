import type { QueryNode } from '../query/ast.js';
import { countRow, orderGroups } from '../query/aggregate.js';
import type { ColumnScan } from './source.js';

/**
 * `count` aggregates grouped by at most two column fields, answered on a source's columns without a record built: the
 * answer's rows, with how many records were tested and matched (undefined: not such a question, or a field the source
 * does not hold in a column).
 */
export function countOnColumns(q: QueryNode, cols: ColumnScan): { data: Record<string, unknown>[]; tested: number; matched: number } | undefined {
  if (q.groupBy.length > 2 || q.aggregate.some((a) => a.fn !== 'count')) return undefined;
  if (q.groupBy.some((g) => g.fn || g.path.length !== 1)) return undefined;
  const keys = q.groupBy.map((g) => g.path[0] as string);
  // (the same field twice groups as once: one key in each row)
  if (new Set(keys).size !== keys.length) return undefined;
  const tally = cols.tally(keys, q.aggregate.map((a) => (a.field === '*' ? 'id' : a.field)));
  if (!tally) return undefined;
  const options = { numericStrings: true };
  const rows = tally.groups.map((t) => countRow(keys.map((key, i) => ({ key, value: t.key[i] })), q.aggregate, t.n, t.nonNull, options));
  // with no group key there is one row, also when nothing matched
  if (keys.length === 0 && rows.length === 0) rows.push(countRow([], q.aggregate, 0, q.aggregate.map(() => 0), options));
  const data = orderGroups(rows, keys, q.sort, q.limit, q.offset, options);
  return { data, tested: tally.tested, matched: tally.groups.reduce((n, t) => n + t.n, 0) };
}
