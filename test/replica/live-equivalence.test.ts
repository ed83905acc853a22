import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Render } from '../../src/v1/schemas.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * The index path and the live path answer alike while v1 changes under them: renders made directly in v1 (several
 * sharing one created_at), status changes, projects made in the dashboard; webhooks for one team delivered, dropped,
 * duplicated and out of order. After every batch of changes, once the staleness bound has passed, every query answers
 * the same on a gateway reading its index and on one reading v1 live.
 */
let sim: RunningSim;
let live: TestGateway;
let idx: TestGateway;
const SECRET = 'whsec_equivalence_0123456789';
const RECONCILE = 10_000;
let teamA: string;
let liveUser: string;
let idxUser: string;

beforeAll(async () => {
  sim = await startSim({ scale: 'small' });
  teamA = sim.keys[0]!.teams[0]!.id;
  for (const t of sim.sim.world.teams.keys()) sim.sim.world.setCredits(t, 1_000_000);
  live = await startGateway({ INDEX_ENABLED: 'false', CACHE_TTL_METADATA_MS: '0', CACHE_TTL_RENDER_ACTIVE_MS: '0', CACHE_TTL_RENDER_FINAL_MS: '0' },
    {}, { sim, simClock: true });
  idx = await startGateway({
    INDEX_MAX_STALENESS_MS: '2000', INDEX_RECONCILE_MS: String(RECONCILE), WEBHOOK_SECRETS: JSON.stringify({ [teamA]: SECRET }),
    // team A's webhooks are trusted (issue 43): a dropped delivery is found by its reconcile, within RECONCILE in all
    WEBHOOK_RECONCILE_MS: String(RECONCILE - 2000),
    // kept answers live as long as nothing they were read from changes: only exact invalidation keeps them right here
    CACHE_TTL_METADATA_MS: '0', ANSWER_CACHE_MAX_AGE_MS: '36000000',
  }, {}, { sim, simClock: true });
  // each store names the same v1 person with its own legacy user uuid: answers are compared with one put for the other
  liveUser = await live.addUser(0, 'ann@example.com');
  idxUser = await idx.addUser(0, 'ann@example.com');
  await idx.deps.replica!.syncNow(sim.keys[0]!.teams.map((t) => t.id));
});
afterAll(async () => {
  await live.close();
  await idx.close();
  await sim.sim.close();
});

const QUERIES = [
  '/renders?limit=-1&sort=id&fields=id,status,title,date_created,date_updated,project,account,user_created,data,download_ready',
  '/renders?limit=7&page=2&meta=*&fields=id,title',
  '/renders?sort=-title,id&limit=25&filter[status][_in]=draft,ready,processing,encoding&fields=id,status,title',
  '/renders?aggregate[count]=*&groupBy[]=status&groupBy[]=project',
  '/renders?aggregate[max]=date_updated&aggregate[countDistinct]=project&meta=total_count',
  '/renders?fields=id,project.title,project.account.name&limit=15&sort=date_created,id',
  '/projects?limit=-1&sort=id&fields=id,title,account,date_created,renders',
  '/templates?limit=-1&sort=id&fields=id,title,slug,description,date_created',
  '/accounts?fields=id,name,owner,projects,renders',
];

const person = () => sim.sim.world.authenticate(`Bearer ${sim.keys[0]!.api_key}`);
const reachable = () => new Set(sim.keys[0]!.teams.map((t) => t.id));
let hookSeq = 0;

async function deliver(render: V1Render): Promise<number> {
  const raw = JSON.stringify({ id: `hook_eq_${++hookSeq}`, event: 'render.status_changed', data: render, timestamp: sim.sim.world.clock.now() });
  const res = await idx.app.inject({
    method: 'POST', url: `/_gateway/webhooks/v1/${teamA}`, payload: raw,
    headers: { 'content-type': 'application/json', 'x-webhook-signature': `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`, 'x-webhook-id': `hook_eq_${hookSeq}` },
  });
  return res.statusCode;
}

