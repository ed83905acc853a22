import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { databases } from '../helpers/databases.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * Two gateway instances over one PostgreSQL store: a rule set on A is applied by B as soon as B hears of it on the change
 * bus (LISTEN/NOTIFY: well within a second; waited on by the notification and B's reading of the rules, never a sleep).
 */
const OP = { authorization: 'Bearer operator-token-0123456789' };
const clock = new ManualClock(Date.UTC(2026, 2, 1, 10));
let sim: RunningSim;
let a: TestGateway;
let b: TestGateway;
beforeAll(async () => {
  const pg = (await databases()).find((d) => d.name === 'postgres')!;
  sim = await startSim();
  a = await startGateway({ DATABASE_URL: pg.url }, {}, { sim, clock });
  b = await startGateway({ DATABASE_URL: pg.url }, {}, { sim, clock });
  await a.addUser(0, 'two@example.com');
  await b.deps.ids.load();
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await sim?.sim.close();
});

const heard = (gw: TestGateway, topic: string) => new Promise<string>((resolve) => gw.deps.bus.on(topic, resolve));
const renders = async (gw: TestGateway) => gw.app.inject({ method: 'GET', url: '/renders?limit=1', headers: { authorization: `Bearer ${await gw.login('two@example.com')}` } });

describe('deprecation rules on two instances sharing PostgreSQL', () => {
  it('a rule set on A is applied by B once B hears of it; a brownout set on A refuses on B; clearing on A clears B', async () => {
    expect((await renders(b)).headers.deprecation).toBeUndefined();
    let news = heard(b, 'deprecations');
    const rule = { id: 'r', match: { route: 'GET /renders' }, deprecation: '2026-01-01T00:00:00Z', sunset: '2026-06-30T00:00:00Z' };
    expect((await a.app.inject({ method: 'PUT', url: '/_gateway/deprecations', headers: OP, payload: { rules: [rule] } })).statusCode).toBe(200);
    await news;
    await b.deps.deprecations.idle();
    const res = await renders(b);
    expect(res.statusCode).toBe(200);
    expect(res.headers.sunset).toBe('Tue, 30 Jun 2026 00:00:00 GMT');
    expect((await b.app.inject({ method: 'GET', url: '/_gateway/deprecations', headers: OP })).json().data.rules).toEqual([rule]);

    news = heard(b, 'deprecations');
    const brownouts = [{ start: '2026-03-01T09:55:00Z', minutes: 15 }];
    expect((await a.app.inject({ method: 'PUT', url: '/_gateway/deprecations', headers: OP, payload: { rules: [{ ...rule, brownouts }] } })).statusCode).toBe(200);
    await news;
    await b.deps.deprecations.idle();
    expect((await renders(b)).statusCode).toBe(410);

    news = heard(b, 'deprecations');
    expect((await a.app.inject({ method: 'PUT', url: '/_gateway/deprecations', headers: OP, payload: { rules: [] } })).statusCode).toBe(200);
    await news;
    await b.deps.deprecations.idle();
    const cleared = await renders(b);
    expect(cleared.statusCode).toBe(200);
    expect(cleared.headers.deprecation).toBeUndefined();
  });

  it('both instances count into the same rows', async () => {
    const rule = { id: 'shared', match: { route: 'GET /renders' }, deprecation: '2026-01-01T00:00:00Z' };
    const news = heard(b, 'deprecations');
    await a.app.inject({ method: 'PUT', url: '/_gateway/deprecations', headers: OP, payload: { rules: [rule] } });
    await news;
    await b.deps.deprecations.idle();
    await renders(a);
    await renders(b);
    await renders(b);
    await a.deps.deprecations.flush();
    const p = await b.app.inject({ method: 'GET', url: '/_gateway/deprecations/progress', headers: OP });
    expect(p.json().data[0].clients.map((c: { calls: number }) => c.calls)).toEqual([3]);
  });
});
