import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, startSim, type RunningSim } from '../helpers/sim.js';

let s: RunningSim;
let key: string;
beforeAll(async () => { s = await startSim(); key = s.keys[0]!.api_key; });
afterAll(async () => s.sim.close());
beforeEach(async () => { await call(s.url, '/_sim/faults', { method: 'DELETE' }); });

describe('fault injection', () => {
  it('adds latency', async () => {
    await call(s.url, '/_sim/faults', { method: 'POST', body: { latency_ms: 120 } });
    const t = performance.now();
    await call(s.url, '/v1/me', { key });
    expect(performance.now() - t).toBeGreaterThanOrEqual(110);
  });

  it('answers 500 for the share asked, then stops after count', async () => {
    await call(s.url, '/_sim/faults', { method: 'POST', body: { rules: [{ kind: 'error500', count: 2, path: '/v1/me' }] } });
    expect((await call(s.url, '/v1/me', { key })).status).toBe(500);
    expect((await call(s.url, '/v1/teams', { key })).status).toBe(200); // other path untouched
    expect((await call(s.url, '/v1/me', { key })).status).toBe(500);
    expect((await call(s.url, '/v1/me', { key })).status).toBe(200);
  });

  it('answers 429 with Retry-After', async () => {
    await call(s.url, '/_sim/faults', { method: 'POST', body: { rules: [{ kind: 'rate_limit', count: 1, retry_after_s: 7 }] } });
    const r = await call(s.url, '/v1/me', { key });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('7');
  });

  it('resets the connection', async () => {
    await call(s.url, '/_sim/faults', { method: 'POST', body: { rules: [{ kind: 'reset', count: 1 }] } });
    await expect(call(s.url, '/v1/me', { key })).rejects.toThrow();
    expect((await call(s.url, '/v1/me', { key })).status).toBe(200);
  });

  it('loses the response after carrying out the request', async () => {
    const project = [...s.sim.world.projects.values()].find((p) => p.teamId === s.keys[0]!.teams[0]!.id)!;
    const before = s.sim.world.renders.size;
    await call(s.url, '/_sim/faults', { method: 'POST', body: { rules: [{ kind: 'lost_response', count: 1, method: 'POST' }] } });
    await expect(call(s.url, '/v1/renders', { method: 'POST', key, body: { name: 'lost one', project_id: project.id } })).rejects.toThrow();
    expect(s.sim.world.renders.size).toBe(before + 1);
    expect([...s.sim.world.renders.values()].some((r) => r.name === 'lost one')).toBe(true);
  });

  it('applies a rate as a share of requests', async () => {
    const sim2 = await startSim({ random: (() => { let i = 0; return () => (i++ % 4) / 4; })() });
    try {
      await call(sim2.url, '/_sim/faults', { method: 'POST', body: { rules: [{ kind: 'error500', rate: 0.5 }] } });
      const statuses = [];
      for (let i = 0; i < 8; i++) statuses.push((await call(sim2.url, '/v1/me', { key: sim2.keys[0]!.api_key })).status);
      expect(statuses.filter((x) => x === 500)).toHaveLength(4);
    } finally { await sim2.sim.close(); }
  });

  it('rejects a malformed fault setting', async () => {
    const r = await call(s.url, '/_sim/faults', { method: 'POST', body: { rules: [{ kind: 'meteor' }] } });
    expect(r.status).toBe(400);
  });
});
