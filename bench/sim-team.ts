/**
 * One team of the simulator's world (unicode and 250-character titles, signed output URLs) held by a TeamReplica, for
 * in-process benches: `simTeam(renders)` builds it from the first team of a two-team world (100 projects a team).
 */
import { loadMappings } from '../src/config/mappings.js';
import { ReplicaSource } from '../src/exec/replica-source.js';
import { recordBuilder } from '../src/replica/records.js';
import { ReplicaSnapshot } from '../src/replica/snapshot.js';
import { TeamReplica } from '../src/replica/team-replica.js';
import { SimClock } from '../src/sim/clock.js';
import { World } from '../src/sim/world.js';
import type { IdMapStore } from '../src/store/idmap.js';
import { IdTranslator } from '../src/translate/ids.js';
import type { V1Render } from '../src/v1/schemas.js';

export const mappings = loadMappings('mappings');

export function simTeam(renders: number) {
  const projects = 100;
  const clock = new SimClock('manual', 1_750_000_000_000);
  const world = new World(clock, 1, { teams: 2, projectsPerTeam: projects, templatesPerProject: 1, rendersPerProject: Math.ceil(renders / projects), people: 4 });
  const ids = new IdTranslator({ imported: async () => [] } as unknown as IdMapStore);
  const builder = recordBuilder({ ids, mappings, timeUnit: 'auto' }, () => ({}), {});
  const sim = [...world.teams.values()][0]!;
  const team = { id: sim.id, name: sim.name, account_id: sim.accountId, role: 'admin' as const, created_at: Math.floor(sim.createdAt / 1000) };
  const t = new TeamReplica({ team, members: [], state: 'ready', backfilledAt: 1, syncedAt: 1, webhookAt: null }, builder);
  for (const p of [...world.projects.values()].filter((x) => x.teamId === sim.id)) t.setProject({ project: world.projectView(p), templates: [], backfilled: true }, 1);
  const v1: V1Render[] = [...world.renders.values()].filter((r) => r.teamId === sim.id).map((r) => world.renderView(r));
  for (const r of v1) t.apply(r, 1);
  const source = () => new ReplicaSource(new ReplicaSnapshot([t], 25), { refresh: async () => {}, answered: () => {}, flush: async () => {}, now: 10 });
  return { team: t, builder, v1, source, world };
}
