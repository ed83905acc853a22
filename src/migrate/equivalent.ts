import type { Mappings } from '../config/mappings.js';
import type { Plan } from '../plan/plan.js';
import type { FilterNode, QueryNode } from '../query/ast.js';
import { ONE_TO_MANY } from '../query/resources.js';
import { own } from './own.js';
import type { Shape } from './shape.js';

/**
 * The v1 equivalent of a query shape, from the plan the gateway runs for it: the v1 calls (in order, each once or once
 * per item an earlier call gave, with the cursor loop where v1 pages), what the client must then do itself because v1
 * cannot, and the fields no v1 call gives. Pure: the same shape and plan give the same equivalent.
 */
export * from './equivalent-model.js';
import {
  FLAG_TESTS, LIST_PARAMS, TEXT_TESTS, V1_FIELD, type BlockedField, type FlagTest, type TextTest, type ClientStep, type Equivalent, type FilterCond,
  type Param, type StepArgsOf, type V1Call,
} from './equivalent-model.js';

/** The legacy date fields, by the v1 time they are read from. */
const TIMES = new Set(['created_at', 'updated_at']);
const TIME_TESTS: Readonly<Record<string, FilterCond['test']>> = { _gt: 'gt', _gte: 'gte', _lt: 'lt', _lte: 'lte' };
const TIME_TESTS_BY_TEST: Readonly<Record<string, true>> = { gt: true, gte: true, lt: true, lte: true };
const PAGE = '60';
const PREFIX: Readonly<Record<string, string>> = { render: 'rend_', project: 'proj_', account: 'team_', template: 'tpl_', user: 'user_' };
const param = (name: string, resource: string): Param => ({
  name, legacy: `${resource} uuid`, v1: `${own(PREFIX, resource) ?? ''}… (legacy-gateway ids export pairs them; derived ids are UUID v5 of the v1 id)`,
});

/** A resource's own field of that name in the mappings (never an inherited member). */
const fieldOf = (m: Mappings, resource: string, name: string | undefined) => own(own(m.resources, resource)?.fields, name);

/** The mapping of a dotted path from a resource (through many-to-one and one-to-many relations), or undefined. */
function fieldAt(m: Mappings, resource: string, path: readonly string[]): { resource: string; field: string } | undefined {
  let cur = resource;
  for (let i = 0; i < path.length; i++) {
    const name = (path[i] as string).replace(/^\w+\((.*)\)$/, '$1');
    const f = own(own(m.resources, cur)?.fields, name);
    if (!f) return undefined;
    if (i === path.length - 1) return { resource: cur, field: name };
    if (!f.relation) return undefined;
    cur = f.relation.resource;
  }
  return undefined;
}

