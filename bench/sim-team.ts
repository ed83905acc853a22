/**
 * One team of the simulator's world (unicode and 250-character titles, signed output URLs) for in-process benches:
 * `simWorld(renders)` the first team of a two-team world (100 projects a team) as v1 objects, `simTeam(renders)` the
 * same held by a TeamReplica.
 */
import { loadMappings } from '../src/config/mappings.js';
import { ReplicaSource } from '../src/exec/replica-source.js';
import { recordBuilder } from '../src/replica/team/records.js';
import { ReplicaSnapshot } from '../src/replica/reads/snapshot.js';
import { TeamReplica } from '../src/replica/team/team-replica.js';
import { SimClock } from '../src/sim/clock.js';
import { World } from '../src/sim/world.js';
import type { IdMapStore } from '../src/store/idmap.js';
import { IdTranslator } from '../src/translate/ids.js';
import type { V1Project, V1Render, V1Team } from '../src/v1/schemas.js';

export const mappings = loadMappings('mappings');

export function simWorld(renders: number): { team: V1Team; projects: V1Project[]; v1: V1Render[] } {
  const projects = 100;
  const clock = new SimClock('manual', 1_750_000_000_000);
  const scale = { teams: 2, projectsPerTeam: projects, templatesPerProject: 1, rendersPerProject: Math.ceil(renders / projects), people: 4 };
  const world = new World(clock, 1, scale);
  const sim = [...world.teams.values()][0]!;
  const team = { id: sim.id, name: sim.name, account_id: sim.accountId, role: 'admin' as const, created_at: Math.floor(sim.createdAt / 1000) };
  return {
    team,
    projects: [...world.projects.values()].filter((x) => x.teamId === sim.id).map((p) => world.projectView(p)),
    v1: [...world.renders.values()].filter((r) => r.teamId === sim.id).map((r) => world.renderView(r)),
  };
}

export function builderOf() {
  const ids = new IdTranslator({ imported: async () => [] } as unknown as IdMapStore);
  return recordBuilder({ ids, mappings, timeUnit: 'auto' }, () => ({}), {});
}

export function simTeam(renders: number) {
  const { team, projects, v1 } = simWorld(renders);
  const builder = builderOf();
  const t = new TeamReplica({ team, members: [], state: 'ready', backfilledAt: 1, syncedAt: 1, webhookAt: null }, builder);
  for (const project of projects) t.setProject({ project, templates: [], backfilled: true }, 1);
  for (const r of v1) t.apply(r, 1);
  const source = () => new ReplicaSource(new ReplicaSnapshot([t], 25), { refresh: async () => {}, answered: () => {}, flush: async () => {}, data: async () => new Map(), dataSizes: async () => new Map(), now: 10 });
  return { team: t, builder, v1, source };
}
