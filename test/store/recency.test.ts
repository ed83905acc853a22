import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateOf, supersedes, supersedesSql } from '../../src/store/recency.js';
import { openDb, type Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';
import { ReplicaStore } from '../../src/store/replica-store.js';
import { WebhookLedger } from '../../src/store/webhook-events.js';
import { RENDER_STATUSES, type RenderStatus, type V1Render } from '../../src/v1/schemas.js';
import { databases } from '../helpers/databases.js';

/**
 * The recency rule is defined once (src/store/recency.ts) and applied in three places: the replica in memory
 * (TypeScript), its store rows and the webhook ledger (SQL). The same cases run through all three, on SQLite and on
 * PostgreSQL, and must agree.
 */
const render = (id: string, status: RenderStatus, updatedAt: number | null, createdAt = 1_000): V1Render => ({
  id, name: `${status}@${updatedAt}`, status, type: 'cloud', project: { id: 'proj_recency', team: 'team_recency' }, created_by: null,
  created_at: createdAt, updated_at: updatedAt, output: null, template_id: null,
} as unknown as V1Render);

// every pair of a few times (equal, before, after; updated_at absent → created_at) and every two statuses
const times: (number | null)[] = [null, 1_000, 2_000, 3_000];
const cases: { held: V1Render; next: V1Render }[] = [];
let n = 0;
for (const a of RENDER_STATUSES) for (const b of RENDER_STATUSES) for (const ta of times) for (const tb of times) {
  if ((n++ % 7) !== 0) continue; // a spread sample: every status pair appears with several time pairs
  cases.push({ held: render(`rend_r${n}`, a, ta), next: render(`rend_r${n}`, b, tb) });
}

for (const db of await databases()) {
  describe(`the recency rule, one definition (${db.name})`, () => {
    let d: Db;
    beforeAll(async () => { d = await openDb(db.url); await migrate(d.kysely); });
    afterAll(async () => d.close());

    it('has cases where it replaces and where it does not', () => {
      const outcomes = cases.map((c) => supersedes(stateOf(c.held), stateOf(c.next)));
      expect(outcomes.filter(Boolean).length).toBeGreaterThan(10);
      expect(outcomes.filter((x) => !x).length).toBeGreaterThan(10);
      expect(() => supersedesSql('x; drop table users')).toThrow();
    });

    it('the store\'s rows follow it (ReplicaStore.putRenders)', async () => {
      const store = new ReplicaStore(d.kysely);
      for (const c of cases) {
        await store.putRenders('team_recency', [c.held]);
        await store.putRenders('team_recency', [c.next]);
        const [row] = await store.rendersById([c.held.id]);
        const expected = supersedes(stateOf(c.held), stateOf(c.next)) ? c.next : c.held;
        expect(row!.render.name, `${c.held.name} then ${c.next.name}`).toBe(expected.name);
      }
    });

    it('the webhook ledger follows it (WebhookLedger.newer)', async () => {
      const ledger = new WebhookLedger(d.kysely);
      for (const c of cases) {
        const id = `${c.held.id}_ledger`;
        const h = stateOf(c.held);
        const x = stateOf(c.next);
        expect(await ledger.newer(id, h.updatedAt, h.rank)).toBe(true);
        expect(await ledger.newer(id, x.updatedAt, x.rank), `${c.held.name} then ${c.next.name}`).toBe(supersedes(h, x));
      }
    });
  });
}

describe('the recency rule in TypeScript, case by case', () => {
  const at = (updatedAt: number, rank: number) => ({ updatedAt, rank });

  it('takes updated_at when there is one, else created_at, and the status\'s lifecycle rank', () => {
    expect(stateOf(render('rend_s1', 'processing', 5_000, 1_000))).toEqual({ updatedAt: 5_000, rank: 3 });
    expect(stateOf(render('rend_s2', 'processing', 500, 1_000))).toEqual({ updatedAt: 500, rank: 3 }); // not the later of the two
    expect(stateOf(render('rend_s3', 'queued', 0, 1_000))).toEqual({ updatedAt: 0, rank: 2 }); // 0 is a time, not "absent"
    expect(stateOf(render('rend_s4', 'complete', null, 1_000))).toEqual({ updatedAt: 1_000, rank: 5 });
    expect(stateOf(render('rend_s5', 'initializing', null, 7))).toEqual({ updatedAt: 7, rank: 0 });
  });

  it.each([
    ['nothing held', undefined, at(1, 0), true],
    ['the same state (fresher signed URLs)', at(10, 3), at(10, 3), true],
    ['later, same status', at(10, 3), at(11, 3), true],
    ['earlier, same status', at(10, 3), at(9, 3), false],
    ['same time, later in the lifecycle', at(10, 3), at(10, 4), true],
    ['same time, earlier in the lifecycle', at(10, 4), at(10, 3), false],
    ['later in both', at(10, 1), at(20, 5), true],
    ['later, but back in the lifecycle (a final status stays)', at(10, 5), at(20, 3), false],
    ['earlier, though further in the lifecycle', at(10, 1), at(5, 5), false],
    ['earlier in both', at(10, 3), at(9, 2), false],
  ] as const)('%s → %s', (_what, held, next, expected) => {
    expect(supersedes(held, next)).toBe(expected);
  });

  it('its SQL form names the held table and the incoming row, and takes table names only', () => {
    expect(supersedesSql('index_renders')).toBe('index_renders.updated_at <= excluded.updated_at and index_renders.rank <= excluded.rank');
    expect(supersedesSql('render_versions', 'incoming')).toBe('render_versions.updated_at <= incoming.updated_at and render_versions.rank <= incoming.rank');
    for (const [held, next] of [['x; drop table users', 'excluded'], ['ok', 'excluded; drop table users'], ['', 'excluded'], ['ok', ''], ['Renders', 'excluded'], ['ok', 'x.y'], ['a b', 'excluded']] as const)
      expect(() => supersedesSql(held, next), `${held} / ${next}`).toThrow(/table names only/);
  });
});
