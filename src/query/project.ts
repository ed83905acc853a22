import { FieldRef, Sort, type DeepNode, type SelectNode } from './ast.js';
import { traitsOf } from './resources.js';
import type { ExpansionBudget } from './budget.js';
import { compileFilter, compileSort, dateFn, type Comparator, type Lookup, type Rec } from './compile.js';
import { compileSearch } from './search.js';
import type { TestTurn } from './test-turn.js';
import { withAliases, type DateFunction, type ResourceSchema, type SchemaRegistry } from './schema.js';
import { termsOf } from './list-caps.js';

interface SelTree { star: boolean; children: Map<string, SelTree>; fns: { field: string; fn: DateFunction }[]; counts: string[]; order: string[] }
const tree = (): SelTree => ({ star: false, children: new Map(), fns: [], counts: [], order: [] });

function buildTree(fields: readonly SelectNode[], resource: ResourceSchema, schemas: SchemaRegistry): SelTree {
  const root = tree();
  for (const s of fields) {
    if (s.count) { root.counts.push(s.path[0] as string); continue; }
    if (s.fn) { root.fns.push({ field: s.path[0] as string, fn: s.fn }); continue; }
    if (s.path.every((p) => p === '*')) {
      addStars(root, resource, schemas, s.path.length);
      continue;
    }
    let node = root;
    for (let i = 0; i < s.path.length; i++) {
      const seg = s.path[i] as string;
      if (seg === '*') { node.star = true; break; }
      if (!node.order.includes(seg)) node.order.push(seg);
      if (i < s.path.length - 1) {
        let child = node.children.get(seg);
        if (!child) { child = tree(); node.children.set(seg, child); }
        node = child;
      }
    }
  }
  return root;
}

function addStars(node: SelTree, resource: ResourceSchema, schemas: SchemaRegistry, depth: number): void {
  node.star = true;
  if (depth <= 1) return;
  for (const f of Object.values(resource.fields)) {
    if (!f.relation) continue;
    let child = node.children.get(f.name);
    if (!child) { child = tree(); node.children.set(f.name, child); }
    addStars(child, schemas[f.relation.resource] as ResourceSchema, schemas, depth - 1);
  }
}

/**
 * A compiled selection. `key` is set when the projection reads the record alone (no relation expanded or listed, no
 * function, no count): two records answering the same fields project alike, so a projected record may be kept.
 */
export type Projector = ((r: Rec) => Record<string, unknown>) & { readonly key?: string };

const fieldDef = (resource: ResourceSchema, name: string) => (Object.hasOwn(resource.fields, name) ? resource.fields[name] : undefined);

/**
 * `fields` compiled once into a projector: `*`, `*.*`, dot paths through many-to-one and one-to-many
 * relations (expanded through the lookup), and date functions (`year(date_created)` → `date_created_year`).
 */
export function compileProjection(
  fields: readonly SelectNode[], resource: ResourceSchema, schemas: SchemaRegistry, lookup: Lookup, budget?: ExpansionBudget,
  related: RelatedOptions = {},
): Projector {
  const top = withAliases(resource, related.alias);
  const t = buildTree(fields, top, schemas);
  const each = projectorFor(t, top, schemas, lookup, budget, related.deep, related.nestedLimit ?? 100);
  const copies = t.children.size > 0 || Object.values(top.fields).some((f) => f.aliasOf);
  const project: Projector = budget && copies ? (r) => { budget.startItem(); return each(r); } : each;
  const key = recordOnlyKey(t, top);
  return key === undefined ? project : Object.assign(project, { key });
}

/**
 * How many times the selection answers render `data` at any level — itself, each alias of it, and each
 * path to it through a relation or an alias of one (`*` counts it once a level). Data asked under 17 names is written
 * 17 times: the room it takes is counted so (attack pass 15: eight reads of a 900 KB item under 17 aliases built 15 MB
 * answers side by side, charged 900 KB each; its re-check: 17 aliases of a relation, each with its `data`).
 */