/** Fields a shape names that v1 has no source for (`store` or `none` in the mappings), and overlay writes. */
export function blockedFields(shape: Shape, m: Mappings): { blocked: BlockedField[]; unverified: string[] } {
  const blocked = new Map<string, BlockedField>();
  const unverified = new Set<string>();
  const resource = shape.resource;
  if (!resource) return { blocked: [], unverified: [] };
  const look = (path: string, explicit: boolean) => {
    const clean = path.replace(/^(count|year|month|week|day|weekday|hour|minute|second|sum|avg|min|max|countDistinct)\((.*)\)$/, '$2');
    const parts = clean.split('.');
    if (parts.at(-1) === '*') {
      // `*` (or `project.*`): every field of that resource
      const base = parts.length > 1 ? fieldAt(m, resource, parts.slice(0, -1)) : undefined;
      const target = parts.length > 1 ? (base ? fieldOf(m, base.resource, base.field)?.relation?.resource : undefined) : resource;
      for (const [name, f] of Object.entries(own(m.resources, target)?.fields ?? {})) {
        if (f.source.kind === 'store' || f.source.kind === 'none') unverified.add(`${target}.${name}`);
      }
      return;
    }
    const at = fieldAt(m, resource, parts);
    if (!at) return;
    const f = fieldOf(m, at.resource, at.field);
    if (!f || (f.source.kind !== 'store' && f.source.kind !== 'none')) return;
    const name = `${at.resource}.${at.field}`;
    if (!explicit) { unverified.add(name); return; }
    const why = f.source.kind === 'store'
      ? `only the gateway keeps it (${f.source.from ?? 'its store'}${f.source.how ? `: ${f.source.how}` : ''})`
      : `legacy only: v1 has no such value${f.source.how ? ` (${f.source.how})` : ` (the gateway answers ${JSON.stringify(f.source.value ?? null)})`}`;
    blocked.set(name, { field: name, source: f.source.kind, why });
  };
  for (const f of shape.fields) look(f, true);
  for (const f of shape.filter) look(f.split(' ')[0] ?? '', true);
  for (const s of shape.sort) look(s.replace(/^-/, ''), true);
  for (const g of shape.groupBy) look(g, true);
  for (const a of shape.aggregate) look(a.replace(/^\w+\((.*)\)$/, '$1'), true);
  if ((shape.kind === 'list' || shape.kind === 'one' || shape.kind === 'me') && shape.fields.length === 0 && shape.aggregate.length === 0) look('*', false);
  if (shape.kind === 'update') {
    for (const k of shape.body) {
      const f = fieldOf(m, resource, k);
      if (f?.write === 'overlay') {
        blocked.set(`${resource}.${k}`, { field: `${resource}.${k}`, source: 'overlay', why: 'v1 cannot change it: the gateway keeps the written value' });
      }
    }
  }
  for (const b of blocked.keys()) unverified.delete(b);
  return { blocked: [...blocked.values()].sort((a, b) => a.field.localeCompare(b.field)), unverified: [...unverified].sort() };
}

function call(c: Omit<V1Call, 'query' | 'each' | 'cursor' | 'stopAfter'> & Partial<V1Call>): V1Call {
  return { query: {}, each: null, cursor: false, stopAfter: false, ...c };
}

/** The calls that list every project in scope: given projects, the projects of given teams, or of every team the key reaches. */
function projectCalls(plan: Plan | null, params: Param[]): V1Call[] {
  if (plan?.scope.projects) {
    // the project the filter names: its lists are asked for directly
    params.push(param('project_id', 'project'));
    return [];
  }
  const out: V1Call[] = [];
  const given = !!plan?.scope.accounts;
  // an _in over several accounts: each team is walked
  const several = (plan?.scope.accounts?.length ?? 0) > 1;
  if (given) params.push(param('team_id', 'account'));
  else out.push(call({ name: 'teams', method: 'GET', path: '/v1/teams', why: 'every team the key reaches (a legacy account is a v1 team)' }));
  out.push(call({
    name: 'projects', method: 'GET', path: '/v1/projects', query: { team_id: given ? '{team_id}' : '{team.id}', limit: PAGE },
    each: several ? 'team_id' : given ? null : 'teams', cursor: true,
    why: several ? 'the projects of each team the filter names' : "each team's projects (v1 lists projects per team)",
  }));
  return out;
}

