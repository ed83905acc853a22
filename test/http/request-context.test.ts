import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyRequest } from 'fastify';
import { requestContext } from '../../src/read/request-context.js';
import { ManualClock } from '../../src/lib/clock.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * One context per request, its `now` read once from the injected clock: `$NOW` in a query follows the gateway's
 * clock (a test can move time), not the machine's.
 */
let gw: TestGateway;
let token: string;
const clock = new ManualClock(Date.now());
beforeAll(async () => {
  gw = await startGateway({ INDEX_ENABLED: 'false', ANSWER_CACHE_MB: '0' }, {}, { clock });
  const user = await gw.addUser(0, 'ctx@example.com');
  token = (await gw.deps.users.createStaticToken(user, 'clock test')).token; // (a JWT would expire as the clock moves)
});
afterAll(async () => gw.close());

const count = async (q: string) => {
  const res = await gw.get(`/renders?aggregate[count]=*&${q}`, token);
  expect(res.status).toBe(200);
  return Number(res.body.data[0].count);
};

describe('the request context', () => {
  it('$NOW is the injected clock\'s time: move the clock and the same query answers differently', async () => {
    const all = await count('');
    expect(all).toBeGreaterThan(0);
    clock.set(Date.UTC(2001, 0, 1)); // before every render: all were created after $NOW
    expect(await count('filter[date_created][_gt]=$NOW')).toBe(all);
    clock.set(Date.UTC(2100, 0, 1)); // after every render
    expect(await count('filter[date_created][_gt]=$NOW')).toBe(0);
    expect(await count('filter[date_created][_lte]=$NOW')).toBe(all);
    clock.set(Date.now());
  });

  it('is one object per request, its parts made on first use, its now read from the clock once', async () => {
    let reads = 0;
    const counting = { now: () => { reads++; return 1_000; } };
    const request = { id: 'req-1', log: gw.deps.logger, principal: undefined, readContext: null } as unknown as FastifyRequest;
    const deps = { ...gw.deps, clock: counting };
    const ctx = requestContext(deps, request);
    expect(requestContext(deps, request)).toBe(ctx);
    expect(reads).toBe(0);
    expect([ctx.now, ctx.now, ctx.now]).toEqual([1_000, 1_000, 1_000]);
    expect(reads).toBe(1);
    expect(ctx.meter).toBe(ctx.meter);
    expect(() => ctx.principal).toThrow(/permission/);
    // (another request, as Fastify makes one: its own context)
    expect(requestContext(deps, { id: 'req-2', log: gw.deps.logger, principal: undefined, readContext: null } as unknown as FastifyRequest)).not.toBe(ctx);
  });
});
