import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * Relational paths 7 to 10 fields deep (MAX_RELATIONAL_DEPTH allows 10) answer the same live (every level fetched from
 * v1 in rounds) as from the replica — the live path resolves as many rounds as the path is deep, never stops half way.
 */
let sim: RunningSim;
let live: TestGateway;
let replica: TestGateway;
let liveToken: string;
let replicaToken: string;
beforeAll(async () => {
  sim = await startSim({ scale: 'tiny' });
  live = await startGateway({ INDEX_ENABLED: 'false', MAX_RELATED_ITEMS: '100000' }, {}, { sim });
  replica = await startGateway({ MAX_RELATED_ITEMS: '100000' }, {}, { sim });
  await live.addUser(0, 'deep-live@example.com');
  await replica.addUser(0, 'deep-replica@example.com');
  liveToken = await live.login('deep-live@example.com');
  replicaToken = await replica.login('deep-replica@example.com');
  for (const t of sim.keys[0]!.teams) await replica.deps.replica!.syncNow([t.id]);
});
afterAll(async () => { await live.close(); await replica.close(); await sim.sim.close(); });

// render → project → account → projects → renders → project → account → projects → renders → title: 10 fields
const PATHS = [
  'project.account.projects.renders.project.account.name', // 7
  'project.account.projects.renders.project.account.projects.title', // 8
  'project.account.projects.renders.project.account.projects.renders.id', // 9
  'project.account.projects.renders.project.account.projects.renders.title', // 10
];

describe('deep relational paths, live and from the replica', () => {
  for (const path of PATHS) {
    it(`fields=${path} (${path.split('.').length} deep)`, async () => {
      const url = `/renders?fields=id,${path}&sort=id&limit=2`;
      const a = await live.get(url, liveToken);
      const b = await replica.get(url, replicaToken);
      expect(a.status, JSON.stringify(a.body).slice(0, 300)).toBe(200);
      expect(b.status).toBe(200);
      expect(a.headers['x-gateway-source']).toBe('live');
      expect(b.headers['x-gateway-source']).toBe('index');
      expect(a.body.data.length).toBe(2);
      // the deepest value is there: a path cut short leaves ids where records should be
      const leaf = JSON.stringify(b.body.data);
      expect(leaf.length).toBeGreaterThan(50);
      expect(a.body.data).toEqual(b.body.data);
    });
  }

  it('a filter through 7 relations selects alike', async () => {
    const first = (await replica.get('/renders?fields=project.account.name&limit=1&sort=id', replicaToken)).body.data[0].project.account.name;
    const f = encodeURIComponent(JSON.stringify({ project: { account: { projects: { renders: { project: { account: { name: { _eq: first } } } } } } } }));
    const url = `/renders?fields=id&sort=id&limit=-1&filter=${f}`;
    const a = await live.get(url, liveToken);
    const b = await replica.get(url, replicaToken);
    expect(a.status).toBe(200);
    expect(a.body.data.length).toBeGreaterThan(0);
    expect(a.body.data).toEqual(b.body.data);
  });
});

describe('the live path\'s rounds', () => {
  it('settle goes on for as many rounds as a chain of misses needs (a chain of 9, one level fetched a round)', async () => {
    const { RecordMap } = await import('../../src/live/record-map.js');
    const { ExpansionBudget } = await import('../../src/query/budget.js');
    const asked: string[] = [];
    const env = {
      catalog: { map: async <T>(xs: readonly T[], fn: (x: T) => Promise<void>) => { for (const x of xs) await fn(x); } },
      ids: { toV1: async (_t: string, id: string) => { asked.push(id); return undefined; } },
      budget: new ExpansionBudget(1000),
    } as unknown as ConstructorParameters<typeof RecordMap>[0];
    const records = new RecordMap(env);
    let rounds = 0;
    // level k is looked up only once level k-1 is known (absent counts as known): one new miss a round
    const out = await records.settle(() => {
      rounds++;
      for (let k = 0; k < 9; k++) if (records.one('render', `level-${k}`) === undefined && asked.length <= k) return k;
      return 9;
    });
    expect(out).toBe(9);
    expect(asked).toEqual(Array.from({ length: 9 }, (_, k) => `level-${k}`));
    expect(rounds).toBe(10);
  });
});
