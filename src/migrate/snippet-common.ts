import { LIST_PARAMS, type Equivalent, type FilterCond, type V1Call } from './equivalent.js';
import { own } from '../lib/own.js';
import type { GuideResource } from './v1-resources.js';

/** What the Node, Python and curl renderings of an equivalent share (src/migrate/snippets.ts). Pure. */

/** The comparison of a time test, in every language. */
export const COMPARE: Readonly<Partial<Record<FilterCond['test'], string>>> = { gt: '>', gte: '>=', lt: '<', lte: '<=', teq: '==', tneq: '!=' };
/** A time against a list of instants (`date_created _in [...]`): one of them, none of them, or outside the window of two. */
export const TIME_LISTS: Readonly<Partial<Record<FilterCond['test'], 'in' | 'nin' | 'out'>>> = { tin: 'in', tnin: 'nin', tout: 'out' };
/** Whether an equivalent's steps compare times (the snippets then carry the two time helpers). */
export const comparesTimes = (e: Equivalent) =>
  comparesParts(e) || e.clientSteps.some((s) => s.args?.op === 'filter' && s.args.conds.some((c) => own(COMPARE, c.test) || own(TIME_LISTS, c.test)));
/** Whether a step reads a part of a date (`year(date_created)`: a filter, or groups): the snippets define how to read one. */
export const comparesParts = (e: Equivalent) => e.clientSteps.some((s) => (s.args?.op === 'filter' && s.args.conds.some((c) => c.part))
  || (s.args?.op === 'count' && (s.args.part !== undefined || !!s.args.also?.some((k) => k.part)))
  || (s.args?.op === 'aggregate' && !!s.args.groups?.some((k) => k.part)));

/** A part's comparison: the operator between two numbers (`==` for eq); in and nin are lists. */
export const PART_COMPARE: Readonly<Record<string, string>> = { eq: '==', neq: '!=', gt: '>', gte: '>=', lt: '<', lte: '<=' };

/** The calls a resource's answer is made of, by resource (the other calls are looked up or walked through). */
export const MAIN_CALLS: { readonly [R in GuideResource]: readonly string[] } = {
  render: ['render', 'renders'], project: ['projects', 'project'], account: ['teams'], template: ['templates'], user: ['me'],
};

/** Calls a resource's answer is never made of (a render list walks the projects: they are not its items). */
const NEVER_MAIN: { readonly [R in GuideResource]: readonly string[] } = { render: ['projects'], project: [], account: [], template: [], user: [] };

/** A parameter read in JavaScript (`params.status`; a name that is no identifier by its key: `params["account.name"]`). */
export const jsParam = (name: string) => (/^[A-Za-z_$][\w$]*$/.test(name) ? `params.${name}` : `params[${JSON.stringify(name)}]`);

/** Text put in a comment of a program that runs: on one line (a shape's details come from what clients sent). */
export const oneLine = (text: string) => text.replace(/[\r\n\u2028\u2029]+/g, ' ');

/** The call whose result the legacy answer is made of (a template list walks the projects: its answer is the templates). */
export function mainCall(e: Equivalent): string | null {
  const names = e.calls.map((c) => c.name);
  for (const n of own(MAIN_CALLS, e.resource ?? '') ?? []) if (names.includes(n)) return n;
  if (names.includes('me')) return 'me';
  const never = own(NEVER_MAIN, e.resource ?? '') ?? [];
  for (const n of ['render', 'renders', 'projects', 'templates', 'teams', 'me']) if (names.includes(n) && !never.includes(n)) return n;
  return names[0] ?? null;
}

export const listParam = (each: string): string | undefined => (Object.hasOwn(LIST_PARAMS, each) ? LIST_PARAMS[each] : undefined);
export const singular = (name: string) => (listParam(name) ? name : name.replace(/ies$/, 'y').replace(/s$/, ''));
export const statusTable = (e: Equivalent): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [legacy, v1s] of Object.entries(e.statuses ?? {})) for (const s of v1s) out[s] = legacy;
  return out;
};

/** The snippets answer `{ meta, data }`: the shape asks for filter_count or total_count. */
export const metaOf = (e: Equivalent): boolean => e.clientSteps.some((s) => s.args?.op === 'meta');

/**
 * The parameters a GET call needs that no loop gives it (`project_id` of the renders of one project): when one is null
 * (`project _eq null`; in the curl script, left unset) the call reads nothing — no project, no renders — as the legacy
 * API's `= NULL` matches nothing (the tenth held-out check: v1 answered 422 and every snippet failed).
 */
export function callNeeds(c: Pick<V1Call, 'method' | 'path' | 'query' | 'each'>): string[] {
  if (c.method !== 'GET') return [];
  const item = c.each ? singular(c.each) : null;
  const names = [c.path, ...Object.values(c.query)].flatMap((v) => [...v.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] ?? ''))
    .filter((n) => !n.endsWith(', optional') && n !== 'v1_status' && !(item && n.split('.')[0] === item));
  return [...new Set(names)];
}

/** `{project.id}` → an expression of the loop item; `{team_id}` → a parameter; other text kept. */
export function expr(value: string, each: string | null, lang: 'js' | 'py'): string {
  const m = /^\{([^}]+)\}$/.exec(value);
  if (!m) return JSON.stringify(value);
  const name = (m[1] ?? '').replace(/, optional$/, '');
  if (name === 'v1_status') return 'v1_status';
  const dot = name.split('.');
  const item = each ? singular(each) : null;
  if (item && dot[0] === item) {
    const rest = dot.slice(1);
    return lang === 'js' ? `${item}${rest.map((r) => `.${r}`).join('')}` : `${item}${rest.map((r) => `[${JSON.stringify(r)}]`).join('')}`;
  }
  return lang === 'js' ? `params.${name}` : `params.get(${JSON.stringify(name)})`;
}

export function pathExpr(path: string, each: string | null, lang: 'js' | 'py'): string {
  const parts = path.split(/(\{[^}]+\})/).filter(Boolean);
  if (lang === 'js') return '`' + parts.map((p) => (p.startsWith('{') ? `\${encodeURIComponent(${expr(p, each, 'js')})}` : p)).join('') + '`';
  return parts.map((p) => (p.startsWith('{') ? `quote(str(${expr(p, each, 'py')}), safe='')` : JSON.stringify(p))).join(' + ');
}

