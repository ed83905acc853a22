import type { ReplicaStore } from '../../store/replica-store.js';
import type { V1Session } from '../../v1/client.js';
import { V1NotFoundError } from '../../v1/errors.js';
import { V1_PAGE_MAX, type V1Project, type V1Render } from '../../v1/schemas.js';

/** One difference between the replica and live v1. */
export interface Drift {
  readonly team: string;
  readonly kind: 'missing render' | 'extra render' | 'render differs' | 'missing project' | 'extra project' | 'templates differ' | 'not backfilled';
  readonly id: string;
  readonly detail?: string;
  /** v1's own state of the render (missing, differing): what a repair writes. */
  readonly live?: V1Render;
}

/**
 * Compares a team's replica in the store with live v1 (every project, its templates, every render: one full walk) and
 * lists the differences. A render that moved on in v1 since the replica last saw it counts as drift: run it right after
 * a sync, or accept that the moving ones may differ by one step.
 */
export async function verifyTeam(store: ReplicaStore, s: V1Session, teamId: string): Promise<Drift[]> {
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
        if (!h) out.push({ team: teamId, kind: 'missing render', id: r.id, detail: `${r.name} (${r.status})`, live: r });
        else {
          const fields = differences(h, r);
          if (fields.length > 0) out.push({ team: teamId, kind: 'render differs', id: r.id, detail: fields.join('; '), live: r });
        }
      }
    }
  }
  for (const id of renders.keys()) if (!seen.has(id)) out.push({ team: teamId, kind: 'extra render', id });
  return out;
}

/** A render with its output URLs' signatures taken off (v1 signs them afresh on every read). */
function unsigned(r: V1Render): Record<string, unknown> {
  return { ...r, output: Object.fromEntries(Object.entries(r.output ?? {}).map(([k, v]) => [k, v.split('?')[0]])) };
}

/** Each top-level field whose value differs, as `field: index <value>, v1 <value>` (values as JSON, long ones cut). */
export function differences(index: V1Render, live: V1Render): string[] {
  const a = unsigned(index);
  const b = unsigned(live);
  const show = (v: unknown) => { const t = v === undefined ? 'absent' : JSON.stringify(v); return t.length > 80 ? `${t.slice(0, 77)}...` : t; };
  const out: string[] = [];
  for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    if (JSON.stringify(a[k]) !== JSON.stringify(b[k])) out.push(`${k}: index ${show(a[k])}, v1 ${show(b[k])}`);
  }
  return out;
}

/** What a repair did. */
export interface Repair {
  /** Renders written again from v1's state (owner, recency and content). */
  readonly rewritten: number;
  /** Rows of renders v1 shows to no team the store holds them under (a forged id): removed. */
  readonly removed: number;
  /** Teams whose rows changed (running instances drop their copy of these). */
  readonly teams: ReadonlySet<string>;
}

/**
 * Writes v1's truth over the drift `verifyTeam` found (`index verify --repair`): missing and differing renders are
 * written as v1 shows them — owner and recency included, over any newer-looking or foreign state the store holds (a
 * forged webhook's far-future `updated_at` or moved owner) — and a render held under a team whose walk did not show it is
 * asked of v1 by id (`sessions` gives a session for a team): written again when v1 knows it, else removed. Run it for
 * every team's drift at once: a render moved out of one team is found missing by the other.
 */
export async function repair(
  store: ReplicaStore, drift: readonly Drift[], sessionFor: (team: string) => Promise<V1Session | undefined>, seenAt: number,
): Promise<Repair> {
  const teams = new Set<string>();
  const live = drift.flatMap((d) => (d.live ? [d.live] : []));
  for (const t of await store.overwriteRenders(live, seenAt)) teams.add(t);
  const rewrittenIds = new Set(live.map((r) => r.id));
  let rewritten = live.length;
  let removed = 0;
  for (const d of drift) {
    if (d.kind !== 'extra render' || rewrittenIds.has(d.id)) continue;
    const owner = await store.ownerOf(d.id);
    if (!owner || owner.team !== d.team) continue; // already moved back by another team's drift
    const s = await sessionFor(d.team);
    let found: V1Render | undefined;
    try {
      found = s ? await s.render(d.id) : undefined;
    } catch (e) {
      if (!(e instanceof V1NotFoundError)) throw e;
    }
    if (found) {
      for (const t of await store.overwriteRenders([found], seenAt)) teams.add(t);
      rewritten++;
    } else {
      await store.dropRenders([d.id]);
      teams.add(d.team);
      removed++;
    }
  }
  return { rewritten, removed, teams };
}
