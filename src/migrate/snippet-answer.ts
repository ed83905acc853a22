import { diffAnswers, type Difference } from '../compare/diff.js';
import { isGuideResource, v1Of } from './v1-resources.js';
import type { Mappings } from '../config/mappings.js';
import type { QueryNode } from '../query/ast.js';
import { ExpansionBudget } from '../query/budget.js';
import type { Lookup, Rec } from '../query/compile.js';
import { compileProjection } from '../query/project.js';
import type { ResourceSchema } from '../query/schema.js';
import { datePartOf, EMBEDDED, TRANSLATED, type Equivalent } from './equivalent-model.js';
import { mainCall } from './snippet-common.js';
import { own } from '../lib/own.js';
import type { Shape } from './shape.js';
import { ID_TYPES, type IdType } from '../translate/ids.js';

const isIdType = (t: string): t is IdType => Object.hasOwn(ID_TYPES, t);

/** What the snippet's items are read back with: the legacy records of v1 objects (the proof's `recordsOf`). */
export type ReadBack = (results: Map<string, unknown[]>) => { records: Rec[]; lookup: Lookup };

/** A snippet's answer read back as the legacy API's `data`, or why it cannot be (the shape is then not proven by it). */
export type SnippetData =
  | { readonly ok: true; readonly data: unknown; readonly records: Rec[]; readonly meta?: Readonly<Record<string, unknown>> }
  | { readonly ok: false; readonly why: string };

/** The snippet's meta counts against the gateway's (as numbers): a count it gives that differs, or one it lacks. */
export function metaDifferences(legacy: unknown, got: Readonly<Record<string, unknown>> | undefined, asked: readonly string[]): Difference[] {
  const held = (legacy && typeof legacy === 'object' ? legacy : {}) as Record<string, unknown>;
  const out: Difference[] = [];
  for (const key of Object.keys(held)) {
    if (!asked.includes(key) && !asked.includes('*')) continue;
    const mine = got && Object.hasOwn(got, key) ? got[key] : undefined;
    if (mine === undefined) continue; // (a count the snippet leaves to the client: its step is a TODO, the shape partial)
    if (Number(mine) !== Number(held[key])) out.push({ path: `meta.${key}`, kind: 'value', legacy: held[key], translated: mine });
  }
  return out;
}

const numeric = (v: unknown) => (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v);

/** The list call a call by id reads one item of (by their names in an equivalent's calls). */
const LIST_OF: Readonly<Record<string, string>> = { render: 'renders' };

/**
 * The translation the report describes, applied to what a snippet printed: its v1 objects made legacy records (ids to
 * uuids, statuses and times to the legacy forms; the relations looked up in what the equivalent's calls returned),
 * projected by the question's fields, in the snippet's order (the snippet did the filtering, sorting and paging). A count
 * or a count per status is read as the legacy aggregate (numbers compared as numbers). Pure.
 */