/** The joins a query's relations need beyond the calls made (`project` of a render, `account` of a project, `owner`). */
function joins(resource: string, plan: Plan | null, q: QueryNode | null, m: Mappings, calls: V1Call[], steps: ClientStep[]): void {
  const has = (name: string) => calls.some((c) => c.name === name);
  // a relation is joined when a path goes through it (`project.title`); its own value (`project`) is the id the record holds
  const paths = q ? [...q.fields.map((f) => f.path.join('.')), ...q.sort.map((x) => x.field.path.join('.')), ...q.groupBy.map((g) => g.path.join('.'))] : [];
  // … unless the v1 object itself carries every field read through it (a v1 project holds its team's name)
  const through = (rel: string) => [...paths, ...filterPathsOf(q)].some((p) => p.startsWith(`${rel}.`) && !own(own(V1_FIELD, resource), p));
  for (const rel of (plan?.relations ?? []).filter(through)) {
    const first = rel.split('.')[0] ?? rel;
    const target = fieldOf(m, resource, first)?.relation?.resource;
    if (target === 'project' && !has('projects')) {
      calls.push(call({ name: 'project', method: 'GET', path: '/v1/projects/{render.project.id}', each: 'renders', why: `${rel}: the render's project` }));
    }
    if (target === 'account' && !has('teams')) {
      calls.push(call({ name: 'teams', method: 'GET', path: '/v1/teams', why: `${rel}: the team (the legacy account)` }));
    }
    if (target === 'render' && !has('renders')) {
      calls.push(call({
        name: 'renders', method: 'GET', path: '/v1/renders', query: { project_id: '{project.id}', limit: PAGE }, each: 'projects', cursor: true,
        why: `${rel}: the related renders, newest first`,
      }));
    }
    if (target === 'project' && resource === 'account' && !has('projects')) {
      calls.push(call({
        name: 'projects', method: 'GET', path: '/v1/projects', query: { team_id: '{team.id}', limit: PAGE }, each: 'teams', cursor: true,
        why: `${rel}: the team's projects`,
      }));
    }
    steps.push({ kind: 'join', detail: `${rel}: match by v1 id (${target ?? 'related'} from the calls above)` });
  }
  const reads = (q?.fields ?? []).map((f) => f.path.join('.'));
  // a one-to-many list read as ids (`renders`, or through `*`) or counted (`count(renders)`): its children listed too, so
  // the list is made of them (a path through it, `renders.title`, is joined above)
  for (const rule of Object.values(ONE_TO_MANY)) {
    if (rule.parent !== resource || !reads.some((r) => r === rule.field || r === '*')) continue;
    const joined = steps.some((s) => s.kind === 'join' && s.detail.startsWith(`${rule.field}:`));
    if (rule.child === 'project' || (rule.child === 'render' && resource === 'account')) {
      if (!has('projects')) {
        calls.push(call({ name: 'projects', method: 'GET', path: '/v1/projects', query: { team_id: '{team.id}', limit: PAGE }, each: 'teams', cursor: true,
          why: `${rule.field}: the team's projects` }));
      }
    }
    if (rule.child === 'render' && !has('renders')) {
      calls.push(call({ name: 'renders', method: 'GET', path: '/v1/renders', query: { project_id: '{project.id}', limit: PAGE }, each: 'projects', cursor: true,
        why: `${rule.field}: the related renders` }));
    }
    if (!joined) {
      steps.push({ kind: 'join',
        detail: `${rule.field}: the v1 ids of the ${rule.child}s whose ${rule.via} is this ${resource} (as many as the default limit, in legacy-id order)` });
    }
  }
  if (resource === 'account' && (reads.includes('owner') || reads.includes('*') || plan?.relations.includes('owner'))) {
    calls.push(call({ name: 'members', method: 'GET', path: '/v1/users', query: { team_id: '{team.id}' }, each: 'teams', why: 'owner: the first admin' }));
  }
}

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

/** Every path a query's filter compares (relation conditions through their relation). */
function filterPathsOf(q: QueryNode | null): string[] {
  const out: string[] = [];
  const walk = (f: FilterNode | null, prefix: string) => {
    if (!f) return;
    if (f.kind === 'Compare') out.push(prefix + f.field.path.join('.'));
    else if (f.kind === 'And' || f.kind === 'Or') f.children.forEach((c) => walk(c, prefix));
    else if (f.kind === 'Relation') walk(f.filter, `${prefix}${f.path.join('.')}.`);
  };
  walk(q?.filter ?? null, '');
  return out;
}

