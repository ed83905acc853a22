import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateOf, supersedes, supersedesSql } from '../../src/replica/recency.js';
import { openDb, type Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';
import { IndexStore } from '../../src/store/render-index.js';
import { WebhookLedger } from '../../src/store/webhook-events.js';
import { RENDER_STATUSES, type RenderStatus, type V1Render } from '../../src/v1/schemas.js';
import { databases } from '../helpers/databases.js';

/**
 * The recency rule is defined once (src/replica/recency.ts) and applied in three places: the replica in memory
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

    it('the store\'s rows follow it (IndexStore.putRenders)', async () => {
      const store = new IndexStore(d.kysely);
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
