import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ShapeRecorder } from '../../src/migrate/recorder.js';
import * as parse from '../../src/query/parse-query.js';
import { ClientShapeStore } from '../../src/store/client-shapes.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * The request path only counts: a kept answer (the answer cache) is counted in the client profile like any other, and
 * no shape is made, nor any query parsed for it, until the recorder's flush.
 */
let sim: RunningSim;
let gw: TestGateway;
let token: string;
beforeAll(async () => {
  sim = await startSim();
  gw = await startGateway({}, {}, { sim, simClock: true });
  await gw.addUser(0, 'ann@example.com');
  token = await gw.login('ann@example.com');
  for (let i = 0; i < 200 && (await gw.get('/renders?limit=1', token)).headers['x-gateway-source'] !== 'index'; i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  await gw.deps.shapes.flush();
  await gw.deps.db.kysely.deleteFrom('client_shapes').execute();
}, 60_000);
afterAll(async () => { await gw.close(); await sim.sim.close(); });

describe('client profiles on the request path', () => {
  it('count a kept answer without shaping or parsing anything until the flush', async () => {
    const shaping = vi.spyOn(ShapeRecorder.prototype, 'shapeOf');
    const url = '/renders?filter[status][_eq]=complete&sort=-date_created&limit=3&fields=id,title';
    const headers = { authorization: `Bearer ${token}`, 'user-agent': 'curl/8.5.0' };
    const first = await gw.app.inject({ method: 'GET', url, headers });
    expect(first.headers['x-gateway-answer-cache']).toBe('miss');
    const parsing = vi.spyOn(parse, 'parseQuery');
    for (let i = 0; i < 3; i++) {
      const again = await gw.app.inject({ method: 'GET', url, headers });
      expect(again.headers['x-gateway-answer-cache']).toBe('hit');
    }
    expect(parsing).not.toHaveBeenCalled();
    expect(shaping).not.toHaveBeenCalled();
    // (the spy does see a read that is not kept)
    await gw.app.inject({ method: 'GET', url: `${url}&page=2`, headers });
    expect(parsing).toHaveBeenCalled();
    await gw.deps.shapes.flush();
    expect(shaping).toHaveBeenCalledTimes(2); // two distinct questions, each shaped once
    const rows = await new ClientShapeStore(gw.deps.db.kysely).list();
    expect(rows.map((r) => [r.client.split('~')[1], JSON.parse(r.shape).key, r.count])).toEqual([
      ['curl', 'GET /renders fields=id,title filter=status _eq ? sort=-date_created paging=limit', 4],
      ['curl', 'GET /renders fields=id,title filter=status _eq ? sort=-date_created paging=page', 1],
    ]);
    shaping.mockRestore();
    parsing.mockRestore();
  });
});
