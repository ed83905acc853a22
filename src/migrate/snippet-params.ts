import { resolveDynamic } from '../query/dynamic.js';
import { DERIVED_KEYS, FLAG_TESTS, LIST_PARAMS, TEXT_TESTS, TIME_TEST_NAMES, type Equivalent } from './equivalent-model.js';
import { own } from '../lib/own.js';
import { ID_TYPES, type IdType } from '../translate/ids.js';
import type { Shape } from './shape.js';

/**
 * The top-level conditions of a legacy filter (an `_and` of them included), by `path op`: their values; and every
 * top-level `_or`'s branches in `ors` (an `_and` may hold two: the eighth held-out check read the last one for both).
 */
function topConditions(filter: unknown): Map<string, unknown> & { ors: unknown[][] } {
  const out = Object.assign(new Map<string, unknown>(), { ors: [] as unknown[][] });
  const walk = (node: unknown, path: string[]) => {
    if (!node || typeof node !== 'object' || Array.isArray(node)) return;
    for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
      if (k === '_and' && path.length === 0 && Array.isArray(v)) v.forEach((x) => walk(x, []));
      else if (k === '_or' && path.length === 0 && Array.isArray(v)) out.ors.push(v);
      else if (k.startsWith('_')) out.set(`${path.join('.')} ${k}`, v);
      else walk(v, [...path, k]);
    }
  };
  walk(filter, []);
  return out;
}

/** An `_or`'s branches, an `_or` nested alone in one by its branches in its place (as the client steps number them). */
function flatOr(branches: readonly unknown[]): unknown[] {
  return branches.flatMap((b) => {
    const nested = b && typeof b === 'object' && !Array.isArray(b) && Object.keys(b).length === 1 ? own(b as Record<string, unknown>, '_or') : undefined;
    return Array.isArray(nested) ? flatOr(nested) : [b];
  });
}

/** Whether every branch of an `_or` is `path`'s `_eq` (an _in the client steps test: `status_or`). */
const sameFieldOr = (branches: readonly unknown[], path: string) =>
  branches.every((b) => own(own(b as Record<string, unknown>, path) as Record<string, unknown>, '_eq') !== undefined);

/** The filtered paths that name another type's id (their values are given to v1 as that type's v1 ids). */
const ID_PATHS: Readonly<Record<string, IdType>> = {
  project: 'project', 'project.id': 'project',
  account: 'account', 'project.account': 'account', 'account.id': 'account',
  user_created: 'user', 'user_created.id': 'user',
};

/** The legacy type a filtered path names the id of (its value is given to v1 as that type's v1 id). */
function idType(path: string, resource: string): string | null {
  return path === 'id' ? resource : own(ID_PATHS, path) ?? null;
}


const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : typeof v === 'string' ? v.split(',') : [v]);

/**
 * The parameters a shape's snippets take, for one concrete legacy question (`raw`, the query the proof asks the
 * gateway): the ids the calls take in their v1 form (`callParams`, lists as arrays), the legacy status name, each value
 * a client step compares (an id given as its v1 id; a date with `$NOW` resolved at `now`), the search string, and
 * paging (`limit` with the legacy default, `page` as an offset). Pure but for `toV1`.
 */
