import type { Mappings } from '../config/mappings.js';
import { dateFn, type Rec } from '../query/compile.js';
import type { IdTranslator } from '../translate/ids.js';
import { toLegacyAccount, toLegacyProject, toLegacyRender, toLegacyTemplate } from '../translate/records.js';
import type { V1Session } from '../v1/client.js';
import type { V1Project, V1Team } from '../v1/schemas.js';
import { datePartOf } from './equivalent-model.js';
import type { Values } from './instantiate.js';
import { own } from '../lib/own.js';
import type { TimeUnit } from '../translate/time.js';
import type { Shape } from './shape.js';

/**
 * The values a proof asks its questions with (src/migrate/prove.ts): samples of the data the client's key reaches, and
 * values drawn from them so that each side of a comparison holds real items — never the client's own values, never
 * written to the report. Pure but for `sampleValues` (v1 calls).
 */

/** Samples of each resource the key reaches, the proof's values drawn from them (the first of each: a read by id). */
export type Samples = Readonly<Record<string, readonly Rec[]>>;

/** How far the samples reach: projects read (spread over teams), renders a project. */
const SAMPLE_PROJECTS = 4;
const SAMPLE_RENDERS = 20;

/** What samples are read back with: the id translation, the mappings, v1's time unit. */
export interface SampleDeps { readonly ids: IdTranslator; readonly mappings: Mappings; readonly timeUnit: TimeUnit }

/**
 * Sample legacy records of the data the key reaches: renders of up to four projects, spread over its teams first (so an
 * `_in` can name two projects, or two accounts), their projects, teams and a template. The values are the proof's own
 * and are never written to the report. About ten v1 calls.
 */
export async function sampleValues(session: V1Session, d: SampleDeps): Promise<Samples> {
  const ctx = { ids: d.ids, mappings: d.mappings, timeUnit: d.timeUnit };
  const teams = (await session.teams()).data;
  const projectsOf = new Map<string, readonly V1Project[]>();
  for (const team of teams.slice(0, SAMPLE_PROJECTS)) projectsOf.set(team.id, (await session.projectsPage(team.id, { limit: 60 })).data);
  // one project of each team in turn, then a second of each…
  const chosen: { team: V1Team; project: V1Project }[] = [];
  for (let round = 0; chosen.length < SAMPLE_PROJECTS && round < SAMPLE_PROJECTS; round++) {
    for (const team of teams) {
      const p = projectsOf.get(team.id)?.[round];
      if (p && chosen.length < SAMPLE_PROJECTS) chosen.push({ team, project: p });
    }
  }
  const renders: Rec[] = [];
  const projects: Rec[] = [];
  const accounts = new Map<string, Rec>();
  let template: Rec | undefined;
  for (const { team, project } of chosen) {
    const page = (await session.rendersPage(project.id, { limit: SAMPLE_RENDERS })).data;
    if (page.length === 0) continue;
    // a complete render first: a read by id of it has every field filled
    const ordered = [...page.filter((x) => x.status === 'complete'), ...page.filter((x) => x.status !== 'complete')];
    renders.push(...ordered.map((r) => toLegacyRender(r, ctx)));
    projects.push(toLegacyProject(project, ctx));
    if (!accounts.has(team.id)) accounts.set(team.id, toLegacyAccount(team, null, ctx));
    if (!template) {
      const t = (await session.templates(project.id)).data[0];
      if (t) template = toLegacyTemplate(t, project, ctx);
    }
  }
  if (renders.length === 0) return {};
  return { render: renders, project: projects, account: [...accounts.values()], ...(template ? { template: [template] } : {}) };
}

/** The distinct values of `path` over the samples of `resource` (through many-to-one relations), in the samples' order. */
function valuesAt(resource: string, path: string, samples: Samples, m: Mappings): unknown[] {
  // a part of a date (`year(date_created)`): the parts of the dates seen, as numbers
  const date = datePartOf(path);
  if (date) {
    const part = dateFn(date.part);
    return [...new Set(valuesAt(resource, date.field, samples, m).map((v) => part(v)).filter((v): v is number => v !== null))];
  }
  const parts = path.replace(/^\w+\((.*)\)$/, '$1').split('.');
  let type = resource;
  for (let i = 0; i < parts.length - 1; i++) {
    const rel = own(own(m.resources, type)?.fields, parts[i])?.relation;
    if (!rel) return [];
    type = rel.resource;
  }
  const field = parts.at(-1) as string;
  const seen = new Map<string, unknown>();
  for (const rec of own(samples, type) ?? []) {
    const v = own(rec, field);
    if (v !== undefined && v !== null && !seen.has(JSON.stringify(v))) seen.set(JSON.stringify(v), v);
  }
  return [...seen.values()];
}

