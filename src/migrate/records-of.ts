import type { Lookup, Rec } from '../query/compile.js';
import { teamOwner, toLegacyAccount, toLegacyProject, toLegacyRender, toLegacyTemplate } from '../translate/records.js';
import type { V1Project, V1Render, V1Team, V1TeamMember, V1TemplateSummary, V1User } from '../v1/schemas.js';
import { isRecordResource, ONE_TO_MANY, oneToMany, type RecordResource } from '../query/resources.js';
import type { Mappings } from '../config/mappings.js';
import type { IdTranslator } from '../translate/ids.js';
import type { TimeUnit } from '../translate/time.js';

/** What the calls returned, by call name. */
export type Results = ReadonlyMap<string, unknown[]>;

/** Legacy records of what the calls returned (nothing the gateway keeps: no render data, no overlay), and a look-up over them. */
export function recordsOf(
  results: Results, resource: string,
  d: { readonly ids: IdTranslator; readonly mappings: Mappings; readonly timeUnit: TimeUnit; readonly limitDefault?: number },
): { records: Rec[]; lookup: Lookup } {
  const nestedLimit = d.limitDefault ?? 100; // (QUERY_LIMIT_DEFAULT: the nested default too)
  const ctx = { ids: d.ids, mappings: d.mappings, timeUnit: d.timeUnit };
  const v1Projects = [...(results.get('projects') ?? []), ...(results.get('project') ?? [])] as V1Project[];
  const projectById = new Map(v1Projects.map((p) => [p.id, p]));
  const members = results.get('members') as (V1TeamMember & { team_id: string })[] | undefined;
  const renders = (results.get('renders') ?? results.get('render') ?? []) as V1Render[];
  const byType = new Map<string, Map<string, Rec>>();
  const add = (type: string, r: Rec) => {
    if (!byType.has(type)) byType.set(type, new Map());
    byType.get(type)?.set(r.id as string, r);
    return r;
  };
  const renderRecs = renders.map((r) => add('render', toLegacyRender(r, ctx, { projectThumbnail: projectById.get(r.project.id)?.thumbnail_url ?? null })));
  const projectRecs = v1Projects.map((p) => add('project', toLegacyProject(p, ctx)));
  // (no /v1/teams call: the teams v1 embeds in the projects — a project's `team`, its id and name — are the accounts read)
  const teams = (results.get('teams') ?? [...new Map(v1Projects.flatMap((p) => (p.team?.id ? [[p.team.id, p.team]] : []))).values()]) as V1Team[];
  const accountRecs = teams.map((t) => {
    const owner = members ? teamOwner(members.filter((m) => m.team_id === t.id)) : null;
    return add('account', toLegacyAccount(t, owner, ctx));
  });
  const templateRecs: Rec[] = [];
  for (const t of (results.get('templates') ?? []) as V1TemplateSummary[]) {
    const p = projectById.get(t.project_id);
    if (p) templateRecs.push(add('template', toLegacyTemplate(t, p, ctx)));
  }
  // the person the key acts as (GET /v1/me): the legacy user, as far as v1 knows it (names and role are the gateway's)
  const me = (results.get('me') ?? [])[0] as V1User | undefined;
  const userRecs = me ? [add('user', { id: d.ids.toLegacy('user', me.id), email: me.email ?? null })] : [];
  const owned = new Set(teams.filter((t) => t.role === 'admin').map((t) => d.ids.toLegacy('account', t.id)));
  const all: Readonly<Record<RecordResource, readonly Rec[]>> = { render: renderRecs, project: projectRecs, account: accountRecs, template: templateRecs };
  // a project's renders: those read, and those of the walk its list needs (`project_renders`: a render read by id, its
  // project's every render)
  const listedRenders = [...renderRecs];
  const listed = new Set(renderRecs.map((r) => r.id));
  for (const r of (results.get('project_renders') ?? []) as V1Render[]) {
    const rec = toLegacyRender(r, ctx, { projectThumbnail: projectById.get(r.project.id)?.thumbnail_url ?? null });
    if (!listed.has(rec.id)) { listed.add(rec.id); listedRenders.push(rec); }
  }
  // a relation's children: the child records whose many-to-one field names the parent (the rule every source follows)
  const childrenOf = (parent: Rec, field: string, parentResource: string): Rec[] => {
    // the user's accounts: every team the key reaches; accounts_owned: those where its role is admin
    if (parentResource === 'user' && field === 'accounts') return accountRecs;
    if (parentResource === 'user' && field === 'accounts_owned') return accountRecs.filter((a) => owned.has(a.id as string));
    const rel = oneToMany(parentResource, field);
    if (!rel) return [];
    const { child, via } = ONE_TO_MANY[rel];
    return (child === 'render' ? listedRenders : all[child]).filter((r) => r[via] === parent.id);
  };
  const lookup: Lookup = {
    one: (type, id) => byType.get(type)?.get(id),
    // a nested list: the first `nestedLimit` in primary-key order, as the gateway and Directus list them
    // (the user's accounts: in /v1/teams' order, as the gateway lists the teams the key reaches)
    many: (_r, parent, field, parentResource) => {
      const children = childrenOf(parent, field, parentResource);
      if (parentResource === 'user') return children;
      return children.sort((a, b) => ((a.id as string) < (b.id as string) ? -1 : (a.id as string) > (b.id as string) ? 1 : 0)).slice(0, nestedLimit);
    },
    manyAll: (_r, parent, field, parentResource) => childrenOf(parent, field, parentResource),
  };
  const records = isRecordResource(resource) ? [...all[resource]] : resource === 'user' ? userRecs : [];
  return { records, lookup };
}

