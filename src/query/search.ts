import { And, Compare, FieldRef, Or, type FilterNode } from './ast.js';
import type { Predicate } from './compare.js';
import type { FieldDef, ResourceSchema } from './schema.js';
import { isUuid } from '../lib/uuid.js';
import { pgLower, textMatch, type TextWork } from './like.js';

/**
 * Directus's `search`: a case-insensitive substring over the text fields of the record itself, exact on its numbers
 * and uuids — tested on a record, or written as a filter of the same answer for sources that test filters without
 * building records. Pure.
 */

/** The fields `search` looks in: text, numbers and uuids of the record itself (no one-to-many). */
export function searchedFields(resource: ResourceSchema): FieldDef[] {
  return Object.values(resource.fields).filter(
    (f) => ['string', 'text', 'integer', 'float', 'uuid'].includes(f.type) && !(f.relation && f.relation.kind === 'o2m'),
  );
}

export function compileSearch(q: string | null, resource: ResourceSchema, work?: TextWork): Predicate {
  if (!q) return () => true;
  const lower = q.toLowerCase();
  // (Directus: LOWER(column) LIKE '%q%', the query lowered by JavaScript and read as a pattern: query/like.ts)
  const found = textMatch(lower, 'contains', work);
  const n = Number(q);
  const uuidQuery = isUuid(q);
  const tests: Predicate[] = [];
  for (const f of searchedFields(resource)) {
    const k = f.name;
    if (f.type === 'string' || f.type === 'text')
      tests.push((r) => {
        const v = r[k];
        return typeof v === 'string' && found(pgLower(v));
      });
    else if ((f.type === 'integer' || f.type === 'float') && q.trim() !== '' && !Number.isNaN(n)) tests.push((r) => r[k] === n);
    else if (f.type === 'uuid' && uuidQuery) tests.push((r) => typeof r[k] === 'string' && (r[k] as string).toLowerCase() === lower);
  }
  if (tests.length === 0) return () => false;
  return (r) => {
    for (const t of tests) if (t(r)) return true;
    return false;
  };
}

/**
 * The filter and the search as one filter of the same answer, for sources that test filters without building records:
 * each searched text field `_icontains` the query, each number field `_eq` its number (a text field holds a string or
 * null, where `_icontains` and the search agree). Undefined when the search is not one: a uuid, compared with the uuid
 * fields case-free where `_eq` is exact.
 */
export function withSearch(filter: FilterNode | null, q: string | null, resource: ResourceSchema): FilterNode | null | undefined {
  if (!q) return filter;
  if (isUuid(`${q}`)) return undefined; // (a copy: the guard would narrow q itself)
  const n = Number(q);
  const terms: FilterNode[] = [];
  for (const f of searchedFields(resource)) {
    if (f.type === 'string' || f.type === 'text') terms.push(Compare.create(FieldRef.create([f.name]), '_icontains', q));
    else if ((f.type === 'integer' || f.type === 'float') && q.trim() !== '' && !Number.isNaN(n)) {
      terms.push(Compare.create(FieldRef.create([f.name]), '_eq', n));
    }
  }
  const search = Or.create(terms);
  return filter ? And.create([filter, search]) : search;
}