const order = (a: unknown, b: unknown): number => {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
};

/**
 * Values for a shape drawn from the samples so that each side of a comparison holds real items: `_eq` a sample's value;
 * `_in` two values (from different projects or accounts when the samples have them); an order comparison the middle of
 * the values seen (items on both sides); `_between` a window from the lower to the upper quarter; text operators a part of
 * a value. Never a degenerate draw (`_gt` equal to `_lt`, a one-value `_in`) where the samples offer two values.
 */
export function valuesFrom(resource: string, samples: Samples, m: Mappings, draw = 0): Values {
  const titles = own(samples, 'render') ?? [];
  const title = String(titles[draw % Math.max(1, titles.length)]?.title ?? 'a');
  return {
    value: (path, op) => {
      // a flag both ways: true, then false (a `_null: true` over text that is never null is empty on both sides)
      if (op === '_null' || op === '_nnull' || op === '_empty' || op === '_nempty') return draw % 2 === 0;
      const seen = valuesAt(resource, path, samples, m);
      const v = seen[draw % Math.max(1, seen.length)];
      if (op === '_in' || op === '_nin') {
        if (seen.length < 2) return [v];
        return draw === 0 || seen.length < 4 ? [seen[0], seen[seen.length - 1]] : [seen[1], seen[seen.length - 2]];
      }
      const sorted = [...seen].sort(order);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
      if (op === '_between' || op === '_nbetween') return sorted.length > 1 ? (draw === 0 ? [at(0.25), at(0.75)] : [at(0.1), at(0.5)]) : [v, v];
      if (/^_[gl]te?$/.test(op)) return sorted.length > 1 ? at(draw === 0 ? 0.5 : 0.25) : v ?? null;
      if (typeof v === 'string' && /contains|starts_with|ends_with/.test(op)) return op.includes('ends') ? v.slice(-4) : v.slice(0, 4);
      return v ?? null;
    },
    search: title.split(/\s+/).find((w) => w.length >= 3 && !/^\d+$/.test(w)) ?? title.slice(0, 3),
    limit: 5,
    page: 2,
    offset: 5,
  };
}

/** How many draws of values a filtered shape is proven with. */
export const PROOF_DRAWS = 2;

/** Values shown as `?` (two for a list operator), paging as asked: the request a report shows. */
export const MASKED: Values = {
  value: (_path, op) => (/^_n?(in|between)$/.test(op) ? ['?', '?'] : /^_n?(null|empty)$/.test(op) ? true : '?'),
  search: '?',
  limit: 5,
  page: 2,
  offset: 5,
};

/**
 * A draw with the client's own uuid for `user_created` (its `$CURRENT_USER`), where the client's v1 person carries
 * another gateway user's uuid in the legacy answers (two gateway users bound to one v1 person: the first bound is the
 * creator of that person's records) — the one draw in which the legacy answer and v1's part (none of "my" records in
 * one, all of them in the other); undefined where the client's uuid is its records' own (the eleventh held-out check:
 * "equal" on draws of the other uuid). Its values otherwise those given.
 */
export async function ownUuidDraw(shape: Shape, userId: string, ids: IdTranslator): Promise<((v: Values) => Values) | undefined> {
  if (!shape.filter.some((f) => f.startsWith('user_created '))) return undefined;
  const v1 = await ids.toV1('user', userId);
  if (!v1 || ids.toLegacy('user', v1) === userId) return undefined;
  return (v) => ({
    ...v,
    value: (path, op) => {
      if (path !== 'user_created' || !['_eq', '_neq', '_in', '_nin'].includes(op)) return v.value(path, op);
      return op === '_in' || op === '_nin' ? [userId] : userId;
    },
  });
}