export async function snippetParams(
  shape: Shape, e: Equivalent, raw: Readonly<Record<string, unknown>>, callParams: Readonly<Record<string, string>>,
  o: {
    readonly limitDefault: number; readonly now: number; readonly toV1: (type: string, uuid: string) => Promise<string | undefined>;
    /** The imported pairs (v1 id → legacy uuid) of a type, of the ids the calls read (`user_uuids`). */
    readonly imported?: (type: string) => Record<string, string>;
  },
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const lists = new Set(Object.values(LIST_PARAMS));
  for (const [k, v] of Object.entries(callParams)) {
    if (k === 'v1_statuses') continue;
    out[k] = lists.has(k) ? v.split(',').filter(Boolean) : v;
  }
  const top = topConditions(typeof raw.filter === 'string' ? JSON.parse(raw.filter) : undefined);
  const status = top.get('status _eq');
  if (e.params.some((p) => p.name === 'status') && typeof status === 'string') out.status = status;
  const v1Of = async (path: string, v: unknown) => {
    const type = idType(path, shape.resource ?? '');
    return type && typeof v === 'string' ? ((await o.toV1(type, v)) ?? v) : v;
  };
  const date = (v: unknown) => {
    const r = resolveDynamic(v, { now: new Date(o.now), userId: null, roleId: null });
    return r.ok ? r.value : v;
  };
  // (the _or whose branches conditions are: the one no field's _eq values (`status_or`) claim — one such _or a filter; a
  // review: an _or of one date's _eq values was taken for those and its branches read as nothing)
  const claimed = new Set(e.clientSteps.flatMap((s) => (s.args?.op === 'filter' ? s.args.conds : []))
    .filter((x) => x.branch === undefined && x.test === 'in' && x.param.endsWith('_or'))
    .map((x) => top.ors.find((o) => sameFieldOr(o, x.param.slice(0, -'_or'.length)))));
  const found = top.ors.find((o) => !claimed.has(o));
  const mixed = found ? flatOr(found) : undefined;
  for (const step of e.clientSteps) {
    if (step.args?.op !== 'filter') continue;
    for (const cond of step.args.conds) {
      // (a condition of an _or's branch: its value read from that branch, its parameter named for it — `status_or2`)
      const branch = cond.branch === undefined ? undefined : mixed?.[cond.branch];
      const conds = cond.branch === undefined ? top : topConditions(branch);
      const c = cond.branch === undefined ? cond : { ...cond, param: cond.param.replace(/_or\d+$/, '') };
      const key = cond.param;
      if (c.part) {
        // a part of a date (`year(date_created)`): a number, or a list of them
        const path = c.param.slice(0, -(c.part.length + c.test.length + 2));
        const v = conds.get(`${c.part}(${path}) _${c.test}`);
        out[key] = c.test === 'in' || c.test === 'nin' ? list(v).map(Number) : Number(v);
        continue;
      }
      const time = /^(.*)_(gt|gte|lt|lte|eq|neq|in|nin|nbetween|from|to)$/.exec(c.param);
      if (time && own(TIME_TEST_NAMES, c.test)) {
        const [, path, end] = time as unknown as [string, string, string];
        const v = end === 'from' || end === 'to' ? list(conds.get(`${path} _between`))[end === 'from' ? 0 : 1] : conds.get(`${path} _${end}`);
        out[key] = c.test === 'tin' || c.test === 'tnin' || c.test === 'tout' ? list(v).map(date) : date(v);
        continue;
      }
      if (own(TEXT_TESTS, c.test)) {
        out[key] = conds.get(`${c.param.slice(0, -(c.test.length + 1))} _${c.test}`);
        continue;
      }
      if (c.test === 'in' && c.param.endsWith('_or')) {
        // an _or of one field's _eq: its values, each in its v1 form (ids)
        const path = c.param.slice(0, -'_or'.length);
        const branches = top.ors.find((o) => sameFieldOr(o, path));
        const values = Array.isArray(branches) ? branches.map((b) => own(own(b as Record<string, unknown>, path) as Record<string, unknown>, '_eq')) : [];
        out[key] = await Promise.all(values.filter((v) => v !== undefined).map((x) => v1Of(path, x)));
        continue;
      }
      if (own(FLAG_TESTS, c.test)) {
        // true or false as the filter gives it (a bare flag, `filter[title][_null]`, is true)
        const v = conds.get(`${c.param.slice(0, -(c.test.length + 1))} _${c.test}`);
        out[key] = !(v === false || v === 'false');
        continue;
      }
      if (c.test === 'nin') {
        const path = c.param.slice(0, -'_nin'.length);
        out[key] = await Promise.all(list(conds.get(`${path} _nin`)).map((x) => v1Of(path, x)));
        continue;
      }
      const op = c.test === 'in' ? '_in' : c.test === 'neq' ? '_neq' : '_eq';
      const v = conds.get(`${c.param} ${op}`);
      // (a value the calls already take: a template's id, read by id, is filtered for)
      if (v === undefined && Object.hasOwn(out, key)) continue;
      // (a derived flag, download_ready, as the boolean the snippets compare: a query string gives it as text)
      const flag = (x: unknown) => (own(DERIVED_KEYS, c.field) === 'boolean' && (x === 'true' || x === 'false') ? x === 'true' : x);
      out[key] = op === '_in' ? await Promise.all(list(v).map((x) => v1Of(c.param, flag(x)))) : await v1Of(c.param, flag(v));
    }
  }
  for (const p of e.params) {
    const type = /^(\w+)_uuids$/.exec(p.name)?.[1];
    if (type && o.imported) out[p.name] = o.imported(type);
  }
  if (typeof raw.search === 'string') out.search = raw.search;
  const limit = raw.limit === undefined ? o.limitDefault : Number(raw.limit);
  if (limit >= 0) out.limit = limit;
  if (raw.offset !== undefined) out.offset = Number(raw.offset);
  else if (raw.page !== undefined) out.offset = (Number(raw.page) - 1) * limit;
  else out.offset = 0;
  return out;
}

/**
 * The imported pairs (v1 id → legacy uuid) of the v1 ids of `type` the calls returned (`results`): what a `<type>_uuids`
 * parameter holds for one question (an export's every pair would not fit an environment variable).
 */
export function importedOf(
  results: ReadonlyMap<string, unknown[]>, type: string, imported: (type: IdType, v1Id: string) => string | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  if (!Object.hasOwn(ID_TYPES, type)) return out;
  const prefix = ID_TYPES[type as IdType];
  const walk = (v: unknown, depth: number): void => {
    if (typeof v === 'string') {
      const legacy = v.startsWith(prefix) ? imported(type as IdType, v) : undefined;
      if (legacy) out[v] = legacy;
    } else if (v && typeof v === 'object' && depth < 4) {
      for (const x of Array.isArray(v) ? v : Object.values(v)) walk(x, depth + 1);
    }
  };
  for (const items of results.values()) walk(items, 0);
  return out;
}
