import { Compare, FieldRef, type FieldFn } from './ast.js';
import type { FilterNode, SortNode } from './ast.js';
import { compileCompare, compileRootCompare, type Getter, type Predicate, type Rec } from './compare.js';
import { fieldOf } from './parse-filter.js';
import type { DateFunction, FieldType, ResourceSchema, SchemaRegistry } from './schema.js';
import { termsOf } from './list-caps.js';
import { TextWork } from './like.js';
import type { TestTurn } from './test-turn.js';

export type { Predicate, Rec } from './compare.js';

/** How the evaluator reaches related records; the planner fills it before evaluation. */
export interface Lookup {
  /** The record a many-to-one value names. */
  one(resource: string, id: string): Rec | undefined;
  /** The related records of a one-to-many field of `parent` (a record of `parentResource`), ordered and capped. */
  many(resource: string, parent: Rec, field: string, parentResource: string): readonly Rec[];
  /** Every related record of a one-to-many field, in no particular order (count(), deep). */
  manyAll?(resource: string, parent: Rec, field: string, parentResource: string): readonly Rec[];
  /**
   * Moves each time what the look-ups answer may have changed (a live record map filled what it missed); absent: they
   * never change. A relational filter's answer for one related parent is kept while it stays the same.
   */
  readonly version?: number;
  /** The tests a relational filter's walks may make in this round of an evaluation (absent: any number). */
  readonly turn?: TestTurn;
}

const collator = new Intl.Collator('en', { sensitivity: 'variant' });

export function dateFn(fn: DateFunction): (v: unknown) => number | null {
  return (v) => {
    if (typeof v !== 'string') return null;
    const d = new Date(v);
    if (Number.isNaN(d.getTime())) return null;
    switch (fn) {
      case 'year':
        return d.getUTCFullYear();
      case 'month':
        return d.getUTCMonth() + 1;
      case 'day':
        return d.getUTCDate();
      case 'weekday':
        return d.getUTCDay();
      case 'hour':
        return d.getUTCHours();
      case 'minute':
        return d.getUTCMinutes();
      case 'second':
        return d.getUTCSeconds();
      case 'week': {
        const t = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
        const day = t.getUTCDay() || 7;
        t.setUTCDate(t.getUTCDate() + 4 - day);
        const yearStart = Date.UTC(t.getUTCFullYear(), 0, 1);
        return Math.ceil(((t.getTime() - yearStart) / 86_400_000 + 1) / 7);
      }
    }
  };
}

/** A getter for a path over many-to-one relations (and the type at its end). */
export function compileGetter(
  path: readonly string[],
  fn: FieldFn | undefined,
  resource: ResourceSchema,
  schemas: SchemaRegistry,
  lookup: Lookup,
): { get: Getter; type: FieldType } {
  if (fn === 'count') {
    // count(<one-to-many>): every related item counted (Lookup.manyAll)
    const f = fieldOf(resource, path[0] as string);
    if (path.length !== 1 || f?.relation?.kind !== 'o2m') throw new TypeError(`count() of ${path.join('.')}`);
    const rel = f.relation.resource;
    return { get: (r) => (lookup.manyAll?.(rel, r, f.name, resource.key) ?? []).length, type: 'integer' };
  }
  let current = resource;
  const steps: { field: string; next?: string }[] = [];
  let type: FieldType = 'string';
  for (let i = 0; i < path.length; i++) {
    const f = fieldOf(current, path[i] as string);
    if (!f) throw new TypeError(`unknown field ${path.join('.')}`);
    type = f.type;
    if (i < path.length - 1) {
      if (f.relation?.kind !== 'm2o') throw new TypeError(`${path[i]} is not many-to-one`);
      steps.push({ field: f.name, next: f.relation.resource });
      current = schemas[f.relation.resource] as ResourceSchema;
    } else steps.push({ field: f.name });
  }
  let get: Getter;
  if (steps.length === 1) {
    const k = (steps[0] as { field: string }).field;
    get = (r) => r[k];
  } else {
    get = (r) => {
      let cur: Rec | undefined = r;
      for (const s of steps) {
        if (!cur) return null;
        const v: unknown = cur[s.field];
        if (s.next === undefined) return v;
        cur = typeof v === 'string' ? lookup.one(s.next, v) : undefined;
      }
      return null;
    };
  }
  if (fn) {
    const f = dateFn(fn);
    const inner = get;
    return { get: (r) => f(inner(r)), type: 'integer' };
  }
  return { get, type };
}

