import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { derivedUuid } from '../../src/translate/ids.js';
import type { V1Render } from '../../src/v1/schemas.js';
import { databases } from '../helpers/databases.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * A render belongs to one team and project for life. A webhook signed with team A's secret can say nothing about team
 * B's renders, nor pin a render with a state from the future, nor bring in a render v1 does not know — on SQLite and on
 * PostgreSQL; and a store poisoned before these checks existed is repaired from v1.
 */
const secretA = 'whsec_owner_a_0123456789';
const secretB = 'whsec_owner_b_0123456789';
const sign = (raw: string, s: string) => `sha256=${createHmac('sha256', s).update(raw).digest('hex')}`;

for (const db of await databases()) {
  describe(`webhook ownership (${db.name})`, () => {
    let sim: RunningSim;
    let gw: TestGateway;
    let base: string;
    let token: string;
    let teamA: string;
    let teamB: string;
    let seq = 0;

    beforeAll(async () => {
      sim = await startSim();
      [teamA, teamB] = sim.keys[0]!.teams.map((t) => t.id) as [string, string];
      gw = await startGateway({ DATABASE_URL: db.url, WEBHOOK_SECRETS: JSON.stringify({ [teamA]: secretA, [teamB]: secretB }), V1_TIMESTAMP_UNIT: 's' },
        {}, { sim, simClock: true });
      await gw.addUser(0, 'owner@example.com');
      token = await gw.login('owner@example.com');
      base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
      await gw.deps.replica!.syncNow([teamB]); // B's renders are in the store; A's are not (yet)
    });
    afterAll(async () => { await gw.close(); await sim.sim.close(); });

    const now = () => sim.sim.world.clock.now();
    const deliver = (team: string, render: V1Render, secret: string, timestamp = now()) => {
      const raw = JSON.stringify({ id: `hook_own_${db.name}_${++seq}`, event: 'render.status_changed', data: render, timestamp });
      return fetch(`${base}/_gateway/webhooks/v1/${team}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-webhook-signature': sign(raw, secret) }, body: raw });
    };
    const renderIn = (team: string, skip: readonly string[] = []) =>
      sim.sim.world.renderView([...sim.sim.world.renders.values()].find((r) => r.teamId === team && !skip.includes(r.id))!);
    const projectOf = (team: string) => sim.sim.world.renderView([...sim.sim.world.renders.values()].find((r) => r.teamId === team)!).project;
    const metric = async () => {
      const text = await gw.deps.metrics.registry.metrics();
      return Number(/gateway_webhook_owner_refusals_total (\d+)/.exec(text)?.[1] ?? 'NaN');
    };

    it('refuses (403) team A\'s event about team B\'s render under A\'s project, logs and counts it; B keeps its render', async () => {
      const victim = renderIn(teamB);
      const before = await metric();
      const forged: V1Render = { ...victim, name: 'moved by A', project: projectOf(teamA), updated_at: Math.floor(now() / 1000) };
      const res = await deliver(teamA, forged, secretA);
      expect(res.status).toBe(403);
      expect(((await res.json()) as any).errors[0].extensions.code).toBe('FORBIDDEN');
      expect(await metric()).toBe(before + 1);
      expect(gw.logs.join('')).toContain('another team or project');
      expect(await gw.deps.replica!.store.ownerOf(victim.id)).toEqual({ team: teamB, project: victim.project.id });
      const list = await gw.get('/renders?limit=-1&fields=id,title,project', token);
      expect(list.status).toBe(200);
      const seen = list.body.data.find((r: { id: string }) => r.id === derivedUuid('render', victim.id));
      expect(seen).toMatchObject({ title: victim.name, project: derivedUuid('project', victim.project.id) });
    });

    it('refuses (400) a state updated after the delivery (beyond the tolerance), in the units V1_TIMESTAMP_UNIT names', async () => {
      const own = renderIn(teamA);
      const far = await deliver(teamA, { ...own, updated_at: 4_102_444_800 }, secretA); // 2100-01-01, in seconds
      expect(far.status).toBe(400);
      expect(((await far.json()) as any).errors[0].message).toContain('updated_at');
      // a state a few seconds old is taken (seconds read as seconds, the delivery's timestamp as milliseconds)
      const fine = await deliver(teamA, { ...own, updated_at: Math.floor(now() / 1000) - 5 }, secretA);
      expect(fine.status).toBe(204);
    });

    it('refuses (403) a render id v1 does not know, even in the sender\'s own project; nothing of it enters the store', async () => {
      const own = renderIn(teamA);
      const res = await deliver(teamA, { ...own, id: 'rend_not_in_v1_0001', name: 'invented' }, secretA);
      expect(res.status).toBe(403);
      expect(await gw.deps.replica!.store.ownerOf('rend_not_in_v1_0001')).toBeUndefined();
    });

    it('answers 503 (deliver again) when v1 does not show a render born a moment ago yet, not a 403 for good', async () => {
      const own = renderIn(teamA);
      const born = Math.floor(now() / 1000);
      const res = await deliver(teamA, { ...own, id: 'rend_just_born_0001', created_at: born, updated_at: born }, secretA);
      expect(res.status).toBe(503);
      expect(await gw.deps.replica!.store.ownerOf('rend_just_born_0001')).toBeUndefined();
    });

    it('answers 503 while v1 cannot confirm a new render (so v1 delivers again), and applies the same delivery once it can', async () => {
      // a render made in v1 a moment ago, that no sync can have brought in (v1 fails every call meanwhile)
      const person = sim.sim.world.authenticate(`Bearer ${sim.keys[0]!.api_key}`);
      const faults = await fetch(`${sim.url}/_sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rules: [{ kind: 'error500', path: '/v1' }] }) });
      expect(faults.status).toBe(200);
      const fresh = sim.sim.world.createRender(person, { project_id: projectOf(teamA).id, name: 'born a moment ago' });
      const raw = JSON.stringify({ id: `hook_own_${db.name}_retry`, event: 'render.status_changed', data: fresh, timestamp: now() });
      const send = () => fetch(`${base}/_gateway/webhooks/v1/${teamA}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-webhook-signature': sign(raw, secretA) }, body: raw });
      try {
        const down = await send();
        expect(down.status).toBe(503);
        expect(((await down.json()) as any).errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
      } finally {
        await fetch(`${sim.url}/_sim/faults`, { method: 'DELETE' });
      }
      expect((await send()).status).toBe(204); // the same delivery id: it was not recorded as applied
      expect(await gw.deps.replica!.store.ownerOf(fresh.id)).toEqual({ team: teamA, project: fresh.project.id });
    });

    it('the store never rewrites an owner, whatever the state\'s recency', async () => {
      const victim = renderIn(teamB);
      await gw.deps.replica!.store.putRenders(teamA, [{ ...victim, name: 'moved', project: projectOf(teamA), updated_at: 4_102_444_800 }]);
      expect(await gw.deps.replica!.store.ownerOf(victim.id)).toEqual({ team: teamB, project: victim.project.id });
      const [row] = await gw.deps.replica!.store.rendersById([victim.id]);
      expect(row!.render.name).toBe(victim.name);
    });

    it('repairs a store poisoned before these checks: v1\'s owner and state written back, the pinned version forgotten', async () => {
      const victim = renderIn(teamB, [renderIn(teamB).id]);
      const kysely = gw.deps.db.kysely;
      const poisoned = JSON.stringify({ ...victim, name: 'poisoned', project: projectOf(teamA), updated_at: 4_102_444_800 });
      await sql`update index_renders set team_id = ${teamA}, project_id = ${projectOf(teamA).id}, updated_at = ${4_102_444_800}, render = ${poisoned}
        where render_id = ${victim.id}`.execute(kysely);
      await sql`insert into render_versions (v1_id, updated_at, rank) values (${victim.id}, ${4_102_444_800_000}, ${9})`.execute(kysely);
      const { verifyTeam, repair } = await import('../../src/replica/sync/verify.js');
      const sessionFor = async (team: string) => (await gw.deps.readers.sessionFor(team, { onCall: () => undefined }))?.session;
      const drift = [...await verifyTeam(gw.deps.replica!.store, (await sessionFor(teamA))!, teamA), ...await verifyTeam(gw.deps.replica!.store, (await sessionFor(teamB))!, teamB)];
      expect(drift.find((d) => d.id === victim.id && d.team === teamB)?.kind).toBe('missing render');
      const done = await repair(gw.deps.replica!.store, drift, sessionFor, now());
      expect(done.rewritten).toBeGreaterThanOrEqual(1);
      expect([...done.teams].sort()).toEqual([teamA, teamB].sort());
      expect(await gw.deps.replica!.store.ownerOf(victim.id)).toEqual({ team: teamB, project: victim.project.id });
      const [row] = await gw.deps.replica!.store.rendersById([victim.id]);
      expect(row!.render.name).toBe(victim.name);
      const version = await sql<{ n: number }>`select count(*) as n from render_versions where v1_id = ${victim.id}`.execute(kysely);
      expect(Number(version.rows[0]!.n)).toBe(0);
    });
  });
}
