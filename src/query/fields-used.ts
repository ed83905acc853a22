import type { FilterNode, QueryNode } from './ast.js';
import { searchedFields } from './search.js';
import type { ResourceSchema } from './schema.js';

function filterRoots(node: FilterNode | null, out: Set<string>): void {
  if (!node) return;
  switch (node.kind) {
    case 'Compare': out.add(node.field.path[0] as string); break;
    case 'Relation': out.add(node.path[0] as string); break; // related items are found by the record's id
    case 'And': case 'Or': for (const c of node.children) filterRoots(c, out); break;
    case 'True': break;
  }
}

/**
 * The root fields of a record that selecting it reads — filter, search, sort (or the default order), groupBy, aggregate — plus
 * `id`. A relational path needs its root (the m2o uuid); the related record is looked up. What a
 * projection shows is not included: paths that only answer aggregates keep no more than this.
 */
export function fieldsToSelect(q: QueryNode, resource: ResourceSchema): Set<string> {
  const out = new Set<string>(['id']);
  filterRoots(q.filter, out);
  for (const s of q.sort) out.add(s.field.path[0] as string);
  // without a sort the resource's default order decides which records an answer keeps (and in what order)
  if (q.sort.length === 0) for (const s of resource.defaultSort) out.add(s.replace(/^[-+]/, '').split('.')[0] as string);
  for (const g of q.groupBy) out.add(g.path[0] as string);
  for (const a of q.aggregate) if (a.field !== '*') out.add(a.field);
  if (q.search) for (const f of searchedFields(resource)) out.add(f.name);
  return out;
}
