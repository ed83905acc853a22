import { createServer, request as httpRequest, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CallMeter } from '../../src/live/meter.js';
import { V1Client, type V1CallInfo } from '../../src/v1/client.js';
import { V1ServerError } from '../../src/v1/errors.js';
import { SpareRetries } from '../../src/v1/spare-retries.js';
import { call, startSim, type RunningSim } from '../helpers/sim.js';

/** The spare GET attempts of one request past V1_RETRIES: against the simulator's fault injection, sleeps recorded. */
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

const fault = (rules: unknown[]) => call(s.url, '/_sim/faults', { method: 'POST', body: { rules } });

/** A request's meter with `n` spare retries, its exchanges recorded. */
function request(n: number) {
  const spares = new SpareRetries(n);
  const meter = new CallMeter(1000, undefined, spares);
  const calls: V1CallInfo[] = [];
  const onCall = meter.onCall.bind(meter);
  meter.onCall = (c) => { calls.push(c); onCall(c); };
  return { spares, meter, calls, v1: client.as(key, meter) };
}

describe('spare retries of a request', () => {
  it('once v1 has answered the request, a GET past its own retries takes spares, waiting as long as its last retry', async () => {
    const r = request(10);
    await r.v1.teams(); // v1 answers: flaky, not down
    await fault([{ kind: 'error500', count: 5, path: '/v1/me' }]);
    r.calls.length = 0;
    expect((await r.v1.me()).id).toBe(s.keys[0]!.user_id);
    expect(r.calls.map((c) => [c.attempt, c.status])).toEqual([[0, 500], [1, 500], [2, 500], [3, 500], [4, 500], [5, 200]]);
    expect(sleeps).toEqual([75, 150, 300, 300, 300]);
    expect(r.spares.used).toBe(2);
    expect(r.meter.summary()).toMatchObject({ spare_retries: 2 });
  });

  it('before v1 has answered the request none is given: a v1 that answers nothing fails as fast as before', async () => {
    const r = request(10);
    await fault([{ kind: 'reset', path: '/v1/me' }]);
    await expect(r.v1.me()).rejects.toBeTruthy();
    expect(r.calls).toHaveLength(4);
    expect(r.spares.used).toBe(0);
  });

  it('a call takes at most V1_RETRIES spares; the request shares its budget between its calls', async () => {
    const r = request(4);
    await r.v1.teams();
    await fault([{ kind: 'error500', path: '/v1/me' }]);
    r.calls.length = 0;
    await expect(r.v1.me()).rejects.toBeInstanceOf(V1ServerError);
    expect(r.calls).toHaveLength(7); // 1 + 3 retries + 3 spares
    expect(r.spares.used).toBe(3);
    r.calls.length = 0;
    await expect(r.v1.me()).rejects.toBeInstanceOf(V1ServerError);
    expect(r.calls).toHaveLength(5); // the one spare left
    r.calls.length = 0;
    await expect(r.v1.me()).rejects.toBeInstanceOf(V1ServerError);
    expect(r.calls).toHaveLength(4); // none left
    expect(r.meter.summary()).toMatchObject({ spare_retries: 4 });
  });

  it('a 429 past its own retries takes spares and still waits its Retry-After; one asking too long a wait takes none', async () => {
    const r = request(10);
    await r.v1.teams();
    await fault([{ kind: 'rate_limit', count: 5, path: '/v1/me', retry_after_s: 2 }]);
    r.calls.length = 0;
    expect((await r.v1.me()).id).toBe(s.keys[0]!.user_id);
    expect(r.calls.map((c) => c.status)).toEqual([429, 429, 429, 429, 429, 200]);
    expect(sleeps).toEqual([2000, 2000, 2000, 2000, 2000]);
    expect(r.spares.used).toBe(2);
    sleeps.length = 0;
    await fault([{ kind: 'rate_limit', path: '/v1/me', retry_after_s: 31 }]);
    r.calls.length = 0;
    await expect(r.v1.me()).rejects.toBeTruthy();
    expect([r.calls.length, sleeps.length, r.spares.used]).toEqual([1, 0, 2]);
  });

  it('a call that times out takes no spare: a v1 that hangs holds a read no longer than before', async () => {
    // a proxy to the simulator that never answers /v1/me
    const target = new URL(s.url);
    const hung: ServerResponse[] = [];
    const proxy = createServer((req, res) => {
      if (req.url?.startsWith('/v1/me')) { hung.push(res); return; }
      const up = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      req.pipe(up);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const slow = new V1Client({
      baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, timeoutMs: 100, retries: 3, retryBaseMs: 100,
      sleep: async (ms) => { sleeps.push(ms); }, random: () => 0.5,
    });
    try {
      const spares = new SpareRetries(10);
      const meter = new CallMeter(1000, undefined, spares);
      const v1 = slow.as(key, meter);
      await v1.teams(); // v1 has answered this request
      await expect(v1.me()).rejects.toMatchObject({ timedOut: true });
      expect(hung).toHaveLength(4); // 1 + its 3 retries, no spare
      expect(spares.used).toBe(0);
    } finally {
      for (const res of hung) res.destroy();
      await slow.close();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('a POST is never tried again, spares or not', async () => {
    const r = request(10);
    await r.v1.teams();
    await fault([{ kind: 'error500', path: '/v1/renders', method: 'POST' }]);
    r.calls.length = 0;
    const project = [...s.sim.world.projects.values()].find((p) => p.teamId === s.keys[0]!.teams[0]!.id)!;
    await expect(r.v1.createRender({ project_id: project.id } as never)).rejects.toBeInstanceOf(V1ServerError);
    expect(r.calls).toHaveLength(1);
    expect(r.spares.used).toBe(0);
  });
});
