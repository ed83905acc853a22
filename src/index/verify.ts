import type { IndexStore } from '../store/render-index.js';
import type { V1Session } from '../v1/client.js';
import { V1_PAGE_MAX, type V1Project, type V1Render } from '../v1/schemas.js';

/** One difference between the index and live v1. */
export interface Drift {
  readonly team: string;
  readonly kind: 'missing render' | 'extra render' | 'render differs' | 'missing project' | 'extra project' | 'templates differ' | 'not backfilled';
  readonly id: string;
  readonly detail?: string;
}

/**
 * Compares a team's index in the store with live v1 (every project, its templates, every render: one full walk) and
 * lists the differences. A render that moved on in v1 since the index last saw it counts as drift: run it right after
 * a sync, or accept that the moving ones may differ by one step.
 */
export async function verifyTeam(store: IndexStore, s: V1Session, teamId: string): Promise<Drift[]> {
  const out: Drift[] = [];
  const row = await store.team(teamId);
  if (!row || row.state !== 'ready') return [{ team: teamId, kind: 'not backfilled', id: teamId }];
  const projects: V1Project[] = [];
  for await (const page of s.pages((cursor) => s.projectsPage(teamId, { limit: V1_PAGE_MAX, ...(cursor ? { cursor } : {}) }))) projects.push(...page);
  const held = new Map((await store.projects(teamId)).map((p) => [p.project.id, p]));
  const live = new Set(projects.map((p) => p.id));
  for (const p of projects) {
    const h = held.get(p.id);
    if (!h) { out.push({ team: teamId, kind: 'missing project', id: p.id, detail: p.name }); continue; }
    const templates = (await s.templates(p.id)).data;
    if (JSON.stringify(templates) !== JSON.stringify(h.templates)) out.push({ team: teamId, kind: 'templates differ', id: p.id });
  }
  for (const id of held.keys()) if (!live.has(id)) out.push({ team: teamId, kind: 'extra project', id });
  const renders = new Map((await store.renders(teamId)).map((r) => [r.render.id, r.render]));
  const seen = new Set<string>();
  for (const p of projects) {
    for await (const page of s.pages((cursor) => s.rendersPage(p.id, { limit: V1_PAGE_MAX, ...(cursor ? { cursor } : {}) }))) {
      for (const r of page) {
        seen.add(r.id);
        const h = renders.get(r.id);
        if (!h) out.push({ team: teamId, kind: 'missing render', id: r.id, detail: `${r.name} (${r.status})` });
        else if (!same(h, r)) out.push({ team: teamId, kind: 'render differs', id: r.id, detail: `index ${h.status}, v1 ${r.status}` });
      }
    }
  }
  for (const id of renders.keys()) if (!seen.has(id)) out.push({ team: teamId, kind: 'extra render', id });
  return out;
}

/** The same render, but for its output URLs' signatures (v1 signs them afresh on every read). */
function same(a: V1Render, b: V1Render): boolean {
  const strip = (r: V1Render) => JSON.stringify({ ...r, output: Object.fromEntries(Object.entries(r.output ?? {}).map(([k, v]) => [k, v.split('?')[0]])) });
  return strip(a) === strip(b);
}
