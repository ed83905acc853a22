import { describe, expect, it } from 'vitest';
import { Spend } from '../../src/replica/sync/budget.js';

/** A walk of a team (backfill, sync) has spare GET attempts past V1_RETRIES, once v1 has answered it, and counts them as calls. */
describe('the spare retries of a walk', () => {
  it('are given once v1 has answered the walk, and every attempt is a call of the walk', () => {
    const spend = new Spend('team_a', 0);
    spend.meter.onCall({ method: 'GET', path: '/v1/renders', status: 500, attempt: 0, ms: 1 });
    expect(spend.meter.spareRetry?.()).toBe(false); // v1 has not answered yet: it may be down
    spend.meter.onCall({ method: 'GET', path: '/v1/projects', status: 200, attempt: 0, ms: 1 });
    expect(spend.meter.spareRetry?.()).toBe(true);
    expect(spend.calls).toBe(2);
  });

  it('run out at 200 a walk', () => {
    const spend = new Spend('team_a', 0);
    spend.meter.onCall({ method: 'GET', path: '/v1/projects', status: 200, attempt: 0, ms: 1 });
    let given = 0;
    while (spend.meter.spareRetry?.() && given < 1000) given++;
    expect(given).toBe(200);
  });
});