/**
 * Compiles a filter once per request into a predicate closure (no tree walk per record). `work`: the request's text work
 * (one for every filter a request compiles; a new one when not given).
 */
export function compileFilter(
  node: FilterNode | null, resource: ResourceSchema, schemas: SchemaRegistry, lookup: Lookup, work = new TextWork(),
): Predicate {
  if (!node) return () => true;
  switch (node.kind) {
    case 'True':
      return () => true;
    case 'Compare': {
      const path = node.field.path;
      if (path.length > 1) {
        // a many-to-one hop: evaluate the rest on the related record, once per related id
        const head = path[0] as string;
        const rel = (fieldOf(resource, head) as { relation: { resource: string } }).relation.resource;
        const inner = compileFilter(
          Compare.create(FieldRef.create(path.slice(1), node.field.fn), node.op, node.value),
          schemas[rel] as ResourceSchema,
          schemas,
          lookup,
          work,
        );
        const memo = new Map<string, boolean>();
        const empty: Rec = {};
        // only the last hop is remembered: a deeper path's answer may rest on a record a later hop has not found yet
        // (remembering it made filter[project][account][name] drop the renders of the first project it met)
        const remember = path.length === 2;
        return (r) => {
          const id = r[head];
          if (typeof id !== 'string') return inner(empty); // LEFT JOIN: every related field is null
          let hit = memo.get(id);
          if (hit === undefined) {
            const related = lookup.one(rel, id);
            hit = inner(related ?? empty);
            if (related && remember) memo.set(id, hit); // a miss may be filled later: do not remember it
          }
          return hit;
        };
      }
      if (!node.field.fn) {
        const fast = compileRootCompare(path[0] as string, (fieldOf(resource, path[0] as string) as { type: FieldType }).type, node.op, node.value);
        if (fast) return fast;
      }
      const { get, type } = compileGetter(path, node.field.fn, resource, schemas, lookup);
      return compileCompare(get, type, node.op, node.value, work);
    }
    case 'And': {
      const ps = node.children.map((c) => compileFilter(c, resource, schemas, lookup, work));
      if (ps.length === 2) {
        const [a, b] = ps as [Predicate, Predicate];
        return (r) => a(r) && b(r);
      }
      return (r) => {
        for (const p of ps) if (!p(r)) return false;
        return true;
      };
    }
    case 'Or': {
      const ps = node.children.map((c) => compileFilter(c, resource, schemas, lookup, work));
      return (r) => {
        for (const p of ps) if (p(r)) return true;
        return false;
      };
    }
    case 'Relation': {
      // walk m2o steps to the record holding the o2m field
      const parentPath = node.path.slice(0, -1);
      const o2m = node.path[node.path.length - 1] as string;
      let holder = resource;
      for (const seg of parentPath)
        holder = schemas[(fieldOf(holder, seg) as { relation: { resource: string } }).relation.resource] as ResourceSchema;
      const rel = (fieldOf(holder, o2m) as { relation: { resource: string } }).relation.resource;
      const holderKey = holder.key;
      const child = compileFilter(node.filter, schemas[rel] as ResourceSchema, schemas, lookup, work);
      const parentGet =
        parentPath.length === 0
          ? (r: Rec) => r
          : (() => {
              const steps = parentPath;
              return (r: Rec): Rec | undefined => {
                let cur: Rec | undefined = r;
                let res = resource;
                for (const seg of steps) {
                  const f = fieldOf(res, seg) as { relation: { resource: string } };
                  const id: unknown = cur?.[seg];
                  cur = typeof id === 'string' ? lookup.one(f.relation.resource, id) : undefined;
                  res = schemas[f.relation.resource] as ResourceSchema;
                }
                return cur;
              };
            })();
      // the answer for one holder is the same for every record reaching it (renders of one project): walked once per
      // holder, not once per record — nested relations multiplied the walks (attack pass 12, H: four levels of
      // project.renders froze an instance for minutes). Every related item is walked (a join, as Directus does: not the
      // first 100 a nested list shows), its tests counted on the lookup's turn: a walk stopped short goes on next round.
      // (by the holder's id: a walk spread over rounds goes on where it stopped even if the holder's record was built
      // again meanwhile — a sync or an overlay write rebuilds project records — so every round moves it on)
      const known = new Map<unknown, Walk>();
      const cost = termsOf(node.filter) + 1;
      const turn = lookup.turn;
      const all = lookup.manyAll ? lookup.manyAll.bind(lookup) : lookup.many.bind(lookup);
      // (a holder is known by the id of the record's first step — itself one step away, or remembered from that id: its
      // walk's answer read without building the records between; the re-check of attack pass 15 found two steps,
      // project.account.renders, looked up through parentGet for every known answer, 65 s)
      const step = parentPath.length > 0 ? (parentPath[0] as string) : undefined;
      const hops = new Map<string, unknown>();
      let hopsAt = lookup.version;
      const some = (r: Rec) => {
        // a round stopped short reads nothing more — not a holder, not a list (600 walks of 20 projects built 12 000
        // lists of their renders in the round after it stopped: 2.6 s in one turn, attack pass 14, H2)
        if (turn?.short) return false;
        // a known answer is read without looking the holder up: 500 terms over a project's renders asked 500 answers a
        // render, each building its project's record anew (attack pass 15: a deep _filter held an instance 5–9 s in one
        // round). (It is not counted: a round evaluated again reads every answer known so far, and must get further.)
        if (hopsAt !== lookup.version) { hops.clear(); hopsAt = lookup.version; }
        const first = step !== undefined ? r[step] : undefined;
        const held = typeof first !== 'string' ? undefined : parentPath.length === 1 ? first : hops.get(first);
        const done = held !== undefined ? known.get(held) : undefined;
        if (done && done.version === lookup.version && done.some !== undefined) return done.some;
        const p = parentGet(r);
        if (!p) return false;
        const key = p.id ?? p;
        if (parentPath.length > 1 && typeof first === 'string') hops.set(first, key);
        let k = known.get(key);
        if (!k || k.version !== lookup.version) known.set(key, (k = { version: lookup.version, at: 0, some: undefined }));
        if (k.some !== undefined) return k.some;
        if (!k.items) {
          // (the list is kept while its walk goes on over rounds: read once, its items counted as tests — each is built)
          k.items = all(rel, p, o2m, holderKey);
          if (turn && !turn.spend(k.items.length)) return false;
        }
        const items = k.items;
        for (; k.at < items.length; k.at++) {
          if (turn && !turn.spend(cost)) return false; // provisional: the round is run again
          const hit = child(items[k.at] as Rec);
          if (turn?.short) return false; // a walk under this one stopped: this item is tested again next round
          turn?.moved();
          if (hit) break;
        }
        k.items = undefined;
        return (k.some = k.at < items.length);
      };
      return node.quantifier === 'some' ? some : (r) => !some(r);
    }
  }
}

