import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { derivedUuid } from '../../src/translate/ids.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim } from '../helpers/sim.js';

let gw: TestGateway;
let token: string;
let base: string;
const secret = 'whsec_test_secret_0123456789';
let teamId: string;
beforeAll(async () => {
  // the simulator's team ids are deterministic per seed: learn them first, then configure the secrets
  const probe = await startSim();
  teamId = probe.keys[0]!.teams[0]!.id;
  await probe.sim.close();
  gw = await startGateway({ WEBHOOK_SECRETS: JSON.stringify({ [teamId]: secret }), CACHE_TTL_RENDER_ACTIVE_MS: '600000', CACHE_TTL_RENDER_FINAL_MS: '600000' });
  await gw.addUser(0, 'ann@example.com');
  token = await gw.login('ann@example.com');
  base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  await fetch(`${gw.s.url}/_sim/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ team_id: teamId, url: `${base}/_gateway/webhooks/v1`, secret }) });
});
afterAll(async () => gw.close());

const sign = (raw: string, s = secret) => `sha256=${createHmac('sha256', s).update(raw).digest('hex')}`;
const deliver = (raw: string, headers: Record<string, string>) => fetch(`${base}/_gateway/webhooks/v1`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: raw });

describe('webhook receiver', () => {
  it('keeps cached renders fresh: a status change shows at once', async () => {
    await gw.get('/projects?limit=-1&fields=id,account', token);
    const project = [...gw.s.sim.world.projects.values()].find((p) => p.teamId === teamId)!;
    const created = await gw.app.inject({ method: 'POST', url: '/renders', headers: { authorization: `Bearer ${token}` }, payload: { project: derivedUuid('project', project.id), account: derivedUuid('account', teamId), data: {}, title: 'fresh' } });
    const id = created.json().data.id;
    expect((await gw.get(`/renders/${id}?fields=status`, token)).body.data.status).toBe('draft'); // now cached for 10 minutes
    const callsBefore = (await (await fetch(`${gw.s.url}/_sim/stats`)).json() as any).requests['GET /v1/renders/:id'] ?? 0;
    gw.s.sim.clock.advance(10_000);
    gw.s.sim.world.tick();
    await gw.s.sim.webhooks.idle();
    await new Promise((r) => setTimeout(r, 50)); // the cache work runs after the 204
    const after = await gw.get(`/renders/${id}?fields=status,output`, token);
    expect(after.body.data.status).toBe('complete');
    expect(after.body.data.output.master).toMatch(/^https:/);
    const callsAfter = (await (await fetch(`${gw.s.url}/_sim/stats`)).json() as any).requests['GET /v1/renders/:id'] ?? 0;
    expect(callsAfter).toBe(callsBefore); // served from the cache the webhook refreshed
  });

  it('rejects a wrong signature, a tampered body and an unknown team', async () => {
    const render = gw.s.sim.world.renderView([...gw.s.sim.world.renders.values()].find((r) => r.teamId === teamId)!);
    const raw = JSON.stringify({ id: 'hook_x1', event: 'render.status_changed', data: render, timestamp: Date.now() });
    expect((await deliver(raw, { 'x-webhook-id': 'hook_x1', 'x-webhook-signature': sign(raw, 'wrong') })).status).toBe(401);
    expect((await deliver(raw.replace('"status"', '"status" '), { 'x-webhook-id': 'hook_x1', 'x-webhook-signature': sign(raw) })).status).toBe(401);
    expect((await deliver(raw, { 'x-webhook-id': 'hook_x1' })).status).toBe(401);
    const other = JSON.stringify({ id: 'hook_x2', event: 'render.status_changed', data: { ...render, project: { ...render.project, team: 'team_unknown' } }, timestamp: 1 });
    expect((await deliver(other, { 'x-webhook-id': 'hook_x2', 'x-webhook-signature': sign(other) })).status).toBe(401);
    expect((await deliver(raw, { 'x-webhook-id': 'hook_x1', 'x-webhook-signature': sign(raw) })).status).toBe(204);
  });

  it('drops duplicates on X-Webhook-ID (replays change nothing)', async () => {
    const spy = vi.spyOn(gw.deps.cache, 'replaceEverywhere');
    const render = gw.s.sim.world.renderView([...gw.s.sim.world.renders.values()].find((r) => r.teamId === teamId)!);
    const raw = JSON.stringify({ id: 'hook_dup', event: 'render.complete', data: render, timestamp: Date.now() });
    for (let i = 0; i < 3; i++) expect((await deliver(raw, { 'x-webhook-id': 'hook_dup', 'x-webhook-signature': sign(raw) })).status).toBe(204);
    await new Promise((r) => setTimeout(r, 50));
    expect(spy).toHaveBeenCalledTimes(1);
  });
});
