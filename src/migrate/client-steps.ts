import type { Plan } from '../plan/plan.js';
import type { CompareNode, FilterNode, QueryNode } from '../query/ast.js';
import { own } from '../lib/own.js';
import { isRecordResource, type RecordResource } from '../query/resources.js';
import { ID_TYPES, idNamespace, type IdType } from '../translate/ids.js';
import type { Shape } from './shape.js';
import {
  datePartOf, DERIVED_KEYS, FLAG_TESTS, RELATION_ID, SORT_FIELD, TEXT_TESTS, TIME_TEST_NAMES, V1_FIELD, type ClientStep, type FilterCond,
  type FlagTest, type GroupKey, type Param, type StepArgsOf, type TextTest, type V1Call,
} from './equivalent-model.js';

/**
 * The client steps of a read's equivalent — what v1 cannot do for the query (filter, search, sort, page, count, group,
 * aggregate), each with the arguments the snippets write it out from, or in words when they cannot — and the legacy
 * parameters of a list shape. Pure; src/migrate/equivalent.ts composes them with the calls.
 */

/** The legacy date fields, by the v1 time they are read from. */
const TIMES = new Set(['created_at', 'updated_at', 'project_created_at']);
// (a date equal or not to an instant, or one of several: `teq`, `tneq`, `tin`, `tnin` — compared as instants, never as
// text: held-out checks of issue 39)
const TIME_TESTS: Readonly<Record<string, FilterCond['test']>> = {
  _gt: 'gt', _gte: 'gte', _lt: 'lt', _lte: 'lte', _eq: 'teq', _neq: 'tneq', _in: 'tin', _nin: 'tnin',
};
/** The operators a part of a date (`year(date_created)`) is compared with, as numbers. */
const PART_TESTS: Readonly<Record<string, FilterCond['test']>> = {
  _eq: 'eq', _neq: 'neq', _in: 'in', _nin: 'nin', _gt: 'gt', _gte: 'gte', _lt: 'lt', _lte: 'lte',
};
/** What a part of a date is, as the legacy API (PostgreSQL) reads it. */
const PART_MEANS: Readonly<Record<string, string>> = { week: ', the ISO week', weekday: ', 0 = Sunday', month: ', 1–12' };
/** The aggregates of a shape (`fn(field)`) a client can compute from v1's objects, or undefined when one cannot be. */
function aggregateFns(aggregates: readonly string[], v1: Readonly<Record<string, string>>): StepArgsOf<'aggregate'>['fns'] | undefined {
  const out: { fn: 'count' | 'countDistinct' | 'min' | 'max'; field: string; as: string }[] = [];
  for (const a of aggregates) {
    const m = /^(count|countDistinct|min|max)\((.+)\)$/.exec(a);
    if (!m) return undefined;
    const [, fn, field] = m as unknown as [string, 'count' | 'countDistinct' | 'min' | 'max', string];
    if (fn === 'count' && (field === '*' || field === 'id')) { out.push({ fn, field: field === '*' ? '*' : 'id', as: field }); continue; }
    const path = own(v1, field);
    if (!path) return undefined;
    if (fn === 'countDistinct' && path !== 'status') out.push({ fn, field: path, as: field }); // (a status counts by legacy name)
    else if ((fn === 'min' || fn === 'max') && TIMES.has(path)) out.push({ fn, field: path, as: field });
    else return undefined;
  }
  return out;
}

/** The path every one of `children` compares with `_eq` (no function), if they all compare one. */
function sameFieldEq(children: readonly FilterNode[]): string | undefined {
  let path: string | undefined;
  for (const c of children) {
    if (c.kind !== 'Compare' || c.op !== '_eq' || c.field.fn || c.field.path.length !== 1) return undefined;
    const p = c.field.path.join('.');
    if (path !== undefined && p !== path) return undefined;
    path = p;
  }
  return path;
}

/**
 * The field a filter or a sort reads that an earlier step put on each item: a derived value (`slug`, `download_ready`)
 * or a legacy-only one, or a field of a related object a join gave (`project.title`: `project_object.name`; not a time,
 * which is compared as an instant). Undefined when no step gives it (the client's, a TODO).
 */
