import type { DeepNode, QueryNode, SelectNode } from '../query/ast.js';
import { withAliases, type ResourceSchema, type SchemaRegistry } from '../query/schema.js';

/**
 * The one cost model of a read: the items its answer may hold at most — its rows (the limit, or the ids it names; every
 * row for `limit=-1`) times one plus the related items each row's selection brings (a many-to-one expanded: one, and what
 * its own selection brings; a one-to-many expanded: its `deep[…][_limit]`, else the default nested limit, each with
 * what its selection brings; a one-to-many not expanded: one list of ids). Whatever parameter asked for size — `limit`,
 * a SEARCH body's limit, `fields=*.*.*`, `deep` — the answer's expected size says whether the read is heavy
 * (src/read/heavy.ts). Pure; Infinity for an unbounded answer.
 */
export function expectedItems(q: QueryNode, schema: ResourceSchema, schemas: SchemaRegistry, nestedLimit: number, ids?: readonly string[] | null): number {
  const rows = q.limit === -1 ? Number.POSITIVE_INFINITY : Math.min(q.limit, ids ? ids.length : Number.POSITIVE_INFINITY);
  if (rows === 0) return 0;
  const perRow = new PerRecord(schemas, nestedLimit).of(withAliases(schema, q.alias), selection(q.fields), q.deep);
  return rows * (1 + perRow);
}

/** A selection at one level: `*` nested `stars` levels deep (`*.*` is 2), the fields named, and those named with more below. */
interface Sel { stars: number; readonly listed: Set<string>; readonly below: Map<string, Sel> }
const sel = (stars = 0): Sel => ({ stars, listed: new Set(), below: new Map() });

/** `fields` as a tree, read as the projection reads it (a `*` ends its path; a path of stars only nests them). */
function selection(fields: readonly SelectNode[]): Sel {
  const root = sel();
  for (const s of fields) {
    if (s.count || s.fn) continue; // a count or a date part holds no related item
    if (s.path.every((p) => p === '*')) { root.stars = Math.max(root.stars, s.path.length); continue; }
    let node = root;
    for (let i = 0; i < s.path.length; i++) {
      const seg = s.path[i] as string;
      if (seg === '*') { node.stars = Math.max(node.stars, 1); break; }
      node.listed.add(seg);
      if (i === s.path.length - 1) break;
      let next = node.below.get(seg);
      if (!next) { next = sel(); node.below.set(seg, next); }
      node = next;
    }
  }
  return root;
}

class PerRecord {
  /** Selections of stars only, without `deep`, by resource and depth: `*.*.*.*…` is computed once a level, not a branch. */
  private readonly stars = new Map<string, number>();
  constructor(private readonly schemas: SchemaRegistry, private readonly nestedLimit: number) {}

  of(resource: ResourceSchema, s: Sel, deep: DeepNode | undefined): number {
    const pure = s.listed.size === 0 && s.below.size === 0 && !deep;
    const key = `${resource.key}|${s.stars}`;
    if (pure && this.stars.has(key)) return this.stars.get(key)!;
    const names = new Set(s.stars > 0 ? [...Object.keys(resource.fields), ...s.listed] : s.listed);
    let total = 0;
    for (const name of names) {
      const rel = Object.hasOwn(resource.fields, name) ? resource.fields[name]?.relation : undefined;
      const target = rel ? this.schemas[rel.resource] : undefined;
      if (!rel || !target) continue;
      const sub = merged(s.below.get(name), s.stars > 1 ? s.stars - 1 : 0);
      const d = deep && Object.hasOwn(deep.children, name) ? deep.children[name] : undefined;
      if (!sub) {
        total += rel.kind === 'o2m' ? 1 : 0; // not expanded: a many-to-one is its id, a one-to-many one list of ids
        continue;
      }
      const each = 1 + this.of(target, sub, d);
      if (rel.kind === 'm2o') total += each;
      else {
        const limit = d?.limit ?? this.nestedLimit;
        total += (limit === -1 ? Number.POSITIVE_INFINITY : limit) * each;
      }
    }
    if (pure) this.stars.set(key, total);
    return total;
  }
}

/** The selection below a field: what was named below it, and the stars that reach it from above (none: undefined). */
function merged(below: Sel | undefined, stars: number): Sel | undefined {
  if (!below) return stars > 0 ? sel(stars) : undefined;
  if (stars <= below.stars) return below;
  return { ...below, stars };
}