/** How far a relational filter's walk of one holder got: its answer once known. */
interface Walk {
  readonly version: number | undefined;
  at: number;
  some: boolean | undefined;
  /** The holder's related items while the walk goes on. */
  items?: readonly Rec[] | undefined;
}

/** The most key values one remembering comparator keeps (~8 bytes and more each: tens of MB at most). */
export const REMEMBERED_SORT_VALUES = 2_000_000;

/** A record's sort values, each read when a comparison first needs it (most are told apart by the first key). */
export interface SortKey { readonly rec: Rec; readonly values: unknown[] }

/**
 * Two records in order; `prime`, when the comparator remembers keys: reads a record's now (its later comparisons read
 * none). `keyOf` and `byKeys`: a record's sort values kept, and two records compared on them as the comparator compares
 * the records themselves — a caller comparing one record many times (a merge's heads) reads each of its values once.
 */
export type Comparator = ((a: Rec, b: Rec) => number) & {
  prime?: (r: Rec) => void;
  readonly keyOf: (r: Rec) => SortKey;
  readonly byKeys: (a: SortKey, b: SortKey) => number;
};

/**
 * Compiles sort keys to a comparator with PostgreSQL's null placement (last ascending, first descending). `remember`: a
 * record's key values are read once and kept with it for the comparator's life (a sort within one request): 38 keys
 * over relations, tied on most renders, read each key through its look-ups at every comparison — a sort of 10 000 held
 * the event loop a second (attack pass 17, F3). Not for a comparator kept past the request (records change). A number:
 * the most values kept (REMEMBERED_SORT_VALUES by default); past it a record's keys are read at each comparison.
 */