function stepField(path: string, steps: readonly ClientStep[]): string | undefined {
  const put = steps.some((s) => (s.args?.op === 'derive' && s.args.field === path && own(DERIVED_KEYS, path))
    || (s.args?.op === 'constant' && !s.args.on && s.args.field === path));
  if (put) return path;
  const [first, ...rest] = path.split('.');
  if (rest.length === 0) return undefined;
  const relate = steps.map((s) => s.args).find((a): a is StepArgsOf<'relate'> => a?.op === 'relate' && a.as === `${first}_object`);
  const inner = relate ? own(own(V1_FIELD, relate.type), rest.join('.')) : undefined;
  return inner && !TIMES.has(inner) && inner !== 'status' ? `${relate?.as}.${inner}` : undefined;
}

/** A group key (`status`, `year(date_created)`) as the snippets read it, or undefined when v1 has no such value. */
function groupKey(g: string, v1: Readonly<Record<string, string>>): GroupKey | undefined {
  const date = datePartOf(g);
  if (date) {
    const field = own(v1, date.field);
    return field && TIMES.has(field) ? { field, as: `${date.field}_${date.part}`, part: date.part } : undefined;
  }
  const field = /\(/.test(g) ? undefined : own(v1, g);
  return field ? { field, as: g } : undefined;
}

/** What v1 cannot do for this query: filter, search, sort, page, count, group. */
export function addClientSteps(shape: Shape, q: QueryNode, plan: Plan | null, steps: ClientStep[], params: Param[], calls: readonly V1Call[]): void {
  const resource = shape.resource ?? '';
  const v1 = own(V1_FIELD, resource) ?? {};
  const enforced = new Set<string>();
  // (a status's lists are asked only where the renders are listed: a read by ids tests the status itself — the ninth
  // held-out check: `id _in` with `status _eq` kept a render of another status)
  if (resource === 'render' && statusEqAtTop(q) && plan?.strategy !== 'direct' && shape.kind !== 'one') enforced.add('status _eq');
  if (plan?.scope.projects && resource === 'render') ['project _eq', 'project _in'].forEach((x) => enforced.add(x));
  if (plan?.scope.accounts) ['account _eq', 'account _in', 'project.account _eq', 'project.account _in'].forEach((x) => enforced.add(x));
  if (plan?.strategy === 'direct' || shape.kind === 'one') ['id _eq', 'id _in'].forEach((x) => enforced.add(x));
  // (a read by id answers the item whatever its filter — the gateway does not apply it: equivalent.ts notes it; the
  // ninth held-out check: the snippets applied it and printed nothing where the gateway gave the item)
  const conjuncts = shape.kind === 'one' ? [] : conjunctsOf(q);
  // (a value a step attached, a template's date_created: its project's created_at — filtered as a time)
  const attachedField = (path: string) => {
    const as = own(own(SORT_FIELD, resource), path);
    return as && steps.some((s) => s.args?.op === 'attach' && s.args.as === as) ? as : undefined;
  };
  const conds: FilterCond[] = [];
  // (an _or of conditions on different fields: each branch's conditions, tested together — one such _or a filter)
  let either: FilterCond[] | undefined;
  let simple = true;
  // (false: a second condition of one kind on one date — two _gt, once flattened from an _and in the _and — whose value
  // would overwrite the first's parameter: the proof drew one value for both and said "equal"; the client's to write)
  const time = (into: FilterCond[], field: string, path: string, test: FilterCond['test'], name: string, branch?: number): boolean => {
    if ([...conds, ...into].some((x) => x.param === name)) return false;
    into.push({ field, test, param: name, ...(branch === undefined ? {} : { branch }) });
    const what = test === 'tin' || test === 'tnin' ? 'a list of ISO 8601 dates' : test === 'tout' ? 'the two ISO 8601 dates of the window' : 'an ISO 8601 date';
    if (!params.some((p) => p.name === name)) {
      params.push({ name, legacy: `${path} (${what}; $NOW and its adjustments resolved by you)`, v1: `compared with ${field} (seconds or ms)` });
    }
    return true;
  };
  /**
   * One comparison's conditions, put `into` a list: false when the client's to write (not simple). In a branch of an
   * _or (`branch`, from 0), its parameters are named for it (`status_or2`), and nothing is enforced by the calls.
   */
  const compare = (c: CompareNode, into: FilterCond[], branch?: number): boolean => {
    const path = c.field.path.join('.');
    const name = (n: string) => (branch === undefined ? n : `${n}_or${branch + 1}`);
    // (a derived value or a related object's field: read where its step put it — held-out check of issue 39)
    const field = own(v1, path) ?? attachedField(path) ?? stepField(path, steps);
    // (one parameter a name: a second condition of one kind on one field — two _ncontains — is left to the client, as
    // its value would overwrite the first's)
    const once = (cond: Omit<FilterCond, 'param'> & { param: string }): boolean => {
      const named = { ...cond, param: name(cond.param), ...(branch === undefined ? {} : { branch }) };
      if ([...conds, ...into].some((x) => x.param === named.param)) return false;
      into.push(named);
      return true;
    };
    if (c.field.fn) {
      // a part of a date (year(date_created) _eq 2026): that part of the v1 time, in UTC, compared as a number
      const test = own(PART_TESTS, c.op);
      const numbers = (Array.isArray(c.value) ? c.value : [c.value]).every((x) => x !== null && x !== '' && Number.isFinite(Number(x)));
      const part = datePartOf(`${c.field.fn}(${path})`)?.part;
      return !!(field && TIMES.has(field) && test && numbers && part) && once({ field, test, param: `${path}_${part}_${test}`, part });
    }
    if (branch === undefined && enforced.has(`${path} ${c.op}`)) return true;
    // a date compared: its v1 time against the date given (an incremental sync's window)
    if (field && TIMES.has(field) && own(TIME_TESTS, c.op)) {
      return time(into, field, path, own(TIME_TESTS, c.op) as FilterCond['test'], name(`${path}_${c.op.slice(1)}`), branch);
    }
    if (field && TIMES.has(field) && c.op === '_between') {
      return time(into, field, path, 'gte', name(`${path}_from`), branch) && time(into, field, path, 'lte', name(`${path}_to`), branch);
    }
    // (outside a window: before its first date or after its second — a null date is neither, as SQL's NOT BETWEEN)
    if (field && TIMES.has(field) && c.op === '_nbetween') {
      return time(into, field, path, 'tout', name(`${path}_nbetween`), branch);
    }
    // a text condition (title _icontains): tested by the client on the v1 text, a parameter of its own (title_icontains)
    const text = c.op.slice(1);
    if (field && !TIMES.has(field) && own(TEXT_TESTS, text) && typeof c.value === 'string') {
      return once({ field, test: text as TextTest, param: `${path}_${text}` });
    }
    // _null, _nnull, _empty, _nempty: a boolean of their own (title_null), either way
    if (field && own(FLAG_TESTS, text) && typeof c.value === 'boolean') return once({ field, test: text as FlagTest, param: `${path}_${text}` });
    // (_nin: a parameter of its own, status_nin — status is the per-status lists' parameter; a null in it: left out)
    if (field && !TIMES.has(field) && c.op === '_nin' && Array.isArray(c.value) && !c.value.includes(null)) {
      return once({ field, test: 'nin', param: `${path}_nin` });
    }
    const test = c.op === '_eq' ? 'eq' : c.op === '_in' ? 'in' : c.op === '_neq' ? 'neq' : null;
    return !!field && !!test && once({ field, test, param: path });
  };
  for (const c of conjuncts) {
    // an _or of one field's _eq (status complete or failed): an _in, its values the _or's (a parameter of its own)
    const same = c.kind === 'Or' ? sameFieldEq(c.children) : undefined;
    if (same && own(v1, same) && !TIMES.has(own(v1, same) as string)) {
      const field = own(v1, same) as string;
      if (conds.some((x) => x.param === `${same}_or`)) simple = false;
      else conds.push({ field, test: 'in', param: `${same}_or` });
      continue;
    }
    // an _or of comparisons of different fields (project or status): each branch's, kept when one branch passes (the
    // sixth held-out check: the client's before)
    // (a branch may be an _and of comparisons, its conditions tested together; an _or nested in a branch is its branches
    // in its place — the ninth held-out check left both to the client)
    if (c.kind === 'Or') {
      const into: FilterCond[] = [];
      const ok = !either && flatOr(c.children).every((b, i) => (b.kind === 'Compare' ? compare(b, into, i)
        : b.kind === 'And' && b.children.length > 0 && b.children.every((x) => x.kind === 'Compare' && compare(x, into, i))));
      if (ok) either = into;
      else simple = false;
      continue;
    }
    if (c.kind !== 'Compare' || !compare(c, conds)) simple = false;
  }
  if (conds.length > 0 || !simple) {
    steps.push({ kind: 'filter', detail: `filter: ${shape.filterTree ?? ''}`, ...(simple ? { args: { op: 'filter', conds } } : {}) });
  }
  if (either && simple) {
    steps.push({ kind: 'filter', detail: 'filter: the items one branch of the _or keeps (each branch\'s conditions together)',
      args: { op: 'filter', conds: either, any: true } });
  }
  if (shape.search) {
    steps.push({ kind: 'search', detail: 'search: keep items whose text fields contain the string, any case (v1 search= matches names only, by relevance)',
      args: { op: 'search', param: 'search' } });
  }
  if (shape.aggregate.length > 0 || shape.groupBy.length > 0) {
    const kind = shape.groupBy.length > 0 ? 'group' : shape.aggregate.every((a) => a.startsWith('count')) ? 'count' : 'aggregate';
    // a part of a date (year(date_created)): the groups are that part of the v1 time, keyed as the legacy API keys them
    const one = shape.groupBy.length === 1 ? (shape.groupBy[0] as string) : undefined;
    // each key: a field v1 has, or a part of a date (keyed `date_created_year`); several: the first is `by`, the others
    // `also` (held-out checks of issue 39: two fields, a field and a part of a date, were the client's)
    const keys = shape.groupBy.map((g) => groupKey(g, v1));
    const keyed = keys.every((k) => k) ? keys as GroupKey[] : undefined;
    const first = keyed?.[0];
    const partOf = one !== undefined && first?.part ? first : undefined;
    const by = first?.field;
    const also = keyed && keyed.length > 1 ? keyed.slice(1) : undefined;
    // groups keyed by their legacy value (a status name, a part of a date) are put in the legacy order (by key, as the
    // legacy API orders groups without a sort) and paged; those keyed by an id are not (the legacy order is the uuid's,
    // which v1 does not carry), nor groups sorted otherwise (by a count)
    const paged = shape.pagination !== 'all' && shape.pagination !== 'none';
    const ordered = shape.sort.length > 0 ? undefined : partOf ? 'number' as const : one === 'status' ? 'text' as const : undefined;
    // count(*), count(id), countDistinct of a field v1 has, min/max of a time: one row, done by the client
    // (grouped: a row per group of the keys, when v1 has each — the sixth held-out check: count and countDistinct by status)
    const fns = shape.groupBy.length > 0 && !keyed ? undefined : aggregateFns(shape.aggregate, v1);
    if (fns && !(shape.aggregate.length === 1 && (shape.aggregate[0] === 'count(*)' || shape.aggregate[0] === 'count(id)'))) {
      const detail = `${shape.aggregate.join(', ')}${shape.groupBy.length ? ` grouped by ${shape.groupBy.join(', ')}` : ''}`;
      steps.push({ kind, detail, args: { op: 'aggregate', fns, ...(keyed && keyed.length ? { groups: keyed } : {}) } });
      return;
    }
    // count(*), or count(id) (an id is never null: every row), the one aggregate
    const countOnly = shape.aggregate.length === 1 && (shape.aggregate[0] === 'count(*)' || shape.aggregate[0] === 'count(id)');
    const of = shape.aggregate[0] === 'count(id)' ? 'id' : null;
    steps.push({
      kind, detail: `${shape.aggregate.join(', ') || 'rows'}${shape.groupBy.length ? ` grouped by ${shape.groupBy.join(', ')}` : ''}`,
      ...(countOnly && (shape.groupBy.length === 0 || by)
        ? {
          args: {
            op: 'count', groupBy: by ?? null, as: first?.as ?? null, of, ...(first?.part ? { part: first.part } : {}),
            ...(ordered ? { ordered } : {}), ...(also ? { also } : {}),
          },
        }
        : {}),
    });
    // a page of groups (the legacy default limit, 100, included): in the legacy order, then cut
    if (ordered && paged && countOnly) {
      const offset = shape.pagination === 'page' || shape.pagination === 'offset' ? 'offset' : null;
      const detail = offset ? 'skip offset groups, take limit' : 'take the first limit groups';
      steps.push({ kind: 'page', detail, args: { op: 'page', offset, limit: 'limit' } });
    }
    return;
  }
  // meta: filter_count is the length of the filtered list, before the page (every item is then walked); total_count
  // the length of the whole collection, before any client step — when the calls walk all of it (no project, account,
  // id or status of the filter narrowing them, no stop after a page); otherwise left to the client
  const all = shape.meta.includes('*');
  if (all || shape.meta.includes('filter_count')) {
    steps.push({ kind: 'count', detail: 'meta filter_count: the items left after the filter, before the page (v1 gives no totals)',
      args: { op: 'meta', count: 'filter_count' } });
  }
  if (all || shape.meta.includes('total_count')) {
    // (a list read up to a page is read whole once the count is asked: equivalent.ts; a narrowed one walks the collection
    // again for it, equivalent.ts too)
    const whole = !plan?.scope.projects && !plan?.scope.accounts && plan?.strategy !== 'direct' && !calls.some((c) => c.perStatus);
    steps.splice(whole ? 0 : steps.length, 0, {
      kind: 'count', detail: 'meta total_count: every item of the collection, counted before any filter (v1 gives no totals)',
      ...(whole ? { args: { op: 'meta', count: 'total_count' } as const } : {}),
    });
  }
  if (shape.kind === 'list') {
    // (a merge by creation time is the order, unless the sort names the id too: its ties are then ordered by the legacy
    // uuid — held-out check of issue 39, `sort=date_created,id`: the tie-break was dropped)
    const byIdToo = shape.sort.some((k) => k.replace(/^-/, '') === 'id');
    const natural = (plan?.strategy === 'merge' && !byIdToo)
      || (shape.sort.length === 0 && isRecordResource(resource) && LEGACY_ORDER[resource].given(plan));
    if (!natural) {
      // (a sort by id is by the legacy uuid: each snippet derives it — an imported one is the ids export's)
      const byId = shape.sort.some((k) => k.replace(/^-/, '') === 'id') && Object.hasOwn(ID_TYPES, resource);
      if (byId) {
        steps.push({ kind: 'derive', detail: `legacy_uuid: each ${resource}'s legacy id (UUID v5 of its v1 id; an imported one is the ids export's)`,
          args: { op: 'derive', field: 'legacy_uuid', namespace: idNamespace(resource as IdType) } });
      }
      // (a key v1 objects do not hold as such — a template's date_created — is read where a step put it: SORT_FIELD; a
      // relation by its legacy uuid, derived as the id's; a derived value or a related object's field where its step put it)
      const keys = (shape.sort.length ? shape.sort : q.sort.length ? [] : defaultSortOf(resource)).map((k) => {
        const name = k.replace(/^-/, '');
        const desc = k.startsWith('-');
        if (byId && name === 'id') return { field: 'legacy_uuid', desc };
        // (a list's count, `count(renders)`, where its step counts it: the number it holds as text — the ninth held-out check)
        const counted = /^count\((\w+)\)$/.exec(name)?.[1];
        if (counted) {
          const n = steps.some((s) => s.args?.op === 'children' && s.args.count && !s.args.on && s.args.field === counted);
          return n ? { field: `${counted}_count`, desc, number: true as const } : { field: undefined, desc };
        }
        const special = own(own(SORT_FIELD, resource), name);
        if (special) return { field: special, desc };
        const related = own(own(RELATION_ID, resource), name);
        if (related) {
          const as = `${name.replace(/\./g, '_')}_uuid`;
          if (!steps.some((s) => s.args?.op === 'derive' && s.args.field === 'legacy_uuid' && s.args.of?.as === as)) {
            const detail = `${as}: the legacy id of each item's ${name} (UUID v5 of v1's ${related.of}; an imported one is the ids export's)`;
            steps.push({ kind: 'derive', detail,
              args: { op: 'derive', field: 'legacy_uuid', namespace: idNamespace(related.type), of: { path: related.of, as } } });
          }
          return { field: as, desc };
        }
        return { field: own(v1, name) ?? stepField(name, steps), desc };
      });
      const ok = keys.length > 0 && keys.every((k) => k.field);
      steps.push({
        kind: 'sort',
        detail: `sort by ${shape.sort.length ? shape.sort.join(', ') : 'the default order (newest first)'} (v1 orders by created_at only, per list)`,
        ...(ok ? { args: { op: 'sort', keys: keys as { field: string; desc: boolean; number?: true }[] } } : {}),
      });
    }
    const offset = shape.pagination === 'page' || shape.pagination === 'offset' ? 'offset' : null;
    if (shape.pagination !== 'all') {
      steps.push({ kind: 'page', detail: offset ? 'skip offset items, take limit (v1 pages by cursor)' : 'take the first limit items',
        args: { op: 'page', offset, limit: 'limit' } });
    }
  }
}

/**
 * The conditions a filter's items must all pass: an _and's, an _and nested in one in its place (a window on one field,
 * `{"date_created": {"_gt": …, "_lte": …}}` beside another condition, is an _and in the _and — the twelfth held-out check
 * left such a filter to the client whole).
 */
function conjunctsOf(q: QueryNode): FilterNode[] {
  const flat = (f: FilterNode): FilterNode[] => (f.kind === 'And' ? f.children.flatMap(flat) : [f]);
  return q.filter ? flat(q.filter) : [];
}

/** An _or's branches, those of an _or nested in one in its place (a or (b or c) is a or b or c). */
function flatOr(children: readonly FilterNode[]): FilterNode[] {
  return children.flatMap((b) => (b.kind === 'Or' ? flatOr(b.children) : [b]));
}

/** The filter is `status _eq` or an and of conditions with one: the render lists are asked per v1 status. */
export function statusEqAtTop(q: QueryNode): boolean {
  return conjunctsOf(q).some((c) => c.kind === 'Compare' && !c.field.fn && c.field.path.length === 1 && c.field.path[0] === 'status' && c.op === '_eq');
}

/**
 * Each resource's legacy order when a list names no sort (`sort`, as its client sorts the v1 items), and whether the
 * read's own calls and steps give it already (`given`: an account list is sorted by its legacy uuid and a template list
 * by its project's creation in `READ_CALLS`; a team's projects come in it; a render list is judged by its plan's merge).
 */
const LEGACY_ORDER: { readonly [R in RecordResource]: { readonly sort: readonly string[]; readonly given: (plan: Plan | null) => boolean } } = {
  render: { sort: ['-date_created'], given: () => false },
  project: { sort: ['-date_created'], given: (plan) => !!plan?.scope.accounts },
  account: { sort: ['id'], given: () => true },
  template: { sort: ['-date_created'], given: () => true },
};

const defaultSortOf = (resource: string): readonly string[] => (isRecordResource(resource) ? LEGACY_ORDER[resource].sort : ['-date_created']);

/**
 * Every legacy parameter of a list shape the snippets take, with its v1 form: the status (one list per v1 status it
 * stands for), the filter values the client steps compare, the search string, and paging — `limit` with the default the
 * legacy API applies when the client sends none, `page` turned into an offset.
 */
export function listParams(shape: Shape, q: QueryNode, steps: readonly ClientStep[], params: Param[], limitDefault: number): void {
  const add = (p: Param) => { if (!params.some((x) => x.name === p.name)) params.push(p); };
  if (statusEqAtTop(q)) add({ name: 'status', legacy: 'status (a legacy status name)', v1: 'each v1 status it stands for (statuses below): one list each' });
  for (const s of steps) {
    if (s.args?.op !== 'filter') continue;
    for (const c of s.args.conds) {
      if (c.part) {
        const several = c.test === 'in' || c.test === 'nin';
        const means = `${several ? 'a list of numbers' : 'a number'}: the ${c.part} the filter's _${c.test} compares${own(PART_MEANS, c.part) ?? ''}`;
        add({ name: c.param, legacy: `${c.param} (${means})`,
          v1: `compared with the ${c.part} of ${c.field} (seconds or ms) in UTC` });
        continue;
      }
      if (own(TIME_TEST_NAMES, c.test)) continue; // (listed with their step)
      const text = own(TEXT_TESTS, c.test);
      const several = c.test === 'in' || c.test === 'nin';
      const what = own(FLAG_TESTS, c.test) ? `true or false, as the filter's _${c.test} gives it` : text ? `the text the filter's _${c.test} tests`
        : `${several ? 'a list of values' : 'the value'} the filter ${c.test === 'nin' ? 'excludes' : 'compares'}`;
      add({ name: c.param, legacy: `${c.param} (${what})`,
        v1: `compared with ${c.field}${c.field === 'status' ? ' as a legacy status name' : ''}` });
    }
  }
  if (shape.search) add({ name: 'search', legacy: 'search (the string)', v1: 'matched in name and the status, any case (client step)' });
  if (shape.kind !== 'list' || shape.pagination === 'all' || shape.pagination === 'none') return;
  const legacy = shape.pagination === 'default' ? `no limit sent: the legacy default, ${limitDefault}`
    : shape.pagination === 'limit' ? 'limit' : `limit (the legacy default, ${limitDefault}, when none is sent)`;
  add({ name: 'limit', legacy, v1: 'the first limit items, after the steps above' });
  if (shape.pagination === 'page') add({ name: 'offset', legacy: 'page (from 1)', v1: 'offset = (page − 1) × limit items skipped' });
  if (shape.pagination === 'offset') add({ name: 'offset', legacy: 'offset', v1: 'offset items skipped' });
}
