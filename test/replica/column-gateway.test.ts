import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * Questions the replica answers on its columns, through the gateway on a simulator: each answer equals the one the
 * records give (the same question with a conjunct no column holds, `id _nnull`, always true), overlays included, and
 * explain says where it was answered.
 */
let sim: RunningSim;
let gw: TestGateway;
let token: string;
const EXPLAIN = { 'x-gateway-explain': '1', 'x-gateway-operator-token': 'operator-token-0123456789' };

beforeAll(async () => {
  sim = await startSim();
  gw = await startGateway({}, {}, { sim, simClock: true });
  await gw.addUser(0, 'ann@example.com');
  token = await gw.login('ann@example.com');
  await gw.get('/renders?limit=1', token);
  for (let i = 0; i < 300; i++) {
    const s = (await gw.deps.replica!.status()).filter((x) => sim.keys[0]!.teams.some((k) => k.id === x.team));
    if (s.length === sim.keys[0]!.teams.length && s.every((x) => x.state === 'ready')) break;
    await new Promise((r) => setTimeout(r, 10));
    await gw.get('/renders?limit=1', token);
  }
});
afterAll(async () => { await gw.close(); await sim.sim.close(); });

describe('questions on the columns through the gateway', () => {
  it('answers as the records do, with overlaid renders, and explain names the column path', async () => {
    const some = (await gw.get('/renders?limit=3&fields=id,project,date_created', token)).body.data as { id: string; project: string; date_created: string }[];
    for (const r of some) {
      const res = await gw.app.inject({ method: 'PATCH', url: `/renders/${r.id}`, headers: { authorization: `Bearer ${token}` }, payload: { title: 'overlaid' } });
      expect(res.statusCode).toBe(200);
    }
    const at = some[1]!.date_created;
    const cases: [string, RegExp][] = [
      ['aggregate[count]=*&groupBy[]=status', /count on the columns/],
      ['aggregate[count]=*&groupBy[]=project&sort=-count&limit=2', /count on the columns/],
      ['aggregate[count]=*&groupBy[]=status&groupBy[]=project&meta=filter_count', /count on the columns/],
      ['aggregate[count]=*,user_created&groupBy[]=user_created&groupBy[]=download_ready&sort=-count', /count on the columns/],
      ['aggregate[count]=*,user_created&groupBy[]=user_created&meta=filter_count,total_count', /count on the columns/],
      ['aggregate[count]=*&filter[status][_in]=complete,failed&meta=filter_count', /count on the columns/],
      [`filter[status][_eq]=complete&meta=filter_count&fields=id,title,status`, /page of a kept order/],
      [`filter[project][_eq]=${some[0]!.project}&filter[date_created][_lte]=${at}&meta=filter_count&sort=title&limit=5&fields=id,title`, /page of the few matches/],
      [`filter[_or][0][download_ready][_eq]=true&filter[_or][1][date_updated][_null]=true&meta=filter_count&limit=3&offset=2&fields=id`, /page of the few matches/],
      ['sort=title&page=3&limit=20&fields=id,title', /page of a kept order/],
      ['filter[status][_neq]=failed&sort=-date_updated&limit=7&meta=total_count&fields=id,date_updated', /page of a kept order/],
      ['filter[status][_eq]=complete&sort=status,-title&limit=4&meta=filter_count&fields=id,title', /page of a kept order/],
      ['filter[status][_eq]=complete&sort=-user_created&limit=4&meta=filter_count&fields=id', /over the column matches|of the column matches/],
    ];
    for (const [query, strategy] of cases) {
      const cols = await gw.get(`/renders?${query}`, token, EXPLAIN);
      const recs = await gw.get(`/renders?${query}&filter[id][_nnull]=true`, token, EXPLAIN);
      expect(cols.status, query).toBe(200);
      expect({ data: cols.body.data, meta: cols.body.meta }, query).toEqual({ data: recs.body.data, meta: recs.body.meta });
      expect(cols.body.explain.plan.execution.strategy, query).toMatch(strategy);
      expect(recs.body.explain.plan.execution.strategy, query).not.toMatch(/column/);
      expect(cols.body.data.length, query).toBeGreaterThan(0);
    }
    expect((await gw.get('/renders?aggregate[count]=*&groupBy[]=status', token)).body.data.length).toBeGreaterThan(1);
    const overlaid = await gw.get(`/renders?fields=id,title&filter[project][_eq]=${some[0]!.project}&meta=filter_count&sort=title&limit=-1`, token);
    expect(overlaid.body.data.filter((r: { title: string }) => r.title === 'overlaid').length).toBeGreaterThan(0);
  });
});