/** The v1 equivalent of a shape (its query `q` and the gateway's `plan` for it; both null for writes and other routes). */
export function equivalentOf(shape: Shape, q: QueryNode | null, plan: Plan | null, m: Mappings, limitDefault = 100): Equivalent {
  const calls: V1Call[] = [];
  const steps: ClientStep[] = [];
  const params: Param[] = [];
  const notes: string[] = [];
  const { blocked, unverified } = blockedFields(shape, m);
  if (shape.cut) notes.push('the shape was too large to keep whole: its lists are cut (their last item says how many were left out)');
  const resource = shape.resource;
  let statuses: Record<string, readonly string[]> | null = null;
  // (a search matches the legacy status names too)
  const readsStatus = resource === 'render' && (shape.filter.some((f) => f.startsWith('status ')) || shape.groupBy.includes('status')
    || shape.fields.includes('status') || shape.fields.includes('*') || shape.fields.length === 0 || shape.search);
  if (readsStatus) statuses = { ...m.status.toV1 };

  if (shape.kind === 'create' && resource === 'render') {
    params.push(param('project_id', 'project'));
    calls.push(call({
      name: 'render', method: 'POST', path: '/v1/renders',
      body: { name: '{title}', project_id: '{project_id}', template_id: '{template_id, optional}', values: '{data}' },
      why: 'queues the render; legacy `data` becomes `values` (the template fields), the title becomes `name`',
    }));
    notes.push('keep the values you sent if you read them back: v1 does not return `values` (legacy `data`)');
    notes.push('Send an Idempotency-Key-like guard of your own: v1 POST /v1/renders is not idempotent; retry only after reading the render list');
  } else if (shape.kind === 'update' && resource === 'render') {
    params.push(param('render_id', 'render'));
    calls.push(call({ name: 'render', method: 'GET', path: '/v1/renders/{render_id}', why: 'the render still exists (v1 has no update of a render)' }));
    steps.push({ kind: 'keep', detail: `v1 cannot change ${shape.body.join(', ') || 'the render'}: keep the new value on your side, by v1 id`,
      ...(shape.body.length === 1 && shape.body[0] === 'title' ? { args: { op: 'keep', field: 'name', param: 'title' } } : {}) });
  } else if (shape.kind === 'me') {
    calls.push(call({ name: 'me', method: 'GET', path: '/v1/me', why: 'the person the key acts as' }));
    if (shape.fields.some((f) => f.startsWith('accounts') || f === '*' || f.startsWith('*.')) || shape.fields.length === 0) {
      calls.push(call({ name: 'teams', method: 'GET', path: '/v1/teams', why: 'accounts: every team the key reaches' }));
    }
  } else if ((shape.kind === 'list' || shape.kind === 'one') && resource && q) {
    const direct = shape.kind === 'one' || plan?.strategy === 'direct';
    if (resource === 'render') {
      if (direct) {
        params.push(param('render_id', 'render'));
        calls.push(call({ name: 'renders', method: 'GET', path: '/v1/renders/{render_id}', each: plan?.ids && plan.ids.length > 1 ? 'render_id' : null,
          why: 'one render by its v1 id' }));
      } else {
        calls.push(...projectCalls(plan, params));
        const given = !!plan?.scope.projects;
        // an _in over several projects: each is walked (its lists merged below)
        const several = (plan?.scope.projects?.length ?? 0) > 1;
        const query: Record<string, string> = { project_id: given ? '{project_id}' : '{project.id}', limit: PAGE };
        // a status filter: v1 filters by one v1 status a list, so one list per v1 status the legacy status stands for
        const perStatus = statusEqAtTop(q);
        if (perStatus) query.status = '{v1_status}';
        if (plan?.pushdown.order === 'asc') query.order = 'asc';
        calls.push(call({
          name: 'renders', method: 'GET', path: '/v1/renders', query, each: several ? 'project_id' : given ? null : 'projects', cursor: true,
          stopAfter: plan?.stopAfter != null,
          why: `${several ? 'each project the filter names: its' : "each project's"} renders, ${plan?.pushdown.order === 'asc' ? 'oldest' : 'newest'} first` +
            `${perStatus ? ', once per v1 status of the legacy status (statuses below)' : ''}`,
          ...(perStatus ? { perStatus: true } : {}),
        }));
        if (plan?.strategy === 'merge' && (!given || perStatus || several)) {
          const lists = given && !several ? 'status lists' : "projects' lists";
          steps.push({
            kind: 'merge',
            detail: `merge the ${lists} by created_at ${plan.pushdown.order ?? 'desc'}${given && !several ? '' : ' (v1 lists renders per project)'}`,
            args: { op: 'merge', desc: plan.pushdown.order !== 'asc' }, ...(given && !several ? { check: true } : {}),
          });
        }
      }
    } else if (resource === 'project') {
      if (direct) {
        params.push(param('project_id', 'project'));
        calls.push(call({ name: 'projects', method: 'GET', path: '/v1/projects/{project_id}', why: 'one project by its v1 id' }));
      } else calls.push(...projectCalls(plan ? { ...plan, scope: { ...plan.scope, projects: null } } : null, params));
    } else if (resource === 'account') {
      if (direct) params.push(param('team_id', 'account'));
      calls.push(call({ name: 'teams', method: 'GET', path: direct ? '/v1/teams/{team_id}' : '/v1/teams', why: 'a legacy account is a v1 team' }));
    } else if (resource === 'template') {
      calls.push(...projectCalls(plan, params));
      const given = !!plan?.scope.projects;
      calls.push(call({ name: 'templates', method: 'GET', path: '/v1/templates', query: { project_id: given ? '{project_id}' : '{project.id}' },
        each: given ? null : 'projects',
        why: "each project's templates (date_created and poster are the project's)" }));
      // the legacy order (-date_created): its project's creation, newest first (projects come per team)
      if (shape.kind === 'list' && shape.sort.length === 0 && shape.aggregate.length === 0 && shape.groupBy.length === 0) {
        steps.push({ kind: 'join', detail: "date_created: each template's project's created_at",
          args: { op: 'attach', from: 'projects', by: 'project_id', field: 'created_at', as: 'project_created_at' } });
        steps.push({ kind: 'sort', detail: 'newest project first (the legacy date_created of a template is its project\'s)',
          args: { op: 'sort', keys: [{ field: 'project_created_at', desc: true }] } });
      }
    }
    // (an account by id is GET /v1/teams/{team_id}; a template has no v1 read by id: its project's list, then the one)
    if (shape.kind === 'one' && resource === 'template') {
      params.push(param('template_id', 'template'));
      steps.push({ kind: 'filter', detail: 'the template with that id (v1 lists templates per project)',
        args: { op: 'filter', conds: [{ field: 'id', test: 'eq', param: 'template_id' }] } });
    }
    joins(resource, plan, q, m, calls, steps);
    if (shape.kind === 'list' && shape.sort.length === 0 && resource === 'account') {
      notes.push('order: the legacy answer sorts accounts by their legacy uuid, which v1 teams do not carry (/v1/teams has its own order)');
    }
    addClientSteps(shape, q, plan, steps, params, calls);
    if (shape.kind === 'list') listParams(shape, q, steps, params, limitDefault);
  } else {
    notes.push('no v1 equivalent: the gateway answers this route itself');
  }
  if (resource) {
    steps.push({ kind: 'translate', detail: `ids: v1 ${Object.values(PREFIX).join(' ')} ids instead of legacy uuids (the ids export pairs them)` });
    if (statuses) steps.push({ kind: 'translate', detail: 'statuses: v1 names (mappings/statuses.json); timestamps: v1 numbers, not ISO strings' });
  }
  // a list read until offset + limit items may stop early only when the client keeps every item it reads (and counts
  // none: filter_count counts every item)
  const thinned = steps.some((s) => s.kind === 'filter' || s.kind === 'search' || s.args?.op === 'meta');
  const final = thinned ? calls.map((c) => (c.stopAfter ? { ...c, stopAfter: false } : c)) : calls;
  return { resource, calls: final, clientSteps: steps, params: listsNamed(params, final), statuses, blocked, unverified, notes };
}

