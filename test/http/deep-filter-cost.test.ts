import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * A `deep` filter tests every related candidate of every parent before it keeps any (attack pass 11, H: a 999-term
 * `_or` under `project.renders.project.renders` held the instance 10–16 s; the candidates it rejected were never
 * counted). Those tests are counted against the expansion budget (MAX_RELATED_ITEMS, a unit per 100 tests) before they
 * are made: past it, a 400 naming `deep`; below it the answer is the related items the filter keeps.
 */
let sim: RunningSim;
let gw: TestGateway;
let tok: string;

beforeAll(async () => {
  sim = await startSim();
  gw = await startGateway({ MAX_RELATED_ITEMS: '500', ANSWER_CACHE_MB: '0' }, {}, { sim });
  await gw.addUser(0, 'deep-cost@example.com');
  tok = await gw.login('deep-cost@example.com');
  for (const t of sim.keys[0]!.teams) await gw.deps.replica!.syncNow([t.id]);
}, 120_000);
afterAll(async () => { await gw.close(); await sim.sim.close(); });

/** A SEARCH through the app (in process): its status and parsed body. */
async function search(query: unknown): Promise<{ status: number; body: unknown }> {
  const r = await gw.app.inject({ method: 'SEARCH', url: '/renders', headers: { authorization: `Bearer ${tok}`, 'content-type': 'application/json' }, payload: { query } });
  return { status: r.statusCode, body: r.json() };
}

type Nested = { project: { renders: { project: { renders: { id: string; title: string }[] } }[] } };
const orOf = (n: number, title: (i: number) => string) => ({ _or: Array.from({ length: n }, (_, i) => ({ title: { _eq: title(i) } })) });

describe('deep filters count the related items they test (attack pass 11, H)', () => {
  it('a many-term filter under a nested relation is refused before it is run; a one-term one answers the items it keeps', async () => {
    const fields = ['project.renders.project.renders.id', 'project.renders.project.renders.title'];
    // the reference: the nested renders unfiltered, filtered here
    const all = await search({ fields, sort: ['id'], limit: 3 });
    expect(all.status).toBe(200);
    const items = (all.body as { data: Nested[] }).data;
    const titles = items.flatMap((x) => x.project.renders.flatMap((r) => r.project.renders.map((y) => y.title)));
    expect(titles.length).toBeGreaterThan(20);
    const wanted = titles[3]!;

    const big = await search({ deep: { project: { renders: { project: { renders: { _filter: orOf(999, (i) => `t${i}`) } } } } }, fields, sort: ['id'], limit: 3 });
    expect(big.status).toBe(400);
    const e = (big.body as { errors: { message: string; extensions: { code: string } }[] }).errors[0]!;
    expect(e.extensions.code).toBe('INVALID_QUERY');
    expect(e.message).toMatch(/deep filters, searches and sorts would test more than/);

    const one = await search({ deep: { project: { renders: { project: { renders: { _filter: { title: { _eq: wanted } } } } } } }, fields, sort: ['id'], limit: 3 });
    expect(one.status).toBe(200);
    const kept = (one.body as { data: Nested[] }).data;
    expect(kept.map((x) => x.project.renders.map((r) => r.project.renders))).toEqual(
      items.map((x) => x.project.renders.map((r) => r.project.renders.filter((y) => y.title === wanted))),
    );
    expect(kept.flatMap((x) => x.project.renders.flatMap((r) => r.project.renders)).length).toBeGreaterThan(0);
  }, 60_000);
});
