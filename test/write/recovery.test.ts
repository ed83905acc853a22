import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { derivedUuid } from '../../src/translate/ids.js';
import { startSim, type RunningSim } from '../helpers/sim.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * The write races of the hardening issue, under the simulator's faults: a lost POST answer adopts only a render it
 * may really have created; an unknown outcome retried with its key looks before it creates; a claim left by a crashed
 * instance is taken over once its lease runs out.
 */
let sim: RunningSim;
let gw: TestGateway;
let token: string;
let project: { id: string; teamId: string; name: string };
const dbFile = join(mkdtempSync(join(tmpdir(), 'gw-recovery-')), 'gateway.db');
beforeAll(async () => {
  sim = await startSim();
  gw = await startGateway({ V1_TIMEOUT_MS: '2000', V1_RETRIES: '0', DATABASE_URL: dbFile }, {}, { sim, simClock: true });
  await gw.addUser(0, 'ann@example.com');
  await gw.addUser(1, 'bob@example.com');
  token = await gw.login('ann@example.com');
  await gw.get('/projects?limit=-1&fields=id', token);
  await gw.get('/accounts?limit=-1&fields=id', token);
  const reach = new Set(sim.keys[0]!.teams.map((t) => t.id));
  project = [...sim.sim.world.projects.values()].find((p) => reach.has(p.teamId) && sim.sim.world.teams.get(p.teamId)!.credits > 0) as never;
});
afterAll(async () => { await gw.close(); await sim.sim.close(); });
beforeEach(async () => { await fetch(`${sim.url}/_sim/faults`, { method: 'DELETE' }); });

const post = (g: TestGateway, tok: string, payload: unknown, headers: Record<string, string> = {}) =>
  g.app.inject({ method: 'POST', url: '/renders', headers: { authorization: `Bearer ${tok}`, ...headers }, payload: payload as object });
const body = (title: string, data: Record<string, unknown> = {}) => ({ project: derivedUuid('project', project.id), account: derivedUuid('account', project.teamId), title, data });
const named = (name: string) => [...sim.sim.world.renders.values()].filter((r) => r.projectId === project.id && r.name === name);
const fault = (rules: unknown[]) => fetch(`${sim.url}/_sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ rules }) });
const once = (kind: string, method: string, path: string) => fault([{ kind, method, path, count: 1 }]);
/** A render created directly in v1 by the person at `index` (another client of the same v1). */
const createInV1 = async (index: number, name: string) => {
  const res = await fetch(`${sim.url}/v1/renders`, { method: 'POST', headers: { authorization: `Bearer ${sim.keys[index]!.api_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ name, project_id: project.id }) });
  expect(res.status).toBe(201);
  return (await res.json() as { id: string }).id;
};
const dataOf = async (uuid: string) => (await gw.get(`/renders/${uuid}?fields=data`, token)).body.data.data;