export function copiesOf(
  fields: readonly SelectNode[], base: ResourceSchema, schemas: SchemaRegistry, alias?: Readonly<Record<string, string>>,
): number {
  const resource = withAliases(base, alias);
  const count = (t: SelTree, at: ResourceSchema, depth: number): number => {
    if (depth > 16) return 0;
    const names = t.star ? [...Object.keys(at.fields), ...t.order.filter((n) => !Object.hasOwn(at.fields, n))] : t.order;
    let n = 0;
    for (const name of new Set(names)) {
      const f = fieldDef(at, name);
      if (!f) continue;
      if (traitsOf(at.key).dataField === (f.aliasOf ?? name) && !t.children.has(name)) n++;
      const sub = t.children.get(name);
      const next = f.relation ? schemas[f.relation.resource] : undefined;
      if (sub && next) n += count(sub, next, depth + 1);
    }
    return n;
  };
  return count(buildTree(fields, resource, schemas), resource, 0);
}

/** The name of a selection that reads the record alone (its fields, each with the field it answers), else undefined. */
function recordOnlyKey(t: SelTree, resource: ResourceSchema): string | undefined {
  if (t.children.size > 0 || t.fns.length > 0 || t.counts.length > 0) return undefined;
  const names = t.star ? [...Object.keys(resource.fields), ...t.order.filter((n) => !Object.hasOwn(resource.fields, n))] : t.order;
  const parts: string[] = [];
  for (const name of names) {
    const f = fieldDef(resource, name);
    if (f?.relation?.kind === 'o2m') return undefined;
    parts.push(f ? `${name}=${f.aliasOf ?? name}` : `${name}!`);
  }
  return `${resource.name}:${parts.join(',')}`;
}

/** How related items are chosen: `deep` options per relation, and the default limit of one-to-many lists. */
export interface RelatedOptions {
  readonly deep?: DeepNode | undefined;
  /** The query's `alias` names (top level). */
  readonly alias?: Readonly<Record<string, string>> | undefined;
  readonly nestedLimit?: number;
}

/** A level of `deep` compiled once for every parent it chooses among (filter, search and order; the tests each candidate costs). */
interface Choice {
  readonly d: DeepNode;
  readonly keep: (r: Rec) => boolean;
  readonly cmp: Comparator;
  /** What testing one candidate costs, in filter terms: the filter's, a search by its length, each sort key. */
  readonly terms: number;
}

function compileChoice(d: DeepNode, resource: ResourceSchema, schemas: SchemaRegistry, lookup: Lookup): Choice {
  const filter = compileFilter(d.filter, resource, schemas, lookup);
  const search = compileSearch(d.search, resource);
  const byId = Sort.create(FieldRef.create(['id']), 'asc');
  const keys = d.sort.some((k) => k.field.path.length === 1 && k.field.path[0] === 'id' && !k.field.fn) ? d.sort : [...d.sort, byId];
  // (a search is charged by its length: a 500 000-character one compiled for every parent took 0.7 ms a parent —
  // attack pass 12, M; it is compiled once now, and tested against each candidate's every string field)
  const terms = termsOf(d.filter) + (d.search ? Math.ceil(d.search.length / 32) : 0) + d.sort.length;
  return { d, keep: (r) => filter(r) && search(r), cmp: compileSort(keys, resource, schemas, lookup, true), terms };
}

/**
 * A parent's related items being chosen: its candidates (Lookup.manyAll), how many are tested, those kept so far. The
 * tests are made in the rounds of the lookup's turn (as a relational filter's walks are): a choice stopped short goes on
 * where it stopped in the next round (attack pass 15's second re-check: one parent's 10 000 candidates × 400 terms were
 * tested in one turn, 0.2–1 s).
 */
interface Choosing { readonly version: number | undefined; readonly all: readonly Rec[]; at: number; readonly kept: Rec[]; items?: readonly Rec[] }

/**
 * The related items `deep` asks for: every related item filtered, searched, sorted (its `_sort`, else primary-key order;
 * the id breaks ties), then offset and limit (the default limit unless `_limit`; -1: all). Every candidate is counted
 * against the budget before any is tested, whatever the filter keeps (in every round alike); undefined while the round's
 * tests are spent (provisional: the round is run again).
 */
