import { describe, expect, it } from 'vitest';
import { loadMappings } from '../../src/config/mappings.js';
import { HeadDeadlines } from '../../src/replica/sync/deadlines.js';
import { recordBuilder } from '../../src/replica/team/records.js';
import { TeamReplica } from '../../src/replica/team/team-replica.js';
import type { IdMapStore } from '../../src/store/idmap.js';
import { IdTranslator } from '../../src/translate/ids.js';
import type { V1Project, V1Team } from '../../src/v1/schemas.js';

const team: V1Team = { id: 'team_one', name: 'One', account_id: 'acct_one', role: 'admin', created_at: 1_700_000_000 };
const project = (id: string): V1Project => ({
  id, name: id, team: { id: team.id, name: team.name }, created_by: null, created_at: 1_700_000_000, updated_at: null, thumbnail_url: null,
});

function teamOf(ids: readonly string[]): TeamReplica {
  const builder = recordBuilder({ ids: new IdTranslator({ imported: async () => [] } as unknown as IdMapStore), mappings: loadMappings('mappings'), timeUnit: 'auto' },
    () => ({}), {});
  const t = new TeamReplica({ team, members: [], state: 'ready', backfilledAt: 1, syncedAt: 1_000, webhookAt: null }, builder);
  for (const id of ids) t.setProject({ project: project(id), templates: [], backfilled: true }, 1);
  return t;
}

describe('HeadDeadlines', () => {
  const none = () => [];

  it('a project dropped and another added between two ticks (the same count): the new one is owed, the dropped one no more', () => {
    const t = teamOf(['proj_a', 'proj_b']);
    const d = new HeadDeadlines();
    d.stated(t, 2_000, 5_000, none);
    d.checked(t, ['proj_a', 'proj_b'], 2_000, 5_000);
    expect(d.owedBy(t, 7_000)).toEqual(['proj_a', 'proj_b']);
    t.dropProject('proj_b');
    t.setProject({ project: project('proj_c'), templates: [], backfilled: true }, 3_000);
    expect(t.projects.size).toBe(2);
    d.stated(t, 3_000, 5_000, none);
    // the new project owed from the team's last sync (1 000) plus the bound; the dropped one gone
    expect(d.owedBy(t, 6_000)).toEqual(['proj_c']);
    expect(d.owedBy(t, 7_000)).toEqual(['proj_a', 'proj_c']);
    expect(d.earliest(t)).toBe(6_000);
  });

  it('a shorter bound moves deadlines earlier, from the last moment the longer one was seen', () => {
    const t = teamOf(['proj_a']);
    const d = new HeadDeadlines();
    d.stated(t, 2_000, 30_000, none);
    d.checked(t, ['proj_a'], 2_000, 30_000);
    d.stated(t, 2_250, 30_000, none);
    d.stated(t, 2_500, 5_000, none);
    expect(d.earliest(t)).toBe(2_250 + 5_000);
    // a longer bound does not move them later
    d.stated(t, 2_750, 60_000, none);
    expect(d.earliest(t)).toBe(7_250);
  });
});
