import { describe, expect, it } from 'vitest';
import { loadMappings } from '../../src/config/mappings.js';
import { activityOf, cadenceFrom, HEAD_PAGE } from '../../src/replica/sync/freshness.js';
import { recordBuilder } from '../../src/replica/team/records.js';
import { TeamReplica } from '../../src/replica/team/team-replica.js';
import type { IdMapStore } from '../../src/store/idmap.js';
import { IdTranslator } from '../../src/translate/ids.js';
import type { RenderStatus, V1Project, V1Render, V1Team } from '../../src/v1/schemas.js';

const team: V1Team = { id: 'team_one', name: 'One', account_id: 'acct_one', role: 'admin', created_at: 1_700_000_000 };
const project = (id: string): V1Project => ({
  id, name: id, team: { id: team.id, name: team.name }, created_by: null, created_at: 1_700_000_000, updated_at: null, thumbnail_url: null,
});
const NOW = 1_800_000_000_000;
const render = (id: string, projectId: string, createdAt: number, status: RenderStatus): V1Render => ({
  id, name: id, status, type: 'cloud', project: { id: projectId, team: team.id }, created_by: null, created_at: createdAt, updated_at: null,
});

function teamOf(projects: readonly string[]): TeamReplica {
  const builder = recordBuilder({ ids: new IdTranslator({ imported: async () => [] } as unknown as IdMapStore), mappings: loadMappings('mappings'), timeUnit: 'auto' },
    () => ({}), {});
  const t = new TeamReplica({ team, members: [], state: 'ready', backfilledAt: 1, syncedAt: NOW - 1_000, webhookAt: null }, builder);
  for (const id of projects) t.setProject({ project: project(id), templates: [], backfilled: true }, 1);
  return t;
}

describe('the renders a rotating sync re-polls (issue 43: the budget a quiet project waits for)', () => {
  it('not those among the newest of an active project (its head check, at every sync, shows them); those deeper or in quiet projects', () => {
    const t = teamOf(['proj_active', 'proj_quiet']);
    // the active project: 25 renders a second apart, the newest and the oldest still processing
    for (let i = 0; i < 25; i++) t.apply(render(`rend_a${String(i).padStart(2, '0')}`, 'proj_active', NOW - 25_000 + i * 1_000, i === 0 || i === 24 ? 'processing' : 'complete'), NOW);
    // the quiet project: one render an hour old, still queued
    t.apply(render('rend_q', 'proj_quiet', NOW - 3_600_000, 'queued'), NOW);
    expect(t.movingIds().sort()).toEqual(['rend_a00', 'rend_a24', 'rend_q']);
    expect(t.amongNewest('rend_a24', HEAD_PAGE / 2)).toBe(true);
    expect(t.amongNewest('rend_a00', HEAD_PAGE / 2)).toBe(false);
    const a = activityOf(t, NOW, 300_000);
    expect([...a.active]).toEqual(['proj_active']);
    // re-polled: the active project's oldest (24 renders newer than it) and the quiet project's
    expect(a.shape.moving).toBe(2);
  });

  it('a 100-project team with 5 active projects whose renders not yet final its heads show: the rotation of a 16 s cycle, not 32 s', () => {
    const config = { INDEX_MAX_STALENESS_MS: 5_000, INDEX_RECONCILE_MS: 60_000, INDEX_ACTIVE_MS: 300_000, WEBHOOK_RECONCILE_MS: 0 };
    const hashes = Array.from({ length: 100 }, (_, i) => (i * 2_654_435_761) >>> 0);
    const hooks = { trusted: false, webhookAt: null };
    const seen = cadenceFrom(config, { projects: 100, active: 5, moving: 0 }, hashes, hooks, NOW, 600);
    const repolled = cadenceFrom(config, { projects: 100, active: 5, moving: 5 }, hashes, hooks, NOW, 600);
    expect(seen.cycleMs).toBe(16_000);
    expect(repolled.cycleMs).toBe(32_000);
    expect(seen.boundMs).toBeLessThan(repolled.boundMs);
    expect(seen.activeBoundMs).toBe(5_000);
  });
});