function chooseRelated(c: Choosing, choice: Choice, nestedLimit: number, turn: TestTurn | undefined, budget?: ExpansionBudget): readonly Rec[] | undefined {
  budget?.chargeTests(c.all.length, choice.terms);
  if (c.items) return c.items;
  const cost = choice.terms + 1;
  for (; c.at < c.all.length; c.at++) {
    if (turn && !turn.spend(cost)) return undefined;
    const x = c.all[c.at] as Rec;
    const keep = choice.keep(x);
    if (turn?.short) return undefined; // a walk under this filter stopped: this candidate is tested again next round
    turn?.moved();
    if (keep) {
      choice.cmp.prime?.(x); // its sort keys read now, in the round that pays for them (each key is a term of `cost`)
      c.kept.push(x);
    }
  }
  // (the kept candidates compared by the keys already read: a sort of their values, not of look-ups)
  const kept = c.kept.sort(choice.cmp);
  const limit = choice.d.limit ?? nestedLimit;
  c.items = limit === -1 ? kept.slice(choice.d.offset) : kept.slice(choice.d.offset, choice.d.offset + limit);
  return c.items;
}

/** A list shorter than this is projected at once; a longer one in the lookup's rounds. */
const LIST_IN_ROUNDS = 64;

/**
 * A parent's one-to-many list projected in the rounds of the lookup's turn (each item a unit of it), going on where it
 * stopped: one item expanding 10 000 renders (`/accounts?fields=*,renders.*&deep[renders][_limit]=-1`) was projected in
 * one turn, 1 s an account (the re-check of attack pass 16, H). The bytes the resumed items copied are counted again
 * into the item (MAX_ITEM_MB); what a round kept is dropped once a round ends whole (a streamed answer holds no more).
 */
function expandInRounds(
  subProject: Projector, lookup: Lookup, budget: ExpansionBudget | undefined,
): (parent: Rec, items: readonly Rec[]) => unknown[] {
  const going = new Map<unknown, { version: number | undefined; at: number; out: unknown[]; bytes: number; units: number }>();
  let keptAt = -1;
  return (parent, items) => {
    const turn = lookup.turn;
    if (!turn?.inRound || items.length < LIST_IN_ROUNDS) return items.map(subProject);
    if (keptAt !== turn.wholeRounds) { going.clear(); keptAt = turn.wholeRounds; }
    const key = parent.id ?? parent;
    let g = going.get(key);
    if (!g || g.version !== lookup.version || g.at > items.length) {
      going.set(key, (g = { version: lookup.version, at: 0, out: [], bytes: 0, units: 0 }));
    }
    // what the items projected already expanded and copied is counted again, as if they were projected now (a parent
    // answered twice — a project under each of its renders — counts twice, as at once)
    if (g.units > 0) budget?.charge(g.units);
    if (g.bytes > 0) budget?.chargeCopied(g.bytes);
    for (; g.at < items.length; g.at++) {
      if (!turn.spend(1)) return []; // provisional: the round is run again
      const [bytes, units] = [budget?.itemCopied ?? 0, budget?.spent ?? 0];
      const x = subProject(items[g.at] as Rec);
      if (turn.short) return []; // a walk under it stopped: this item is projected again next round
      g.bytes += (budget?.itemCopied ?? 0) - bytes;
      g.units += (budget?.spent ?? 0) - units;
      g.out.push(x);
      turn.moved();
    }
    // (a copy: two items answering one parent's list do not share an array)
    return g.out.slice();
  };
}

/** True when the selection lists or expands related items (what MAX_RELATED_ITEMS counts). */
export function selectsRelations(
  fields: readonly SelectNode[], base: ResourceSchema, schemas: SchemaRegistry, alias?: Readonly<Record<string, string>>,
): boolean {
  const resource = withAliases(base, alias);
  const t = buildTree(fields, resource, schemas);
  if (t.children.size > 0) return true;
  const names = t.star ? Object.keys(resource.fields) : t.order;
  return names.some((n) => Object.hasOwn(resource.fields, n) && resource.fields[n]?.relation?.kind === 'o2m');
}