export function snippetData(
  output: unknown, shape: Shape, q: QueryNode, e: Equivalent, results: ReadonlyMap<string, unknown[]>, readBack: ReadBack,
  m: Mappings, maxRelated: number, legacyId: (type: IdType, v1Id: string) => string,
): SnippetData {
  // a shape with meta=filter_count: the snippet answers { meta, data }, as the legacy API does
  const withMeta = output && typeof output === 'object' && !Array.isArray(output) && Array.isArray((output as { data?: unknown }).data);
  if (withMeta) {
    const { meta, data } = output as { meta?: unknown; data: unknown[] };
    const inner = snippetData(data, shape, q, e, results, readBack, m, maxRelated, legacyId);
    return inner.ok && meta && typeof meta === 'object' ? { ...inner, meta: meta as Readonly<Record<string, unknown>> } : inner;
  }
  if (!Array.isArray(output)) return { ok: false, why: 'the snippet printed no list' };
  if (shape.aggregate.length > 0 || shape.groupBy.length > 0) {
    // a group keyed by a many-to-one relation (`project`): its v1 id translated as the report says (ids export)
    // (a group keyed by ids: a many-to-one relation's, or the creator's — user_created holds a user's)
    const idTypeOf = (by: string) => {
      const relation = Object.hasOwn(m.schemas[q.resource]?.fields ?? {}, by) ? m.schemas[q.resource]?.fields[by]?.relation : undefined;
      return relation?.kind === 'm2o' && isIdType(relation.resource) ? relation.resource : by === 'user_created' ? 'user' : undefined;
    };
    // (a part of a date, `year(date_created)`: the snippet keys its groups as the legacy API does, a number string)
    const part = (by: string) => { const d = datePartOf(by); return d !== undefined && (d.field === 'date_created' || d.field === 'date_updated'); };
    const keyed = shape.groupBy.filter((by) => by !== 'status' && !part(by));
    if (keyed.some((by) => !idTypeOf(by))) {
      return { ok: false, why: `grouped by ${shape.groupBy.join(', ')}: the snippet's groups are keyed by v1 values` };
    }
    const key = (g: unknown) => {
      if (!g || typeof g !== 'object') return g;
      const out = { ...(g as Record<string, unknown>) };
      for (const by of keyed) {
        const v = out[by];
        const type = idTypeOf(by);
        if (type && typeof v === 'string') out[by] = legacyId(type, v);
      }
      return out;
    };
    return { ok: true, data: output.map((g) => normalisedGroup(key(g))), records: [] };
  }
  const main = mainCall(e);
  if (!main) return { ok: false, why: 'the equivalent makes no call' };
  const merged = new Map(results);
  // the snippet's items stand for the call the answer is made of (a read by id: its one item)
  // (a read by id's items stand for its list's: the `render` call's for `renders`)
  const asList = own(LIST_OF, main);
  merged.set(asList && !merged.has(main) ? asList : main, output);
  for (const [one, list] of Object.entries(LIST_OF)) if (main === list) merged.delete(one);
  // a many-to-one join the snippet wrote out: the related records are the v1 objects it printed (`project_object`)
  // (by type and legacy id too: a list it printed on one, `project_object.renders`, is that record's)
  const related = new Map<string, Map<string, Record<string, unknown>>>();
  for (const s of e.clientSteps) {
    if (s.args?.op !== 'relate') continue;
    const objects = printedObjects(output, s.args.as);
    merged.set(s.args.from, [...objects.values()]);
    const type = s.args.type;
    if (isIdType(type)) related.set(type, new Map([...objects].map(([id, o]) => [legacyId(type, id), o])));
  }
  // a relation's object v1 embeds in the item (a project's team: `account.name` is its `team.name`) is that record, read
  // from what the snippet printed (held-out check of issue 39: read from a /v1/teams call the equivalent never made)
  const embedded = own(EMBEDDED, q.resource);
  if (embedded && !e.clientSteps.some((s) => s.args?.op === 'relate' && s.args.from === embedded.call)) {
    merged.set(embedded.call, [...printedObjects(output, embedded.at).values()]);
  }
  const { records, lookup: calls } = readBack(merged);
  // related records are the snippet's to give: a many-to-one record is the object it printed (above) — where the join is
  // the client's (partial: not compared), the proof's calls stand for it; a one-to-many list is the ids it printed for
  // the item (`renders`), read through the id translation, a count (`renders_count`) the number it printed, and one it
  // did not print is NOT_PRINTED (held-out check of issue 39: /users/me's accounts and the count of a project's renders
  // were read from the proof's calls)
  const unprinted: Rec = { id: NOT_PRINTED };
  const byId = printedById(output, q.resource, legacyId);
  const schemas = m.schemas;
  const listed = (parent: Rec, field: string, parentResource: string): Rec[] | undefined => {
    const v = printedField((parentResource === q.resource ? byId : related.get(parentResource))?.get(String(parent.id)), field);
    const type = Object.hasOwn(schemas, parentResource) ? ownField(schemas[parentResource] as ResourceSchema, field)?.relation?.resource : undefined;
    if (!Array.isArray(v) || !type || !isIdType(type)) return undefined;
    // (a list of the children's v1 objects, `projects.title` read through it: each read back as a legacy record, as the
    // calls' items are — from what the snippet printed, never the proof's calls)
    const objects = v.filter((x): x is { id: string } => !!x && typeof x === 'object' && typeof (x as { id?: unknown }).id === 'string');
    const call = v1Of(type)?.list;
    const printed = objects.length > 0 && call ? readBack(new Map([[call, objects]])).lookup : undefined;
    // (and their derived values those the snippet wrote onto them — `renders.download_ready` — never the proof's own)
    const theirs = asPrinted(new Map(objects.map((o) => [legacyId(type, o.id), o as Record<string, unknown>])), type, m, legacyId);
    return v.map((x) => {
      const id = typeof x === 'string' ? x : x && typeof x === 'object' ? (x as { id?: unknown }).id : x;
      const legacy = typeof id === 'string' ? legacyId(type, id) : id;
      const rec = printed && typeof legacy === 'string' ? printed.one(type, legacy) : undefined;
      return rec ? theirs(rec) : { id: legacy };
    });
  };
  // (a related record's own derived and legacy-only values are what the snippet printed on its object, as the item's are)
  const over = new Map([...related].map(([type, objects]) => [type, asPrinted(objects, type, m, legacyId)]));
  const one = (type: string, id: string): Rec | undefined => {
    const r = calls.one(type, id);
    const o = over.get(type);
    return r && o ? o(r) : r;
  };
  const lookup: Lookup = { one, many: (_c, parent, field, pr) => listed(parent, field, pr) ?? [unprinted], manyAll: () => [unprinted] };
  const project = compileProjection(q.fields, schemas[q.resource] as ResourceSchema, schemas, lookup, new ExpansionBudget(maxRelated));
  const printed = asPrinted(byId, q.resource, m, legacyId);
  const counts = q.fields.filter((f) => f.count).map((f) => `${f.path[0] ?? ''}_count`);
  const items = records.map((r) => {
    const o = project(printed(r));
    for (const c of counts) o[c] = printedField(byId.get(String(r.id)), c) ?? NOT_PRINTED;
    return o;
  });
  return { ok: true, data: shape.kind === 'one' || shape.kind === 'me' ? items[0] ?? null : items, records };
}

