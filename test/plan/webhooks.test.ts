import { createHmac } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { derivedUuid } from '../../src/translate/ids.js';
import type { V1Render } from '../../src/v1/schemas.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

let sim: RunningSim;
let gw: TestGateway;
let token: string;
let base: string;
const secretA = 'whsec_team_a_0123456789';
const secretB = 'whsec_team_b_0123456789';
let teamA: string;
let teamB: string;
const dbFile = join(mkdtempSync(join(tmpdir(), 'gw-webhooks-')), 'gateway.db');
const env = () => ({ WEBHOOK_SECRETS: JSON.stringify({ [teamA]: secretA, [teamB]: secretB }), CACHE_TTL_RENDER_ACTIVE_MS: '600000', CACHE_TTL_RENDER_FINAL_MS: '600000', DATABASE_URL: dbFile });
beforeAll(async () => {
  sim = await startSim();
  [teamA, teamB] = sim.keys[0]!.teams.map((t) => t.id) as [string, string];
  gw = await startGateway(env(), {}, { sim, simClock: true });
  await gw.addUser(0, 'ann@example.com');
  token = await gw.login('ann@example.com');
  base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  await fetch(`${sim.url}/_sim/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ team_id: teamA, url: `${base}/_gateway/webhooks/v1/${teamA}`, secret: secretA }) });
});
afterAll(async () => { await gw.close(); await sim.sim.close(); });

const sign = (raw: string, s: string) => `sha256=${createHmac('sha256', s).update(raw).digest('hex')}`;
const deliver = (g: string, team: string, raw: string, headers: Record<string, string>) =>
  fetch(`${g}/_gateway/webhooks/v1/${team}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: raw });
const renderOf = (team: string): V1Render => sim.sim.world.renderView([...sim.sim.world.renders.values()].find((r) => r.teamId === team && r.status !== 'complete')!);
let seq = 0;
const event = (render: V1Render, over: Record<string, unknown> = {}) =>
  JSON.stringify({ id: `hook_t${++seq}`, event: 'render.status_changed', data: render, timestamp: sim.sim.world.clock.now(), ...over });

describe('webhook receiver', () => {
  it('keeps cached renders fresh: a status change shows at once, with no v1 call', async () => {
    await gw.get('/projects?limit=-1&fields=id,account', token);
    const project = [...sim.sim.world.projects.values()].find((p) => p.teamId === teamA)!;
    const created = await gw.app.inject({ method: 'POST', url: '/renders', headers: { authorization: `Bearer ${token}` }, payload: { project: derivedUuid('project', project.id), account: derivedUuid('account', teamA), data: {}, title: 'fresh' } });
    const id = created.json().data.id;
    expect((await gw.get(`/renders/${id}?fields=status`, token)).body.data.status).toBe('draft'); // now cached for 10 minutes
    // every render of the team known to the store (a render new to the gateway costs one v1 call: its owner is confirmed)
    await gw.deps.replica!.syncNow([teamA]);
    const callsBefore = (await (await fetch(`${sim.url}/_sim/stats`)).json() as any).requests['GET /v1/renders/:id'] ?? 0;
    sim.sim.clock.advance(10_000);
    sim.sim.world.tick();
    await sim.sim.webhooks.idle(); // every delivery answered: the receiver applies before it answers 204
    const after = await gw.get(`/renders/${id}?fields=status,output`, token);
    expect(after.body.data.status).toBe('complete');
    expect(after.body.data.output.master).toMatch(/^https:/);
    const callsAfter = (await (await fetch(`${sim.url}/_sim/stats`)).json() as any).requests['GET /v1/renders/:id'] ?? 0;
    expect(callsAfter).toBe(callsBefore);
  });

  it('rejects a wrong signature, a tampered body, no signature, and an unknown team URL', async () => {
    const raw = event(renderOf(teamA));
    expect((await deliver(base, teamA, raw, { 'x-webhook-signature': sign(raw, 'wrong') })).status).toBe(401);
    expect((await deliver(base, teamA, raw.replace('"status"', '"status" '), { 'x-webhook-signature': sign(raw, secretA) })).status).toBe(401);
    expect((await deliver(base, teamA, raw, {})).status).toBe(401);
    expect((await deliver(base, 'team_unknown', raw, { 'x-webhook-signature': sign(raw, secretA) })).status).toBe(401);
    expect((await deliver(base, teamA, raw, { 'x-webhook-signature': sign(raw, secretA) })).status).toBe(204);
  });

  it('forged: team A\'s secret cannot apply an event about team B\'s render, whatever the body claims', async () => {
    const spy = vi.spyOn(gw.deps.cache, 'replaceEverywhere');
    spy.mockClear();
    const victim = renderOf(teamB);
    const claimsA = { ...victim, name: 'pwned', project: { ...victim.project, team: teamA }, output: { master: 'https://evil.example/x.mp4' } };
    const raw = event(claimsA);
    const res = await deliver(base, teamA, raw, { 'x-webhook-signature': sign(raw, secretA) });
    expect(res.status).toBe(403);
    // and at B's URL with A's secret: the signature does not match B's
    const rawB = event(victim);
    expect((await deliver(base, teamB, rawB, { 'x-webhook-signature': sign(rawB, secretA) })).status).toBe(401);
    expect(spy.mock.calls.filter((c) => (c[1] as V1Render).id === victim.id)).toHaveLength(0);
    spy.mockRestore();
  });

  it('stale: a delivery outside the tolerance window is refused (timestamp 1, or six minutes off)', async () => {
    const r = renderOf(teamA);
    for (const timestamp of [1, sim.sim.world.clock.now() - 360_000, sim.sim.world.clock.now() + 360_000]) {
      const raw = event(r, { timestamp });
      const res = await deliver(base, teamA, raw, { 'x-webhook-signature': sign(raw, secretA) });
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).errors[0].message).toContain('tolerance');
    }
  });

  it('replayed: the same signed body under a new X-Webhook-ID, here or on another instance, is applied once', async () => {
    const other = await startGateway(env(), {}, { sim, simClock: true });
    const otherBase = await other.app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const spyA = vi.spyOn(gw.deps.cache, 'replaceEverywhere');
      const spyB = vi.spyOn(other.deps.cache, 'replaceEverywhere');
      spyA.mockClear();
      const raw = event({ ...renderOf(teamA), updated_at: (sim.sim.world.clock.now() / 1000) + 1 });
      for (let i = 0; i < 3; i++) expect((await deliver(base, teamA, raw, { 'x-webhook-id': `hook_new_${i}`, 'x-webhook-signature': sign(raw, secretA) })).status).toBe(204);
      expect((await deliver(otherBase, teamA, raw, { 'x-webhook-id': 'hook_new_9', 'x-webhook-signature': sign(raw, secretA) })).status).toBe(204);
      const mine = (spy: typeof spyA) => spy.mock.calls.filter((c) => (c[1] as V1Render).id === JSON.parse(raw).data.id);
      expect(mine(spyA)).toHaveLength(1);
      expect(mine(spyB)).toHaveLength(0);
    } finally {
      await other.close();
    }
  });

  it('out of order: an older event never overwrites newer state, nor moves a render back in its lifecycle', async () => {
    const spy = vi.spyOn(gw.deps.cache, 'replaceEverywhere');
    spy.mockClear();
    // a render the simulator is done with, once its own deliveries have landed (none can interleave)
    await sim.sim.webhooks.idle();
    const delivered = new Set(sim.sim.webhooks.deliveries.map((d) => d.render_id));
    const used = renderOf(teamA).id; // the other tests' render
    const r = sim.sim.world.renderView([...sim.sim.world.renders.values()].find((x) => x.teamId === teamA && x.status === 'failed' && !delivered.has(x.id) && x.id !== used)!);
    const t = Math.floor(sim.sim.world.clock.now() / 1000) + 100;
    const send = async (status: V1Render['status'], updatedAt: number) => {
      const raw = event({ ...r, status, updated_at: updatedAt });
      expect((await deliver(base, teamA, raw, { 'x-webhook-signature': sign(raw, secretA) })).status).toBe(204);
    };
    await send('processing', t);
    await send('queued', t - 5); // older
    await send('queued', t); // same time, earlier in the lifecycle
    await send('complete', t + 5);
    await send('processing', t + 10); // newer time, but complete is final
    // (the simulator's own deliveries of other renders may arrive meanwhile: only this render's are counted)
    expect(spy.mock.calls.filter((c) => (c[1] as V1Render).id === r.id).map((c) => (c[1] as V1Render).status)).toEqual(['processing', 'complete']);
  });
});
