import { describe, expect, it } from 'vitest';
import { openDb } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';
import { WebhookHealthStore } from '../../src/store/webhook-health.js';
import { databases } from '../helpers/databases.js';

/**
 * Issue 43's receivers and windows on both stores: a window written, its end moved later (never earlier), written again
 * after another instance dropped it, a team's windows dropped once caught up (those of every team kept), receivers'
 * rows and whether each stopped.
 */
const dbs = await databases();
describe.each(dbs)('webhook health on $name', ({ url }) => {
  it('keeps a window a run, moves its end later only, drops a team\'s caught-up windows', async () => {
    const db = await openDb(url);
    try {
      await migrate(db.kysely);
      const s = new WebhookHealthStore(db.kysely);
      const t = s.newGap('team_w1', 1_000, 1_000, 'refused');
      await s.putGap(t);
      await s.putGap({ ...t, to: 5_000 });
      await s.putGap({ ...t, to: 3_000 }); // an older end changes nothing
      const every = s.newGap('', 100, 40_000, 'receiver down');
      await s.putGap(every);
      expect((await s.gapsAfter(0)).map((g) => [g.team, g.from, g.to, g.reason])).toEqual([['', 100, 40_000, 'receiver down'], ['team_w1', 1_000, 5_000, 'refused']]);
      await s.dropCaughtUp('team_w1', 40_000);
      expect((await s.gapsAfter(0)).map((g) => g.team)).toEqual(['']);
      await s.putGap({ ...t, to: 6_000 }); // dropped meanwhile by another instance's catch-up: written again
      expect((await s.gapsAfter(0)).map((g) => [g.team, g.to])).toEqual([['', 40_000], ['team_w1', 6_000]]);
      await s.beat('a', 1, 10);
      await s.beat('b', 2, 20, true);
      expect((await s.receiversElsewhere('c')).sort((x, y) => x.seenAt - y.seenAt)).toEqual([{ seenAt: 10, stopped: false }, { seenAt: 20, stopped: true }]);
    } finally {
      await db.close();
    }
  });
});
