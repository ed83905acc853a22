import Fastify from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { V1Client, type V1CallInfo, type V1Meter } from '../../src/v1/client.js';
import {
  V1ContractError, V1NetworkError, V1NotFoundError, V1PaymentRequiredError, V1ServerError,
  V1UnauthorizedError, V1ValidationError, parseRetryAfter,
} from '../../src/v1/errors.js';
import { call, startSim, type RunningSim } from '../helpers/sim.js';

let s: RunningSim;
let key: string;
const sleeps: number[] = [];
let client: V1Client;
beforeAll(async () => {
  s = await startSim();
  key = s.keys[0]!.api_key;
  client = new V1Client({ baseUrl: s.url, timeoutMs: 2000, retries: 3, retryBaseMs: 100, sleep: async (ms) => { sleeps.push(ms); }, random: () => 0.5 });
});
afterAll(async () => { await client.close(); await s.sim.close(); });
beforeEach(async () => { sleeps.length = 0; await call(s.url, '/_sim/faults', { method: 'DELETE' }); });

const metered = () => {
  const calls: V1CallInfo[] = [];
  return { calls, meter: { onCall: (c: V1CallInfo) => calls.push(c) } };
};
const fault = (rules: unknown[]) => call(s.url, '/_sim/faults', { method: 'POST', body: { rules } });

