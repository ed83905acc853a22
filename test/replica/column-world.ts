import fc from 'fast-check';
import { ReplicaSource } from '../../src/exec/replica-source.js';
import { recordBuilder, type Overlays } from '../../src/replica/team/records.js';
import { ReplicaSnapshot } from '../../src/replica/reads/snapshot.js';
import { TeamReplica } from '../../src/replica/team/team-replica.js';
import type { IdMapStore } from '../../src/store/idmap.js';
import { derivedUuid, IdTranslator } from '../../src/translate/ids.js';
import { RENDER_STATUSES, type V1Project, type V1Render, type V1Team } from '../../src/v1/schemas.js';
import { mappings } from '../query/fixtures.js';

/** Replicas of generated teams (overlays, removed rows) and filters over the render fields the columns hold. */
export const T0 = 1_700_000_000;
export const TEAMS = ['team_one', 'team_two'];
export const PROJECTS = ['proj_a', 'proj_b', 'proj_c'];
export const USERS = ['user_1', 'user_2'];
export const LEGACY = ['draft', 'ready', 'processing', 'encoding', 'complete', 'failed', 'deleted'];

const ids = new IdTranslator({ imported: async () => [] } as unknown as IdMapStore);
let overlays: Overlays = {};
const builder = recordBuilder({ ids, mappings, timeUnit: 'auto' }, () => overlays, {});
export const uuid = (type: 'project' | 'account' | 'user', id: string) => ids.toLegacy(type, id);

function teamOf(id: string): TeamReplica {
  const team: V1Team = { id, name: id, account_id: `acct_${id}`, role: 'admin', created_at: T0 };
  const t = new TeamReplica({ team, members: [], state: 'ready', backfilledAt: 1, syncedAt: 1, webhookAt: null }, builder);
  PROJECTS.forEach((p, i) => {
    const project: V1Project = { id: `${id}_${p}`, name: p, team: { id, name: id }, created_by: null, created_at: T0 + i, updated_at: null, thumbnail_url: null };
    t.setProject({ project, templates: [], backfilled: true }, 1);
  });
  return t;
}

/**
 * Characters titles are made of: Latin-1 (kept a byte each) in both cases, and characters past it (the title kept as
 * UTF-16) whose lower case is tricky — ẞ, Turkish İ and ı, final sigma, the Kelvin sign (lower case k), Ÿ (lower case ÿ,
 * a Latin-1 letter), an emoji.
 */
const TITLE_CHARS = ['a', 'A', 'b', 'B', 'é', 'É', 'ß', 'ÿ', 'i', 'I', 'k', ' ', '-', '_', '%', '\u1e9e', '\u0130', '\u0131', 'σ', 'Σ', 'ς', '\u212a', '\u0178', '😀'];
/** A title: one of a few words, or made of the characters above. */
export const titleArb = fc.oneof(
  fc.constantFrom('alpha', 'Beta', 'beta', 'gamma'),
  fc.array(fc.constantFrom(...TITLE_CHARS), { maxLength: 6 }).map((cs) => cs.join('')),
);
/** A value looked for in titles: a few of the same characters. */
export const needleArb = fc.oneof(fc.array(fc.constantFrom(...TITLE_CHARS), { maxLength: 3 }).map((cs) => cs.join('')), fc.constantFrom('alpha', 'eta', 'BE', 'Beta', 'gamma', 'a'));

export const renderArb = fc.record({
  team: fc.nat(TEAMS.length - 1), project: fc.nat(PROJECTS.length - 1), status: fc.constantFrom(...RENDER_STATUSES),
  user: fc.option(fc.constantFrom(...USERS), { nil: null }), at: fc.nat(40), updated: fc.option(fc.nat(30), { nil: null }),
  name: titleArb, overlay: fc.option(fc.record({
    title: fc.oneof(fc.constantFrom('over', 'Alpha'), titleArb), status: fc.option(fc.constantFrom('complete', 'failed', 'draft'), { nil: undefined }),
  }), { nil: undefined }),
});

/** Times near the renders' (seconds from T0), as ISO strings of several shapes (string comparison decides). */
const timeArb = fc.tuple(fc.integer({ min: -2, max: 75 }), fc.constantFrom('iso', 'no-ms', 'date', 'minute')).map(([s, shape]) => {
  const iso = new Date((T0 + s) * 1000).toISOString();
  return shape === 'iso' ? iso : shape === 'no-ms' ? iso.slice(0, 19) : shape === 'date' ? iso.slice(0, 10) : iso.slice(0, 16);
});