const ownField = (schema: ResourceSchema, name: string) => (Object.hasOwn(schema.fields, name) ? schema.fields[name] : undefined);
const printedField = (item: Record<string, unknown> | undefined, name: string): unknown =>
  (item && Object.hasOwn(item, name) ? item[name] : undefined);

/** The objects the snippet printed under `field` of its items (a joined `project_object`), by v1 id. */
function printedObjects(output: readonly unknown[], field: string): Map<string, Record<string, unknown>> {
  const objects = new Map<string, Record<string, unknown>>();
  for (const x of output) {
    const o = printedField(x && typeof x === 'object' ? x as Record<string, unknown> : undefined, field) as { id?: unknown } | null | undefined;
    if (o && typeof o === 'object' && typeof o.id === 'string') objects.set(o.id, o as Record<string, unknown>);
  }
  return objects;
}

/** The snippet's items by the legacy id of their v1 id (what it printed for each record). */
function printedById(output: readonly unknown[], resource: string, legacyId: (type: IdType, v1Id: string) => string): Map<string, Record<string, unknown>> {
  const byId = new Map<string, Record<string, unknown>>();
  if (!isIdType(resource)) return byId;
  for (const x of output) {
    const v1 = x && typeof x === 'object' ? (x as { id?: unknown }).id : undefined;
    if (typeof v1 === 'string') byId.set(legacyId(resource, v1), x as Record<string, unknown>);
  }
  return byId;
}


/** What a field holds when the snippet's answer does not give it (never equal to the gateway's value, null included). */
export const NOT_PRINTED = "(not in the snippet's answer)";

/** A record read back from the snippet's v1 objects, keeping of the derived fields only those the translation covers. */
function asPrinted(
  byId: ReadonlyMap<string, Record<string, unknown>>, resource: string, m: Mappings, legacyId: (type: IdType, v1Id: string) => string,
): (r: Rec) => Rec {
  const fields = Object.hasOwn(m.resources, resource) ? m.resources[resource]?.fields ?? {} : {};
  const translated = new Set(isGuideResource(resource) ? TRANSLATED[resource] : []);
  // (and a legacy-only value, source `none`: the snippet's to write out, never the proof's)
  const own = Object.entries(fields).filter(([name, f]) => (f.source.kind === 'derived' && !translated.has(name)) || (f.source.kind === 'none' && !f.relation))
    .map(([name]) => name);
  // (a derived id the snippet gives as v1's — an account's owner, a user_ id — read through the report's id translation)
  const ids = new Set(own.filter((name) => fields[name]?.type === 'uuid'));
  const legacyOf = (v: unknown) => {
    if (typeof v !== 'string') return v;
    const type = (Object.keys(ID_TYPES) as IdType[]).find((t) => v.startsWith(ID_TYPES[t]));
    return type ? legacyId(type, v) : v;
  };
  if (own.length === 0) return (r) => r;
  return (r) => {
    const item = byId.get(String(r.id));
    const out: Record<string, unknown> = { ...r };
    for (const name of own) out[name] = item && Object.hasOwn(item, name) ? (ids.has(name) ? legacyOf(item[name]) : item[name]) : NOT_PRINTED;
    return out;
  };
}