describe('retries', () => {
  it.each(['error500', 'reset'] as const)('retries a GET after %s with exponential backoff and jitter, then succeeds', async (kind) => {
    await fault([{ kind, count: 2, path: '/v1/me' }]);
    const { calls, meter } = metered();
    const me = await client.as(key, meter).me();
    expect(me.id).toBe(s.keys[0]!.user_id);
    expect(calls.map((c) => c.attempt)).toEqual([0, 1, 2]);
    expect(sleeps).toEqual([75, 150]); // base·2^n, jitter keeps 50–100 %
  });

  it('gives up after the configured retries with the typed error', async () => {
    await fault([{ kind: 'error500', path: '/v1/me' }]);
    const { calls, meter } = metered();
    await expect(client.as(key, meter).me()).rejects.toBeInstanceOf(V1ServerError);
    expect(calls).toHaveLength(4);
  });

  it('honours Retry-After on 429', async () => {
    await fault([{ kind: 'rate_limit', count: 1, retry_after_s: 2, path: '/v1/me' }]);
    await client.as(key).me();
    expect(sleeps).toEqual([2000]);
  });

  it('does not retry 401, 404 or 422', async () => {
    for (const [run, type] of [
      [(m: V1Meter) => client.as('sk_' + 'a'.repeat(32), m).me(), V1UnauthorizedError],
      [(m: V1Meter) => client.as(key, m).render('rend_missing'), V1NotFoundError],
      [(m: V1Meter) => client.as(key, m).projectsPage(s.keys[0]!.teams[0]!.id, { limit: 0 }), V1ValidationError],
    ] as const) {
      const { calls, meter } = metered();
      await expect((run as (m: V1Meter) => Promise<unknown>)(meter)).rejects.toBeInstanceOf(type);
      expect(calls).toHaveLength(1);
      expect(sleeps).toEqual([]);
    }
  });

  it('never retries POST /v1/renders, even after a 500 or a lost response', async () => {
    const project = [...s.sim.world.projects.values()].find((p) => p.teamId === s.keys[0]!.teams[0]!.id)!;
    await fault([{ kind: 'error500', count: 1, method: 'POST' }]);
    const { calls, meter } = metered();
    await expect(client.as(key, meter).createRender({ name: 'once', project_id: project.id })).rejects.toBeInstanceOf(V1ServerError);
    expect(calls).toHaveLength(1);
    await fault([{ kind: 'lost_response', count: 1, method: 'POST' }]);
    const before = s.sim.world.renders.size;
    await expect(client.as(key, meter).createRender({ name: 'lost', project_id: project.id })).rejects.toBeInstanceOf(V1NetworkError);
    expect(calls).toHaveLength(2);
    expect(s.sim.world.renders.size).toBe(before + 1);
  });

  it('maps 402 and 422 with details', async () => {
    const team = [...s.sim.world.teams.values()].find((t) => t.credits <= 0)!;
    const owner = s.keys.find((k) => k.teams.some((t) => t.id === team.id))!;
    const project = [...s.sim.world.projects.values()].find((p) => p.teamId === team.id)!;
    await expect(client.as(owner.api_key).createRender({ name: 'x', project_id: project.id })).rejects.toBeInstanceOf(V1PaymentRequiredError);
    const err = await client.as(key).createRender({ name: '', project_id: project.id } as never).catch((e) => e);
    expect(err).toBeInstanceOf(V1ValidationError);
    expect(err.details[0]).toMatchObject({ field: 'name', code: 'too_small' });
  });

  it('parses Retry-After as seconds or a date', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});

describe('paging', () => {
  it('reads every item through short pages and stops only when next_cursor is null', async () => {
    const project = [...s.sim.world.projects.values()].find((p) => p.teamId === s.keys[0]!.teams[0]!.id)!;
    const session = client.as(key);
    const pages: number[] = [];
    const ids: string[] = [];
    for await (const page of session.pages(async (cursor) => {
      const p = await session.rendersPage(project.id, { limit: 4, ...(cursor ? { cursor } : {}) });
      pages.push(p.data.length);
      return p;
    })) for (const r of page) ids.push(r.id);
    const expected = [...s.sim.world.renders.values()].filter((r) => r.projectId === project.id).map((r) => r.id);
    expect(new Set(ids)).toEqual(new Set(expected));
    expect(pages.slice(0, -1).some((n) => n < 4)).toBe(true); // a short page that was not the last
  });
});

describe('coalescing', () => {
  it('shares one HTTP call between identical in-flight GETs of one key, never across keys', async () => {
    // the three calls start in the same turn: the second finds the first in flight (no latency needed to overlap)
    await call(s.url, '/_sim/stats/reset', { method: 'POST' });
    const a = client.as(key);
    const b = client.as(s.keys[1]!.api_key);
    const [x, y, z] = await Promise.all([a.teams(), a.teams(), b.teams()]);
    expect(x).toEqual(y);
    expect(z).not.toEqual(x);
    expect((await call(s.url, '/_sim/stats')).body.requests['GET /v1/teams']).toBe(2);
  });
});

describe('contract', () => {
  const fake = Fastify();
  let url = '';
  beforeAll(async () => {
    fake.get('/v1/renders/:id', async () => ({ id: 'rend_1', name: 'x', status: 'paused', type: 'cloud', project: { id: 'proj_1', team: 'team_1' }, created_by: null, created_at: 1, updated_at: null, extra_field: true }));
    fake.get('/v1/me', async () => ({ id: 'user_1', email: null, created_at: 1, brand_new_field: { nested: 1 } }));
    fake.get('/v1/teams', () => new Promise(() => {})); // never answers
    url = await fake.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => { fake.server.closeAllConnections(); await fake.close(); });

  it('names an unknown enum value in a clear error', async () => {
    const c = new V1Client({ baseUrl: url, timeoutMs: 1000, retries: 0, retryBaseMs: 1 });
    const err = await c.as(key).render('rend_1').catch((e) => e);
    expect(err).toBeInstanceOf(V1ContractError);
    expect(err.message).toContain('status: unknown render status value "paused"');
    expect(err.message).not.toContain(key);
    await c.close();
  });

  it('tolerates unknown extra fields', async () => {
    const c = new V1Client({ baseUrl: url, timeoutMs: 1000, retries: 0, retryBaseMs: 1 });
    await expect(c.as(key).me()).resolves.toEqual({ id: 'user_1', email: null, created_at: 1 });
    await c.close();
  });

  it('times out a request that gets no answer', async () => {
    const c = new V1Client({ baseUrl: url, timeoutMs: 100, retries: 0, retryBaseMs: 1 });
    const err = await c.as(key).teams().catch((e) => e);
    expect(err).toBeInstanceOf(V1NetworkError);
    expect(err.timedOut).toBe(true);
    await c.close();
  });
});