export function compileSort(
  sort: readonly SortNode[], resource: ResourceSchema, schemas: SchemaRegistry, lookup: Lookup, remember: boolean | number = false,
): Comparator {
  const keys = sort.map((s) => {
    const { get, type } = compileGetter(s.field.path, s.field.fn, resource, schemas, lookup);
    const cmp =
      type === 'string' || type === 'text'
        ? (a: unknown, b: unknown) => collator.compare(String(a), String(b))
        : (a: unknown, b: unknown) => ((a as never) < (b as never) ? -1 : (a as never) > (b as never) ? 1 : 0);
    return { get, cmp, desc: s.direction === 'desc' };
  });
  // (a key's values are read in order, each when first compared: those read are the first `values.length`)
  const valueOf = (key: SortKey, i: number) => (i < key.values.length ? key.values[i] : (key.values[i] = keys[i]?.get(key.rec)));
  const byKeys = (a: SortKey, b: SortKey): number => {
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as (typeof keys)[number];
      const c = orderOf(valueOf(a, i), valueOf(b, i), k.cmp, k.desc);
      if (c !== 0) return c;
    }
    return 0;
  };
  // (worth it past a key or two, or through a relation; a record's values in one array, read on its first comparison)
  if (remember && (keys.length > 2 || sort.some((k) => k.field.path.length > 1))) {
    // (forgotten when the look-ups move: a relation read before its record was fetched answered null)
    let values = new WeakMap<object, unknown[]>();
    let at = lookup.version;
    // (at most REMEMBERED_SORT_VALUES kept: 100 keys over 100 000 renders would hold 10 M values; past it, read anew)
    let kept = 0;
    const most = remember === true ? REMEMBERED_SORT_VALUES : remember;
    const of = (r: Rec): unknown[] => {
      if (lookup.version !== at) {
        values = new WeakMap();
        at = lookup.version;
        kept = 0;
      }
      let v = values.get(r);
      if (!v) {
        v = keys.map((k) => k.get(r));
        if (kept + keys.length <= most) {
          values.set(r, v);
          kept += keys.length;
        }
      }
      return v;
    };
    const compare = (a: Rec, b: Rec) => {
      const va = of(a);
      const vb = of(b);
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i] as (typeof keys)[number];
        const c = orderOf(va[i], vb[i], k.cmp, k.desc);
        if (c !== 0) return c;
      }
      return 0;
    };
    return Object.assign(compare, { prime: (r: Rec) => void of(r), keyOf: (r: Rec): SortKey => ({ rec: r, values: of(r) }), byKeys });
  }
  const compare = (a: Rec, b: Rec) => {
    for (const k of keys) {
      const c = orderOf(k.get(a), k.get(b), k.cmp, k.desc);
      if (c !== 0) return c;
    }
    return 0;
  };
  return Object.assign(compare, { keyOf: (r: Rec): SortKey => ({ rec: r, values: [] }), byKeys });
}

/** Two values of one sort key in order: PostgreSQL's NULLS LAST ascending, NULLS FIRST descending. */
function orderOf(va: unknown, vb: unknown, cmp: (a: unknown, b: unknown) => number, desc: boolean): number {
  if (va == null || vb == null) {
    if (va == null && vb == null) return 0;
    return va == null ? (desc ? -1 : 1) : desc ? 1 : -1;
  }
  const c = cmp(va, vb);
  return c !== 0 && desc ? -c : c;
}