function projectorFor(
  t: SelTree, resource: ResourceSchema, schemas: SchemaRegistry, lookup: Lookup,
  budget: ExpansionBudget | undefined, deep: DeepNode | undefined, nestedLimit: number, nested = false,
): Projector {
  const parentKey = resource.key;
  // values copied from related records count towards MAX_ITEM_MB (the root record's own are bounded by what is stored)
  const counted = nested ? budget : undefined;
  const names = t.star ? [...Object.keys(resource.fields), ...t.order.filter((n) => !Object.hasOwn(resource.fields, n))] : t.order;
  const steps = names.map((name) => {
    const f = Object.hasOwn(resource.fields, name) ? resource.fields[name] : undefined;
    if (!f) return (_r: Rec, _o: Record<string, unknown>) => {};
    const sub = t.children.get(name);
    const rel = f.relation;
    const source = f.aliasOf ?? name; // an alias answers under its own name what its field holds
    // (an alias copies a stored value once more, however often it is asked for: counted at every level)
    const charged = counted ?? (f.aliasOf ? budget : undefined);
    if (!rel && charged) return (r: Rec, o: Record<string, unknown>) => { charged.chargeValue(o[name] = r[source] ?? null); };
    if (!rel) return (r: Rec, o: Record<string, unknown>) => { o[name] = r[source] ?? null; };
    const relSchema = schemas[rel.resource] as ResourceSchema;
    const d = deep?.children[name];
    const subProject = sub ? projectorFor(sub, relSchema, schemas, lookup, budget, d, nestedLimit, true) : undefined;
    const choice = d ? compileChoice(d, relSchema, schemas, lookup) : undefined;
    if (rel.kind === 'm2o') {
      return (r: Rec, o: Record<string, unknown>) => {
        const id = r[source];
        if (!subProject || typeof id !== 'string') { o[name] = id ?? null; return; }
        const rec = lookup.one(rel.resource, id);
        if (rec) budget?.charge(1);
        o[name] = rec ? subProject(rec) : null;
      };
    }
    // a parent's chosen items, and how far their choice got: a round run again (tests go on in rounds) reads them back,
    // or goes on where it stopped, instead of testing every candidate again — 500 relational terms over 20 projects'
    // renders re-tested every known answer each round, ~0.5 s a round (the re-check of attack pass 15)
    const chosen = choice ? new Map<unknown, Choosing>() : undefined;
    const choose = (r: Rec): readonly Rec[] => {
      if (!choice || !chosen) return lookup.many(rel.resource, r, source, parentKey);
      const key = r.id ?? r;
      let c = chosen.get(key);
      if (!c || c.version !== lookup.version) {
        if (lookup.turn?.short) return []; // (the round stopped: nothing more is read)
        c = { version: lookup.version, all: lookup.manyAll?.(rel.resource, r, source, parentKey) ?? [], at: 0, kept: [] };
        chosen.set(key, c);
      }
      return chooseRelated(c, choice, nestedLimit, lookup.turn, budget) ?? [];
    };
    const expand = subProject ? expandInRounds(subProject, lookup, budget) : undefined;
    return (r: Rec, o: Record<string, unknown>) => {
      const items = choose(r);
      budget?.charge(items.length);
      o[name] = expand ? expand(r, items) : items.map((x) => x.id);
    };
  });
  // date functions answer PostgreSQL number strings, as Directus 10 on PostgreSQL does ("2026")
  const fnSteps = t.fns.map(({ field, fn }) => {
    const f = dateFn(fn);
    const key = `${field}_${fn}`;
    return (r: Rec, o: Record<string, unknown>) => {
      const v = f(r[field]);
      o[key] = v === null ? null : String(v);
    };
  });
  // count(<one-to-many>): every related item counted, as a PostgreSQL number string
  const countSteps = t.counts.map((field) => {
    const rel = fieldDef(resource, field)?.relation;
    return (r: Rec, o: Record<string, unknown>) => {
      o[`${field}_count`] = rel ? String((lookup.manyAll?.(rel.resource, r, field, parentKey) ?? []).length) : null;
    };
  });
  return (r) => {
    const o: Record<string, unknown> = {};
    for (const s of steps) s(r, o);
    for (const s of fnSteps) s(r, o);
    for (const s of countSteps) s(r, o);
    return o;
  };
}