/** A legacy aggregate row with its numbers as numbers (Directus gives counts as text on PostgreSQL). */
export function normalisedGroup(g: unknown): unknown {
  if (!g || typeof g !== 'object' || Array.isArray(g)) return g;
  // (its keys in one order: an object's key order means nothing, and groups are compared whole — a Python row keyed after
  // its aggregates read as another group)
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(g).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    out[k] = v && typeof v === 'object' && !Array.isArray(v) ? normalisedGroup(v) : numeric(v);
  }
  return out;
}

/**
 * The differences between the gateway's `data` and a snippet's. Items of equal sort keys (ties: the legacy API breaks
 * them by uuid, which v1 objects do not carry) may come in another order: the same items with the same sequence of sort
 * keys, position by position, are the same answer (`known`: every record the equivalent's calls returned, to read the
 * keys of the gateway's items).
 */
export function snippetDifferences(
  legacy: unknown, got: SnippetData & { ok: true }, q: QueryNode, m: Mappings, aggregate: boolean, known: readonly Rec[],
): Difference[] {
  const rules = m.comparison;
  // (groups on both sides in one form: numbers as numbers, keys in one order)
  const norm = aggregate && Array.isArray(legacy) ? legacy.map((g) => normalisedGroup(g)) : legacy;
  const theirs = aggregate && Array.isArray(got.data) ? got.data.map((g) => normalisedGroup(g)) : got.data;
  const ordered = diffAnswers(
    { status: 200, body: { data: norm } }, { status: 200, body: { data: theirs } }, { rules, unordered: aggregate, identity: () => undefined },
  );
  if (ordered.length === 0 || aggregate || !Array.isArray(norm) || !Array.isArray(got.data)) return ordered;
  // (which of several items of one instant a page ends on is a tie too: the sort keys, position by position, decide)
  const byId = new Map([...known, ...got.records].map((r) => [r.id as string, r]));
  // (no sort: the resource's default, its id tie-break left out where another key leads — an account's default is its
  // uuid alone, which v1's team order does not follow: held-out check of issue 39, "equal" in another order)
  const defaults = (m.schemas[q.resource]?.defaultSort ?? ['-date_created']).map((x) => x.replace(/^-/, ''));
  const sort = q.sort.length > 0 ? q.sort.map((s) => s.field.path.join('.')) : defaults.length > 1 ? defaults.filter((f) => f !== 'id') : defaults;
  const keyOf = (item: unknown) => {
    const rec = byId.get(String((item as { id?: unknown } | null)?.id));
    return rec ? JSON.stringify(sort.map((f) => rec[f])) : undefined;
  };
  const a = norm.map(keyOf);
  const b = (got.data as unknown[]).map(keyOf);
  if (!(a.length === b.length && a.every((k, i) => k !== undefined && k === b[i]))) return ordered;
  // a tie forgives the order only: each run of equal keys put in the gateway's order of its ids, then compared whole (a
  // join the snippet printed null compared equal, its sort keys alike: found by a mutation of the join's code); an item
  // the gateway's run does not hold stands in for the one it replaces only in the last run (another of one instant where
  // the page ends), or the first of a page past the list's start, and only once in the answer — elsewhere, or twice, it
  // is compared as it is (a re-read of the change: a wrong or repeated item inside a tie was "equal")
  const idOf = (x: unknown) => String((x as { id?: unknown } | null)?.id);
  const mine = [...(got.data as unknown[])];
  const times = new Map<string, number>();
  for (const x of mine) times.set(idOf(x), (times.get(idOf(x)) ?? 0) + 1);
  for (let i = 0, j = 0; i < a.length; i = j) {
    while (j < a.length && a[j] === a[i]) j++;
    const at = new Map(norm.slice(i, j).map((x, k) => [idOf(x), k]));
    const run = norm.slice(i, j);
    const filled = new Set<number>();
    const others: unknown[] = [];
    for (const x of mine.slice(i, j)) {
      const k = at.get(idOf(x));
      if (k !== undefined && !filled.has(k)) { run[k] = x; filled.add(k); } else others.push(x);
    }
    for (let k = 0; k < run.length; k++) {
      if (filled.has(k)) continue;
      const x = others.shift();
      // (and in the first run of a page that does not start the list: another of one instant where the page begins —
      // the seventh held-out check, an offset inside a run of one date_updated said "differs" of snippets that were right)
      const edge = j === a.length || (i === 0 && q.offset > 0);
      if (!edge || times.get(idOf(x)) !== 1) run[k] = x;
    }
    mine.splice(i, j - i, ...run);
  }
  return diffAnswers({ status: 200, body: { data: norm } }, { status: 200, body: { data: mine } }, { rules, unordered: false, identity: () => undefined });
}