type Leaf = Record<string, Record<string, unknown>>;
export const leafArb: fc.Arbitrary<Leaf> = fc.oneof(
  fc.record({ op: fc.constantFrom('_eq', '_neq'), v: fc.constantFrom(...LEGACY) }).map(({ op, v }) => ({ status: { [op]: v } })),
  fc.record({ op: fc.constantFrom('_in', '_nin'), v: fc.subarray(LEGACY, { minLength: 1 }) }).map(({ op, v }) => ({ status: { [op]: v } })),
  fc.record({ op: fc.constantFrom('_eq', '_neq', '_in'), t: fc.nat(TEAMS.length - 1), p: fc.nat(PROJECTS.length - 1) }).map(({ op, t, p }) => {
    const u = uuid('project', `${TEAMS[t]}_${PROJECTS[p]}`);
    return { project: { [op]: op === '_in' ? [u] : u } };
  }),
  fc.nat(TEAMS.length - 1).map((t) => ({ account: { _eq: uuid('account', TEAMS[t] as string) } })),
  fc.oneof(fc.constantFrom(...USERS).map((u) => ({ user_created: { _eq: uuid('user', u) } })), fc.boolean().map((b) => ({ user_created: { _null: b } }))),
  fc.record({ f: fc.constantFrom('date_created', 'date_updated'), op: fc.constantFrom('_gt', '_gte', '_lt', '_lte'), v: timeArb })
    .map(({ f, op, v }) => ({ [f]: { [op]: v } })),
  fc.record({ f: fc.constantFrom('date_created', 'date_updated'), op: fc.constantFrom('_null', '_nnull'), v: fc.boolean() }).map(({ f, op, v }) => ({ [f]: { [op]: v } })),
  fc.boolean().map((b) => ({ download_ready: { _eq: b } })),
  // the title: every text operator (tested on its bytes), emptiness and lists
  fc.record({
    op: fc.constantFrom('_eq', '_neq', '_contains', '_ncontains', '_icontains', '_starts_with', '_nstarts_with', '_istarts_with', '_nistarts_with',
      '_ends_with', '_nends_with', '_iends_with', '_niends_with'),
    v: needleArb.filter((s) => s !== ''), // (an empty value is refused: _empty says it)
  }).map(({ op, v }) => ({ title: { [op]: v } })),
  fc.record({ op: fc.constantFrom('_in', '_nin'), v: fc.array(fc.oneof(titleArb, needleArb).filter((s) => s !== ''), { minLength: 1, maxLength: 3 }) }).map(({ op, v }) => ({ title: { [op]: v } })),
  fc.record({ op: fc.constantFrom('_null', '_nnull', '_empty', '_nempty'), v: fc.boolean() }).map(({ op, v }) => ({ title: { [op]: v } })),
  // the id by equality: uuids of renders the worlds may hold (some in capitals), others, null
  fc.record({
    op: fc.constantFrom('_eq', '_neq', '_in', '_nin'),
    v: fc.array(fc.oneof(fc.nat(60).map((n) => derivedUuid('render', `rend_${n}`)), fc.nat(60).map((n) => derivedUuid('render', `rend_${n}`).toUpperCase()),
      fc.constant('ffffffff-ffff-4fff-bfff-ffffffffffff'), fc.constant(null)), { minLength: 1, maxLength: 3 }),
  }).map(({ op, v }) => ({ id: { [op]: op === '_in' || op === '_nin' ? v : v[0] } })),
);
export const filterArb: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leafArb, fc.record({ _and: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ _or: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) })),
})).node;

export type GenRender = typeof renderArb extends fc.Arbitrary<infer R> ? R : never;

/** Two teams holding the renders (overlays set, a project of the first team dropped), as a snapshot and its source. */
export function world(renders: readonly GenRender[], dropped: number | undefined) {
  const teams = TEAMS.map(teamOf);
  const o = new Map<string, Record<string, unknown>>();
  renders.forEach((x, n) => {
    const id = `rend_${n}`;
    const r: V1Render = {
      id, name: x.name, status: x.status, type: 'cloud', project: { id: `${TEAMS[x.team]}_${PROJECTS[x.project]}`, team: TEAMS[x.team] as string },
      created_by: x.user, created_at: T0 + x.at, updated_at: x.updated === null ? null : T0 + x.at + x.updated,
    };
    if (x.status === 'complete' && n % 2 === 0) r.output = { master: `https://cdn.example/renders/${id}/master?expires=1790000000&signature=${'ab'.repeat(16)}` };
    (teams[x.team] as TeamReplica).apply(r, 5);
    if (x.overlay) o.set(id, x.overlay.status ? x.overlay : { title: x.overlay.title });
  });
  overlays = { render: o };
  for (const t of teams) t.invalidateRecords();
  // a dropped project's rows stay in the columns, marked removed
  if (dropped !== undefined) (teams[0] as TeamReplica).dropProject(`${TEAMS[0]}_${PROJECTS[dropped]}`);
  const snapshot = new ReplicaSnapshot(teams, 25);
  const source = new ReplicaSource(snapshot, { refresh: async () => {}, answered: () => {}, flush: async () => {}, data: async () => new Map(), dataSizes: async () => new Map(), now: 10 });
  return { snapshot, source };
}