/**
 * A parameter a call walks id by id (`each: 'project_id'`) is given as its list (`project_ids`: the name the snippets
 * read; the report named the single id, so a client following it passed nothing — held-out check of issue 39).
 */
function listsNamed(params: readonly Param[], calls: readonly V1Call[]): Param[] {
  const walked = new Set(calls.flatMap((c) => (c.each && own(LIST_PARAMS, c.each) ? [c.each] : [])));
  return params.map((p) => (walked.has(p.name)
    ? { name: own(LIST_PARAMS, p.name) as string, legacy: `${p.legacy}s (a list: a JSON array or comma-separated)`, v1: `each ${p.v1}` }
    : p));
}

/** What v1 cannot do for this query: filter, search, sort, page, count, group. */
function addClientSteps(shape: Shape, q: QueryNode, plan: Plan | null, steps: ClientStep[], params: Param[], calls: readonly V1Call[]): void {
  const resource = shape.resource ?? '';
  const v1 = own(V1_FIELD, resource) ?? {};
  const enforced = new Set<string>();
  if (resource === 'render' && statusEqAtTop(q)) enforced.add('status _eq');
  if (plan?.scope.projects && resource === 'render') ['project _eq', 'project _in'].forEach((x) => enforced.add(x));
  if (plan?.scope.accounts) ['account _eq', 'account _in', 'project.account _eq', 'project.account _in'].forEach((x) => enforced.add(x));
  if (plan?.strategy === 'direct' || shape.kind === 'one') ['id _eq', 'id _in'].forEach((x) => enforced.add(x));
  const conjuncts = !q.filter ? [] : q.filter.kind === 'And' ? q.filter.children : [q.filter];
  const conds: FilterCond[] = [];
  let simple = true;
  const time = (field: string, path: string, test: FilterCond['test'], name: string) => {
    conds.push({ field, test, param: name });
    if (!params.some((p) => p.name === name)) {
      params.push({ name, legacy: `${path} (an ISO 8601 date; $NOW and its adjustments resolved by you)`, v1: `compared with ${field} (seconds or ms)` });
    }
  };
  for (const c of conjuncts) {
    // an _or of one field's _eq (status complete or failed): an _in, its values the _or's (a parameter of its own)
    const either = c.kind === 'Or' ? sameFieldEq(c.children) : undefined;
    if (either && own(v1, either) && !TIMES.has(own(v1, either) as string)) {
      const field = own(v1, either) as string;
      if (conds.some((x) => x.param === `${either}_or`)) simple = false;
      else conds.push({ field, test: 'in', param: `${either}_or` });
      continue;
    }
    if (c.kind !== 'Compare' || c.field.fn) { simple = false; continue; }
    const path = c.field.path.join('.');
    if (enforced.has(`${path} ${c.op}`)) continue;
    const field = own(v1, path);
    // a date compared: its v1 time against the date given (an incremental sync's window)
    if (field && TIMES.has(field) && own(TIME_TESTS, c.op)) {
      time(field, path, own(TIME_TESTS, c.op) as FilterCond['test'], `${path}_${c.op.slice(1)}`);
      continue;
    }
    if (field && TIMES.has(field) && c.op === '_between') {
      time(field, path, 'gte', `${path}_from`);
      time(field, path, 'lte', `${path}_to`);
      continue;
    }
    // a text condition (title _icontains): tested by the client on the v1 text, a parameter of its own (title_icontains)
    const text = c.op.slice(1);
    // (one parameter a name: a second condition of one kind on one field — two _ncontains — is left to the client, as
    // its value would overwrite the first's)
    const once = (cond: FilterCond) => {
      if (conds.some((x) => x.param === cond.param)) simple = false;
      else conds.push(cond);
    };
    if (field && !TIMES.has(field) && own(TEXT_TESTS, text) && typeof c.value === 'string') {
      once({ field, test: text as TextTest, param: `${path}_${text}` });
      continue;
    }
    // _null, _nnull, _empty, _nempty: a boolean of their own (title_null), either way
    if (field && own(FLAG_TESTS, text) && typeof c.value === 'boolean') {
      once({ field, test: text as FlagTest, param: `${path}_${text}` });
      continue;
    }
    // (_nin: a parameter of its own, status_nin — status is the per-status lists' parameter; a null in it: left out)
    if (field && !TIMES.has(field) && c.op === '_nin' && Array.isArray(c.value) && !c.value.includes(null)) {
      once({ field, test: 'nin', param: `${path}_nin` });
      continue;
    }
    const test = c.op === '_eq' ? 'eq' : c.op === '_in' ? 'in' : c.op === '_neq' ? 'neq' : null;
    if (!field || !test) simple = false;
    else once({ field, test, param: path });
  }
  if (conds.length > 0 || !simple) {
    steps.push({ kind: 'filter', detail: `filter: ${shape.filterTree ?? ''}`, ...(simple ? { args: { op: 'filter', conds } } : {}) });
  }
  if (shape.search) {
    steps.push({ kind: 'search', detail: 'search: keep items whose text fields contain the string, any case (v1 search= matches names only, by relevance)',
      args: { op: 'search', param: 'search' } });
  }
  if (shape.aggregate.length > 0 || shape.groupBy.length > 0) {
    const kind = shape.groupBy.length > 0 ? 'group' : shape.aggregate.every((a) => a.startsWith('count')) ? 'count' : 'aggregate';
    const by = shape.groupBy.length === 1 ? own(v1, shape.groupBy[0]) : undefined;
    // count(*), count(id), countDistinct of a field v1 has, min/max of a time: one row, done by the client
    const fns = shape.groupBy.length > 0 ? undefined : aggregateFns(shape.aggregate, v1);
    if (fns && !(shape.aggregate.length === 1 && (shape.aggregate[0] === 'count(*)' || shape.aggregate[0] === 'count(id)'))) {
      steps.push({ kind, detail: shape.aggregate.join(', '), args: { op: 'aggregate', fns } });
      return;
    }
    // count(*), or count(id) (an id is never null: every row), the one aggregate
    const countOnly = shape.aggregate.length === 1 && (shape.aggregate[0] === 'count(*)' || shape.aggregate[0] === 'count(id)');
    const of = shape.aggregate[0] === 'count(id)' ? 'id' : null;
    steps.push({
      kind, detail: `${shape.aggregate.join(', ') || 'rows'}${shape.groupBy.length ? ` grouped by ${shape.groupBy.join(', ')}` : ''}`,
      ...(countOnly && (shape.groupBy.length === 0 || by)
        ? { args: { op: 'count', groupBy: by ?? null, as: by ? (shape.groupBy[0] ?? null) : null, of } } : {}),
    });
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
    const whole = !plan?.scope.projects && !plan?.scope.accounts && plan?.strategy !== 'direct' && !calls.some((c) => c.perStatus || c.stopAfter);
    steps.splice(whole ? 0 : steps.length, 0, {
      kind: 'count', detail: 'meta total_count: every item of the collection, counted before any filter (v1 gives no totals)',
      ...(whole ? { args: { op: 'meta', count: 'total_count' } as const } : {}),
    });
  }
  if (shape.kind === 'list') {
    const natural = plan?.strategy === 'merge' || (resource !== 'render' && shape.sort.length === 0 && !(resource === 'project' && !plan?.scope.accounts));
    if (!natural) {
      const keys = (shape.sort.length ? shape.sort : q.sort.length ? [] : defaultSortOf(resource))
        .map((k) => ({ field: own(v1, k.replace(/^-/, '')), desc: k.startsWith('-') }));
      const ok = keys.length > 0 && keys.every((k) => k.field);
      steps.push({
        kind: 'sort',
        detail: `sort by ${shape.sort.length ? shape.sort.join(', ') : 'the default order (newest first)'} (v1 orders by created_at only, per list)`,
        ...(ok ? { args: { op: 'sort', keys: keys as { field: string; desc: boolean }[] } } : {}),
      });
    }
    const offset = shape.pagination === 'page' || shape.pagination === 'offset' ? 'offset' : null;
    if (shape.pagination !== 'all') {
      steps.push({ kind: 'page', detail: offset ? 'skip offset items, take limit (v1 pages by cursor)' : 'take the first limit items',
        args: { op: 'page', offset, limit: 'limit' } });
    }
  }
}

