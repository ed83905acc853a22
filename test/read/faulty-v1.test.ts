import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/sim/rng.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { call, startSim, type RunningSim } from '../helpers/sim.js';

/**
 * Whole-scope reads answered live while v1 fails 20 % of its answers with a 500 and resets 5 % of its connections (the
 * simulator's fault injection, drawn from a seeded generator; the reads' calls made one at a time, uncached, so the
 * same calls meet the same faults on every run). A read makes tens of calls: without spare retries some call exhausts
 * its own V1_RETRIES and the read is a 503; with the request's spare retries none is.
 */
const OPERATOR = { 'x-gateway-explain': '1', 'x-gateway-operator-token': 'operator-token-0123456789' };
const READS = [
  '/renders?aggregate[count]=*&groupBy[]=status',
  '/renders?meta=filter_count&filter[status][_eq]=complete&limit=5',
  '/renders?sort=title&limit=10',
  '/renders?filter[title][_contains]=render&limit=20&meta=total_count',
  '/projects?limit=-1&fields=id,name',
];
const ROUNDS = 20;

async function faultyGateway(spares: string): Promise<{ gw: TestGateway; sim: RunningSim; token: string }> {
  const rng = new Rng(7);
  const sim = await startSim({ random: () => rng.next() });
  const gw = await startGateway({
    INDEX_ENABLED: 'false', FANOUT_CONCURRENCY: '1', CACHE_TTL_METADATA_MS: '0', CACHE_TTL_RENDER_ACTIVE_MS: '0', CACHE_TTL_RENDER_FINAL_MS: '0',
    KEY_RECHECK_MS: '0', V1_RETRIES: '3', V1_RETRY_BUDGET_PER_READ: spares,
  }, {}, { sim, simClock: true });
  await gw.addUser(0, 'ann@example.com');
  const token = await gw.login('ann@example.com');
  // 20 % of v1's answers are 500s; 5 % of them (6.25 % of the rest) connection resets
  await call(sim.url, '/_sim/faults', { method: 'POST', body: { rules: [{ kind: 'error500', rate: 0.2 }, { kind: 'reset', rate: 0.0625 }] } });
  return { gw, sim, token };
}

/** Every read of ROUNDS rounds: its status, the v1 attempts it made and the spare retries it took. */
async function readAll(gw: TestGateway, token: string): Promise<{ statuses: number[]; attempts: number; spares: number }> {
  const statuses: number[] = [];
  let attempts = 0;
  let spares = 0;
  for (let i = 0; i < ROUNDS; i++) {
    for (const url of READS) {
      const r = await gw.get(url, token, OPERATOR);
      statuses.push(r.status);
      attempts += Number(r.headers['x-gateway-v1-calls'] ?? 0);
      spares += r.body?.explain?.spare_retries ?? 0;
    }
  }
  return { statuses, attempts, spares };
}

/** The longest run of consecutive 503s. */
const longestRun = (statuses: readonly number[]) => {
  let run = 0;
  let best = 0;
  for (const s of statuses) {
    run = s === 503 ? run + 1 : 0;
    best = Math.max(best, run);
  }
  return best;
};

describe('whole-scope live reads under 20 % 500s and 5 % resets', () => {
  let withSpares: Awaited<ReturnType<typeof faultyGateway>>;
  let without: Awaited<ReturnType<typeof faultyGateway>>;
  beforeAll(async () => {
    withSpares = await faultyGateway('20');
    without = await faultyGateway('0');
  });
  afterAll(async () => {
    for (const g of [withSpares, without]) {
      await g.gw.close();
      await g.sim.sim.close();
    }
  });

  it('with the request\'s spare retries, every read is answered (no 503), spares taken where a call exhausted its own', async () => {
    const r = await readAll(withSpares.gw, withSpares.token);
    expect(r.statuses.filter((s) => s !== 200)).toEqual([]);
    expect(r.spares).toBeGreaterThan(0);
    expect(r.attempts).toBeGreaterThan(READS.length * ROUNDS * 5);
  });

  it('without them, the same reads meet 503s (the test can tell)', async () => {
    const r = await readAll(without.gw, without.token);
    expect(r.statuses.filter((s) => s === 503).length).toBeGreaterThan(0);
    expect(r.spares).toBe(0);
    expect(longestRun(r.statuses)).toBeGreaterThanOrEqual(1);
  });
});