describe('lost-response recovery adopts only a render the request may have created', () => {
  it('never adopts another request\'s render of the same name, nor touches its data', async () => {
    const first = await post(gw, token, body('Same name', { n: 1 }));
    expect(first.statusCode).toBe(200);
    await once('reset', 'POST', '/v1/renders'); // this attempt never reaches v1
    const second = await post(gw, token, body('Same name', { n: 2 }));
    expect(second.statusCode).toBe(503);
    expect(second.json().errors[0].extensions.outcome).toBe('not_created');
    expect(await dataOf(first.json().data.id)).toEqual({ n: 1 });
    expect(named('Same name')).toHaveLength(1);
  });

  it('adopts the render its own lost answer created', async () => {
    await once('lost_response', 'POST', '/v1/renders');
    const res = await post(gw, token, body('Lost answer', { n: 3 }));
    expect(res.statusCode).toBe(200);
    expect(named('Lost answer')).toHaveLength(1);
    expect(res.json().data.id).toBe(derivedUuid('render', named('Lost answer')[0]!.id));
    expect(await dataOf(res.json().data.id)).toEqual({ n: 3 });
  });

  it('never adopts a render of the same name created by another v1 user, or before the request', async () => {
    await createInV1(1, 'Someone else'); // bob's key reaches the team too? created_by is bob either way
    await once('reset', 'POST', '/v1/renders');
    const res = await post(gw, token, body('Someone else', { n: 4 }));
    expect(res.statusCode).toBe(503);
    expect(res.json().errors[0].extensions.outcome).toBe('not_created');

    await createInV1(0, 'Made earlier'); // ann's own key, but long before the request
    await fetch(`${sim.url}/_sim/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: 60_000 }) });
    await once('reset', 'POST', '/v1/renders');
    const late = await post(gw, token, body('Made earlier', { n: 5 }));
    expect(late.statusCode).toBe(503);
    expect(late.json().errors[0].extensions.outcome).toBe('not_created');
  });

  it('answers "outcome unknown" rather than guess between two candidates', async () => {
    await createInV1(0, 'Twice'); // made by ann's key at the same instant (the manual clock), claimed by nobody
    await fault([{ kind: 'lost_response', method: 'POST', path: '/v1/renders', count: 1 }]);
    const res = await post(gw, token, body('Twice', { n: 6 }));
    expect(res.statusCode).toBe(503);
    expect(res.json().errors[0].extensions.outcome).toBe('unknown');
    expect(named('Twice')).toHaveLength(2);
  });
});

describe('an unknown outcome retried with the same Idempotency-Key', () => {
  it('finds the render the first attempt created instead of creating a second', async () => {
    await fault([{ kind: 'lost_response', method: 'POST', path: '/v1/renders', count: 1 }, { kind: 'error500', method: 'GET', path: '/v1/renders' }]);
    const key = `unknown-${Math.random()}`;
    const first = await post(gw, token, body('Unknown then found', { n: 7 }), { 'idempotency-key': key });
    expect(first.statusCode).toBe(503);
    expect(first.json().errors[0].extensions.outcome).toBe('unknown');
    await fetch(`${sim.url}/_sim/faults`, { method: 'DELETE' });
    const retry = await post(gw, token, body('Unknown then found', { n: 7 }), { 'idempotency-key': key });
    expect(retry.statusCode).toBe(200);
    expect(named('Unknown then found')).toHaveLength(1);
    expect(retry.json().data.id).toBe(derivedUuid('render', named('Unknown then found')[0]!.id));
    // and from now on the key replays that answer
    const replay = await post(gw, token, body('Unknown then found', { n: 7 }), { 'idempotency-key': key });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(retry.json());
  });
});

describe('Idempotency-Keys', () => {
  it('belong to one user: the same key and body from another user creates that user\'s own render', async () => {
    const bob = await gw.login('bob@example.com');
    expect(new Set(sim.keys[1]!.teams.map((t) => t.id)).has(project.teamId)).toBe(true); // both reach the project
    const key = `shared-${Math.random()}`;
    const a = await post(gw, token, body('Shared key'), { 'idempotency-key': key });
    const b = await post(gw, bob, body('Shared key'), { 'idempotency-key': key });
    expect(a.statusCode).toBe(200);
    expect(b.statusCode).toBe(200);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.json().data.id).not.toBe(a.json().data.id);
    expect(named('Shared key')).toHaveLength(2);
  });

  it('a claim left pending by a crashed instance is taken over once its lease runs out, finding what it created', async () => {
    const key = `crash-${Math.random()}`;
    const userId = (await gw.deps.users.byEmail('ann@example.com'))!.id;
    const { bodyHash } = await import('../../src/write/idempotency.js');
    const payload = body('Crashed mid-way', { n: 8 });
    // the crashed instance: it claimed the key, recorded its attempt, v1 created the render — then kill -9
    const now = sim.sim.world.clock.now();
    expect((await gw.deps.idempotency.claim(userId, key, bodyHash(payload), 86_400_000, 60_000)).kind).toBe('claimed');
    await gw.deps.idempotency.attempt(userId, key, { startedAt: now, projectV1: project.id, name: 'Crashed mid-way' });
    await createInV1(0, 'Crashed mid-way');
    // a restarted instance on the same store, after the lease
    await fetch(`${sim.url}/_sim/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: 61_000 }) });
    const restarted = await startGateway({ V1_TIMEOUT_MS: '2000', DATABASE_URL: dbFile }, {}, { sim, simClock: true });
    try {
      const res = await post(restarted, token, payload, { 'idempotency-key': key });
      expect(res.statusCode).toBe(200);
      expect(named('Crashed mid-way')).toHaveLength(1);
      expect(res.json().data.id).toBe(derivedUuid('render', named('Crashed mid-way')[0]!.id));
    } finally {
      await restarted.close();
    }
  });
});

describe('POST /renders with an account the key does not reach', () => {
  it('answers as for any unknown uuid (400 INVALID_FOREIGN_KEY, as Directus answers one), never a mismatch that tells the account exists', async () => {
    // bob (person 1) reaches some teams only; the account is one he does not reach, known to the id map
    const bob = await gw.login('bob@example.com');
    const reach = new Set(sim.keys[1]!.teams.map((t) => t.id));
    const foreign = [...sim.sim.world.teams.values()].find((t) => !reach.has(t.id))!;
    const own = [...sim.sim.world.projects.values()].find((p) => reach.has(p.teamId))!;
    expect(foreign).toBeDefined();
    await gw.deps.idMap.importPairs([{ type: 'account', uuid: derivedUuid('account', foreign.id), v1Id: foreign.id }]);
    await gw.deps.ids.load();
    await gw.get('/projects?limit=-1&fields=id', bob);
    const res = await post(gw, bob, { project: derivedUuid('project', own.id), account: derivedUuid('account', foreign.id), data: {} });
    expect(res.statusCode).toBe(400);
    const unknown = await post(gw, bob, { project: derivedUuid('project', own.id), account: '7d444840-9dc0-11d1-b245-5ffdce74fad2', data: {} });
    expect(res.json()).toEqual(unknown.json());
    expect(res.json().errors[0].extensions).toEqual({ code: 'INVALID_FOREIGN_KEY', collection: 'renders', field: 'account' });
    // with an account he reaches, the mismatch is his to see
    const other = [...reach].find((t) => t !== own.teamId)!;
    const mismatch = await post(gw, bob, { project: derivedUuid('project', own.id), account: derivedUuid('account', other), data: {} });
    expect(mismatch.statusCode).toBe(400);
  });
});
