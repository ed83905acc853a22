import { createHmac } from 'node:crypto';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startSim, type RunningSim } from '../helpers/sim.js';

interface Received { headers: Record<string, string>; raw: string; at: number }

describe('webhooks', () => {
  let s: RunningSim;
  const receiver = Fastify();
  const got: Received[] = [];
  let failFirst = 0;
  /** Every delay the dispatcher asked for between attempts. */
  const waits: number[] = [];
  let receiverUrl = '';
  beforeAll(async () => {
    s = await startSim({ webhooks: { backoffMs: 40, sleep: async (ms) => { waits.push(ms); } } });
    receiver.addContentTypeParser('application/json', { parseAs: 'string' }, (_r, body, done) => done(null, body));
    receiver.post('/hook', async (req, reply) => {
      got.push({ headers: req.headers as Record<string, string>, raw: req.body as string, at: Date.now() });
      if (failFirst > 0) { failFirst--; return reply.status(503).send('try later'); }
      return reply.status(204).send();
    });
    receiverUrl = await receiver.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => { await s.sim.close(); await receiver.close(); });

  it('signs each delivery over the raw body and sends the documented headers and events', async () => {
    const team = s.keys[0]!.teams[0]!.id;
    const reg = await call(s.url, '/_sim/webhooks', { method: 'POST', body: { team_id: team, url: `${receiverUrl}/hook` } });
    expect(reg.body.secret).toMatch(/^whsec_/);
    const project = [...s.sim.world.projects.values()].find((p) => p.teamId === team)!;
    const created = await call(s.url, '/v1/renders', { method: 'POST', key: s.keys[0]!.api_key, body: { name: 'hooked', project_id: project.id } });
    got.length = 0;
    s.sim.clock.advance(10_000);
    await call(s.url, '/v1/me', { key: s.keys[0]!.api_key }); // any request ticks the lifecycle too
    await s.sim.webhooks.idle();
    const mine = got.filter((g) => JSON.parse(g.raw).data.id === created.body.id);
    const events = mine.map((g) => JSON.parse(g.raw).event);
    expect(events.filter((e) => e === 'render.status_changed')).toHaveLength(5);
    expect(events).toContain('render.complete');
    expect(events).not.toContain('render.failed');
    for (const g of mine) {
      const body = JSON.parse(g.raw);
      const expected = `sha256=${createHmac('sha256', reg.body.secret).update(g.raw).digest('hex')}`;
      expect(g.headers['x-webhook-signature']).toBe(expected);
      expect(g.headers['x-webhook-id']).toBe(body.id);
      expect(body.id).toMatch(/^hook_/);
      expect(g.headers['x-webhook-timestamp']).toBe(String(body.timestamp));
      expect(g.headers['user-agent']).toMatch(/^[A-Za-z]+-Webhooks\/1\.0$/);
      expect(body.data).toMatchObject({ id: created.body.id, project: { id: project.id, team } });
    }
    const complete = mine.find((g) => JSON.parse(g.raw).event === 'render.complete')!;
    expect(JSON.parse(complete.raw).data.output.master).toMatch(/^https:/);
  });

  it('retries up to five attempts with exponential backoff and the same X-Webhook-ID', async () => {
    const team = s.keys[0]!.teams[0]!.id;
    const project = [...s.sim.world.projects.values()].find((p) => p.teamId === team)!;
    // a dedicated endpoint subscribed to render.failed only
    const reg = await call(s.url, '/_sim/webhooks', { method: 'POST', body: { team_id: team, url: `${receiverUrl}/hook`, events: ['render.failed'] } });
    expect(reg.status).toBe(200);
    const created = await call(s.url, '/v1/renders', { method: 'POST', key: s.keys[0]!.api_key, body: { name: 'x [sim:fail]', project_id: project.id } });
    got.length = 0;
    waits.length = 0;
    failFirst = 100; // every attempt fails
    s.sim.clock.advance(10_000);
    await call(s.url, '/v1/me', { key: s.keys[0]!.api_key });
    await s.sim.webhooks.idle();
    failFirst = 0;
    const allFailed = got.filter((g) => JSON.parse(g.raw).event === 'render.failed' && JSON.parse(g.raw).data.id === created.body.id);
    // two endpoints are subscribed to render.failed: each delivery is attempted five times under one id
    const ids = new Set(allFailed.map((g) => g.headers['x-webhook-id']));
    expect(ids.size).toBe(2);
    const failed = allFailed.filter((g) => g.headers['x-webhook-id'] === allFailed[0]!.headers['x-webhook-id']);
    expect(failed).toHaveLength(5);
    expect(allFailed).toHaveLength(10);
    // exponential backoff from backoffMs, between attempts of each delivery (recorded by the injected sleep, not timed)
    // every delivery that failed throughout waited 40, 80, 160, 320 ms (no other delay was asked for)
    const count = (ms: number) => waits.filter((w) => w === ms).length;
    expect(count(40)).toBeGreaterThanOrEqual(2);
    expect([count(80), count(160), count(320)]).toEqual([count(40), count(40), count(40)]);
    expect(waits.length).toBe(4 * count(40));
    const record = s.sim.webhooks.deliveries.find((d) => d.id === failed[0]!.headers['x-webhook-id'])!;
    expect(record.delivered).toBe(false);
    expect(record.attempts.map((a) => a.status)).toEqual([503, 503, 503, 503, 503]);
  });

  it('gives up on an attempt after the per-attempt timeout', async () => {
    const slow = Fastify();
    slow.post('/slow', async () => new Promise(() => {}));
    const slowUrl = await slow.listen({ port: 0, host: '127.0.0.1' });
    const s2 = await startSim({ webhooks: { backoffMs: 10, timeoutMs: 100, attempts: 2 } });
    try {
      const team = s2.keys[0]!.teams[0]!.id;
      await call(s2.url, '/_sim/webhooks', { method: 'POST', body: { team_id: team, url: `${slowUrl}/slow`, events: ['render.complete'] } });
      const project = [...s2.sim.world.projects.values()].find((p) => p.teamId === team)!;
      await call(s2.url, '/v1/renders', { method: 'POST', key: s2.keys[0]!.api_key, body: { name: 't', project_id: project.id } });
      s2.sim.clock.advance(10_000);
      s2.sim.world.tick();
      await s2.sim.webhooks.idle();
      const d = s2.sim.webhooks.deliveries.find((x) => x.url.endsWith('/slow'))!;
      expect(d.attempts.map((a) => a.error)).toEqual(['timeout', 'timeout']);
    } finally {
      await s2.sim.close();
      slow.server.closeAllConnections();
      await slow.close();
    }
  });
});