const Mutation = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), project: fc.nat(), count: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 3000 }) }),
  fc.record({ kind: fc.constant('project' as const), team: fc.nat(), renders: fc.integer({ min: 0, max: 2 }) }),
);
const Hook = fc.constantFrom('deliver', 'drop', 'duplicate', 'older-after');

describe('index and live paths under random changes in v1', () => {
  it('answer every query alike once the bound has passed', async () => {
    await fc.assert(fc.asyncProperty(fc.array(Mutation, { minLength: 1, maxLength: 5 }), fc.array(Hook, { minLength: 8, maxLength: 8 }), async (mutations, hooks) => {
      const world = sim.sim.world;
      const before = new Map([...world.renders.values()].filter((r) => r.teamId === teamA).map((r) => [r.id, world.renderView(r)]));
      for (const m of mutations) {
        if (m.kind === 'create') {
          const projects = [...world.projects.values()].filter((p) => reachable().has(p.teamId));
          const p = projects[m.project % projects.length]!;
          // several renders in one instant: they share a created_at
          for (let i = 0; i < m.count; i++) world.createRender(person(), { project_id: p.id, name: `made ${hookSeq}-${i}` });
        } else if (m.kind === 'advance') {
          sim.sim.clock.advance(m.ms);
          world.tick();
        } else {
          const teams = [...reachable()];
          const p = world.addProject(teams[m.team % teams.length]!, `Dashboard ${world.projects.size}`);
          for (let i = 0; i < m.renders; i++) world.createRender(person(), { project_id: p.id, name: `in new project ${i}` });
        }
      }
      // team A's webhooks: each change delivered, dropped, delivered twice, or followed by its older state
      const changed = [...world.renders.values()].filter((r) => r.teamId === teamA)
        .map((r) => ({ now: world.renderView(r), was: before.get(r.id) }))
        .filter((c) => !c.was || c.was.status !== c.now.status);
      for (const [i, c] of changed.entries()) {
        const how = hooks[i % hooks.length];
        if (how === 'drop') continue;
        expect(await deliver(c.now)).toBe(204);
        if (how === 'duplicate') expect(await deliver(c.now)).toBe(204);
        if (how === 'older-after' && c.was) expect(await deliver(c.was)).toBe(204);
        // applied at once (before any read or sync), whole — renders new to the gateway too — and never moved back
        expect(idx.deps.replica!.team(teamA)!.render(c.now.id)?.render.status).toBe(c.now.status);
      }
      sim.sim.clock.advance(RECONCILE + 1);
      const tl = await live.login('ann@example.com');
      const ti = await idx.login('ann@example.com');
      for (const url of QUERIES) {
        const a = await live.get(url, tl);
        const b = await idx.get(url, ti);
        expect(b.status, url).toBe(200);
        expect(b.headers['x-gateway-source'], url).toBe('index');
        expect(JSON.parse(JSON.stringify(b.body).replaceAll(idxUser, liveUser)), url).toEqual(a.body);
        // asked again with nothing changed: the kept answer, the same
        const c = await idx.get(url, ti);
        expect(c.headers['x-gateway-answer-cache'], url).toBe('hit');
        expect(c.body, url).toEqual(b.body);
      }
    }), { numRuns: 12 });
    // twelve rounds of changes, syncs and paired reads on two paths: a budget for a loaded two-core machine, not a speed check
  }, 90_000);

  it('an older event after a newer one changes nothing, and a duplicate is applied once', async () => {
    const render = [...sim.sim.world.renders.values()].find((r) => r.teamId === teamA && r.status === 'complete')!;
    const view = sim.sim.world.renderView(render);
    const older = { ...view, status: 'processing' as const, updated_at: (view.updated_at ?? view.created_at) - 1000, output: undefined };
    const ti = await idx.login('ann@example.com');
    const id = (await idx.get(`/renders?filter[title][_eq]=${encodeURIComponent(view.name)}&fields=id&limit=1`, ti)).body.data[0].id;
    expect(await deliver(older)).toBe(204);
    const after = await idx.get(`/renders/${id}?fields=status`, ti);
    expect(after.body.data.status).toBe('complete');
    expect(after.headers['x-gateway-v1-calls']).toBe('0');
  });
});