/** The filter is `status _eq` or an and of conditions with one: the render lists are asked per v1 status. */
function statusEqAtTop(q: QueryNode): boolean {
  const top = !q.filter ? [] : q.filter.kind === 'And' ? q.filter.children : [q.filter];
  return top.some((c) => c.kind === 'Compare' && !c.field.fn && c.field.path.length === 1 && c.field.path[0] === 'status' && c.op === '_eq');
}

const defaultSortOf = (resource: string): string[] => (resource === 'account' ? ['id'] : ['-date_created']);

/** The steps the client must do that v1 cannot (translation aside). */
export const clientWork = (e: Equivalent): readonly ClientStep[] =>
  e.clientSteps.filter((s) => s.kind !== 'translate' && s.kind !== 'page' && !s.check);

/**
 * Every legacy parameter of a list shape the snippets take, with its v1 form: the status (one list per v1 status it
 * stands for), the filter values the client steps compare, the search string, and paging — `limit` with the default the
 * legacy API applies when the client sends none, `page` turned into an offset.
 */
function listParams(shape: Shape, q: QueryNode, steps: readonly ClientStep[], params: Param[], limitDefault: number): void {
  const add = (p: Param) => { if (!params.some((x) => x.name === p.name)) params.push(p); };
  if (statusEqAtTop(q)) add({ name: 'status', legacy: 'status (a legacy status name)', v1: 'each v1 status it stands for (statuses below): one list each' });
  for (const s of steps) {
    if (s.args?.op !== 'filter') continue;
    for (const c of s.args.conds) {
      if (own(TIME_TESTS_BY_TEST, c.test)) continue; // (listed with their step)
      const text = own(TEXT_TESTS, c.test);
      const several = c.test === 'in' || c.test === 'nin';
      const what = own(FLAG_TESTS, c.test) ? `true or false, as the filter's _${c.test} gives it` : text ? `the text the filter's _${c.test} tests`
        : `${several ? 'a list of values' : 'the value'} the filter ${c.test === 'nin' ? 'excludes' : 'compares'}`;
      add({ name: c.param, legacy: `${c.param} (${what})`,
        v1: `compared with ${c.field}${c.field === 'status' ? ' as a legacy status name' : ''}` });
    }
  }
  if (shape.search) add({ name: 'search', legacy: 'search (the string)', v1: 'matched in name and the status, any case (client step)' });
  if (shape.pagination === 'all' || shape.pagination === 'none') return;
  const legacy = shape.pagination === 'default' ? `no limit sent: the legacy default, ${limitDefault}`
    : shape.pagination === 'limit' ? 'limit' : `limit (the legacy default, ${limitDefault}, when none is sent)`;
  add({ name: 'limit', legacy, v1: 'the first limit items, after the steps above' });
  if (shape.pagination === 'page') add({ name: 'offset', legacy: 'page (from 1)', v1: 'offset = (page − 1) × limit items skipped' });
  if (shape.pagination === 'offset') add({ name: 'offset', legacy: 'offset', v1: 'offset items skipped' });
}
