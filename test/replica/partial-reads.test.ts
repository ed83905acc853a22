import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import type { ReplicaStore } from '../../src/store/replica-store.js';
import { derivedUuid } from '../../src/translate/ids.js';
import { databases } from '../helpers/databases.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * Reads while part of a key's reach is not held whole: after a restart, the teams being read from the store (each load
 * held by hand; SQLite and PostgreSQL); during a backfill, a team whose projects are checkpointed one by one (one project's walk held by hand).
 * The read's scope decides: copied whole → the replica answers, marked partial, equal to a live gateway's answer;
 * otherwise live. No partial answer is kept by the answer cache.
 */
const OPERATOR = { 'x-gateway-explain': '1', 'x-gateway-operator-token': 'operator-token-0123456789' };
const FIELDS = 'fields=id,title,status,project,account,date_created,date_updated,download_ready';
const source = (r: { headers: Record<string, unknown> }) => r.headers['x-gateway-source'];
const partial = (r: { headers: Record<string, unknown> }) => r.headers['x-gateway-partial'];
const memo = (r: { headers: Record<string, unknown> }) => r.headers['x-gateway-answer-cache'];

/** A promise released by hand. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => { open = r; });
  return { wait, open };
}

let sim: RunningSim;
/** The reference: the same simulator read live (INDEX_ENABLED=false). */
let ref: TestGateway;
let refToken: string;
const teams = () => sim.keys[0]!.teams.map((t) => t.id);
const projectsOf = (teamId: string) => [...sim.sim.world.projects.values()].filter((p) => p.teamId === teamId).sort((a, b) => a.id.localeCompare(b.id));
const rendersOf = (projectId: string) => [...sim.sim.world.renders.values()].filter((r) => r.projectId === projectId);

beforeAll(async () => {
  sim = await startSim();
  ref = await startGateway({ INDEX_ENABLED: 'false' }, {}, { sim, simClock: true });
  await ref.addUser(0, 'ann@example.com');
  refToken = await ref.login('ann@example.com');
  // a uuid is resolved live only once answered (its v1 id is not derivable from it): the reference answers every render
  expect((await ref.get('/renders?limit=-1&fields=id', refToken)).body.data).toHaveLength(sim.sim.world.renders.size);
});
afterAll(async () => {
  await ref.close();
  await sim.sim.close();
});

async function backfilled(gw: TestGateway, token: string): Promise<void> {
  await vi.waitFor(async () => {
    await gw.get('/renders?limit=1', token);
    const s = await gw.deps.replica!.status();
    expect(teams().every((id) => s.find((x) => x.team === id)?.state === 'ready')).toBe(true);
  }, { timeout: 20_000, interval: 10 });
}

describe.each(await databases())('after a restart on $name, reads do not wait for the teams being read from the store', ({ url: database }) => {
  const env = { DATABASE_URL: database, INDEX_LOAD_WAIT_MS: '20' };
  let gw: TestGateway;
  let gwClock: ManualClock;
  let token: string;
  const gates = new Map<string, ReturnType<typeof gate>>();
  const started: string[] = [];
  const finished: string[] = [];

  beforeAll(async () => {
    const first = await startGateway(env, {}, { sim, simClock: true });
    await first.addUser(0, 'ann@example.com');
    const firstToken = await first.login('ann@example.com');
    await backfilled(first, firstToken);
    // every render answered once: the restarted gateway resolves their uuids live too
    expect((await first.get('/renders?limit=-1&fields=id', firstToken)).body.data).toHaveLength(sim.sim.world.renders.size);
    await first.close();
    // the restarted gateway on a clock of its own, set to the simulator's time: moving it moves nothing in v1
    gw = await startGateway(env, {}, { sim, clock: gwClock = new ManualClock(sim.sim.world.clock.now()) });
    // every team's read of its renders from the store is held until the test opens its gate
    const store = gw.deps.replica!.store as ReplicaStore;
    const eachRenders = store.eachRenders.bind(store);
    for (const id of teams()) gates.set(id, gate());
    store.eachRenders = async (teamId, each, pageSize) => {
      started.push(teamId);
      await gates.get(teamId)?.wait;
      const n = await eachRenders(teamId, each, pageSize);
      finished.push(teamId);
      return n;
    };
    token = await gw.login('ann@example.com');
  });
  afterAll(async () => {
    for (const g of gates.values()) g.open();
    await gw.close();
  });

  it('a read by id while every load is held is answered live; the reach\'s teams are read two at a time, the rest queued', async () => {
    const [teamA] = teams();
    const project = projectsOf(teamA!)[0]!;
    const render = rendersOf(project.id)[0]!;
    const r = await gw.get(`/renders/${derivedUuid('render', render.id)}?${FIELDS}`, token, OPERATOR);
    expect(r.status).toBe(200);
    expect(source(r)).toBe('live');
    expect(r.body.explain.partial).toMatchObject({ answered: 'live', teams_loading: expect.arrayContaining(teams()) });
    // the read did not wait for the loads it started: two of them run, held, the others wait their turn
    await vi.waitFor(() => expect(started).toHaveLength(2), { interval: 5 }); // (on PostgreSQL the team's row is read first)
    expect([...started].sort()).toEqual(teams().slice(0, 2).sort());
    expect(finished).toEqual([]);
    const expected = await ref.get(`/renders/${derivedUuid('render', render.id)}?${FIELDS}`, refToken);
    expect(r.body.data).toEqual(expected.body.data);
  });

  it('reads wait for the loads only until INDEX_LOAD_WAIT_MS after the first read asked for them', async () => {
    const index = gw.deps.replica!;
    const waited = index.loadWaits;
    expect(waited).toBeGreaterThan(0); // the first read waited (at most INDEX_LOAD_WAIT_MS)
    gwClock.advance(1_000);
    for (let i = 0; i < 3; i++) {
      const r = await gw.get('/renders?limit=2&fields=id', token);
      expect([r.status, source(r)]).toEqual([200, 'live']);
    }
    expect(index.loadWaits).toBe(waited); // past the moment: no read waits while the loads go on
    expect(finished).toEqual([]);
  });

  it('once one team is read, its renders by id and by project are answered from it, partial; a whole-scope read goes live', async () => {
    const [teamA, teamB] = teams();
    gates.get(teamA!)!.open();
    await vi.waitFor(() => expect(gw.deps.replica!.team(teamA!)).toBeDefined(), { interval: 5 });
    // teamA's place went to the next team in line
    await vi.waitFor(() => expect([...started].sort()).toEqual(teams().slice(0, 3).sort()), { interval: 5 });
    const project = projectsOf(teamA!)[0]!;
    const render = rendersOf(project.id)[0]!;
    const byId = await gw.get(`/renders/${derivedUuid('render', render.id)}?${FIELDS}`, token);
    expect([byId.status, source(byId), partial(byId)]).toEqual([200, 'index', '1']);
    expect(Number(byId.headers['x-gateway-v1-calls'])).toBe(0);
    expect(byId.body.data).toEqual((await ref.get(`/renders/${derivedUuid('render', render.id)}?${FIELDS}`, refToken)).body.data);

    const url = `/renders?${FIELDS}&filter[project][_eq]=${derivedUuid('project', project.id)}&limit=-1&meta=filter_count`;
    const one = await gw.get(url, token, OPERATOR);
    expect([one.status, source(one), partial(one)]).toEqual([200, 'index', '1']);
    expect(one.body.explain).toMatchObject({ source: 'index', partial: { answered: 'partial', teams_backfilling: [] } });
    expect([...one.body.explain.partial.teams_loading].sort()).toEqual(teams().slice(1).sort());
    const expected = await ref.get(url, refToken);
    expect(one.body.data).toEqual(expected.body.data);
    expect(one.body.meta).toEqual(expected.body.meta);

    // the team's account, or two of its projects, named by the filter: partial too, and equal
    const projects = projectsOf(teamA!).slice(0, 2).map((p) => derivedUuid('project', p.id)).join(',');
    for (const u of [`/renders?${FIELDS}&filter[account][_eq]=${derivedUuid('account', teamA!)}&sort=title&limit=7&meta=filter_count`,
      `/renders?${FIELDS}&filter[project][_in]=${projects}&limit=-1`]) {
      const r = await gw.get(u, token);
      expect([r.status, source(r), partial(r)], u).toEqual([200, 'index', '1']);
      const live = await ref.get(u, refToken);
      expect(r.body, u).toEqual(live.body);
    }

    // a project of a team still being read, the whole reach, or a count of the reach: live
    const other = projectsOf(teamB!)[0]!;
    for (const u of [`/renders?filter[project][_eq]=${derivedUuid('project', other.id)}&limit=5`, '/renders?limit=5',
      `/renders?filter[project][_eq]=${derivedUuid('project', project.id)}&limit=5&meta=total_count`]) {
      const r = await gw.get(u, token);
      expect([r.status, source(r), partial(r)], u).toEqual([200, 'live', undefined]);
    }
  });

  it('no partial answer is kept: once every team is read, the same question is computed whole, then kept', async () => {
    const [teamA] = teams();
    const project = projectsOf(teamA!)[0]!;
    const url = `/renders?${FIELDS}&filter[project][_eq]=${derivedUuid('project', project.id)}&limit=3`;
    const p1 = await gw.get(url, token);
    const p2 = await gw.get(url, token);
    expect([partial(p1), partial(p2), memo(p1), memo(p2)]).toEqual(['1', '1', undefined, undefined]);
    for (const g of gates.values()) g.open();
    await vi.waitFor(() => expect(teams().every((id) => gw.deps.replica!.team(id) !== undefined)).toBe(true), { interval: 5 });
    const whole = await gw.get(url, token);
    expect([source(whole), partial(whole), memo(whole)]).toEqual(['index', undefined, 'miss']);
    const again = await gw.get(url, token);
    expect([source(again), partial(again), memo(again)]).toEqual(['index', undefined, 'hit']);
    expect(again.body).toEqual(p1.body);
    const all = await gw.get('/renders?limit=5&meta=total_count', token);
    expect([source(all), partial(all)]).toEqual(['index', undefined]);
    expect(all.body.meta.total_count).toBe(sim.sim.world.renders.size);
  });
});

/**
 * A gateway whose backfill of the key's first team (teamA) is under way: its projects walked one at a time, the first
 * with renders walked whole (`done`), the next held at its first page until `held` opens (`walking`); the other teams done.
 */
interface BackfillHeld { gw: TestGateway; token: string; teamA: string; done: { id: string }; walking: { id: string } }
async function backfillHeld(held: ReturnType<typeof gate>): Promise<BackfillHeld> {
  const gw = await startGateway({ INDEX_SYNC_CONCURRENCY: '1' }, {}, { sim, simClock: true });
  await gw.addUser(0, 'ann@example.com');
  const token = await gw.login('ann@example.com');
  const teamA = teams()[0]!;
  expect(projectsOf(teamA).filter((p) => rendersOf(p.id).length > 0).length).toBeGreaterThanOrEqual(2);
  // teamA's projects are walked one at a time: the first with renders is walked whole, the next stops at its first
  // page until the test opens the gate
  const store = gw.deps.replica!.store as ReplicaStore;
  const putRenders = store.putRenders.bind(store);
  let first: string | undefined;
  let blocked: string | undefined;
  store.putRenders = async (teamId, renders, seenAt) => {
    const p = renders[0]?.project.id;
    if (teamId === teamA && p !== undefined) {
      first ??= p;
      if (p !== first) {
        blocked ??= p;
        await held.wait;
      }
    }
    return putRenders(teamId, renders, seenAt);
  };
  await gw.get('/renders?limit=1', token); // starts the backfills
  await vi.waitFor(async () => {
    const t = gw.deps.replica!.team(teamA);
    expect(t?.state).toBe('backfilling');
    expect(first !== undefined && t!.projects.get(first)?.backfilled).toBe(true);
    expect(blocked).toBeDefined();
    // the other teams are done
    for (const id of teams().slice(1)) expect(gw.deps.replica!.team(id)?.state).toBe('ready');
  }, { timeout: 20_000, interval: 10 });
  const walking = { id: blocked! };
  // the renders of the project being walked are answered live once (their uuids resolved live after that)
  const listed = await gw.get(`/renders?fields=id&limit=-1&filter[project][_eq]=${derivedUuid('project', walking.id)}`, token);
  expect([source(listed), listed.body.data.length]).toEqual(['live', rendersOf(walking.id).length]);
  return { gw, token, teamA, done: { id: first! }, walking };
}

describe('during a backfill, a read of checkpointed projects is answered from them', () => {
  let gw: TestGateway;
  let token: string;
  const held = gate();
  let teamA: string;
  let done: { id: string }; // a project of teamA walked and checkpointed
  let walking: { id: string }; // a project of teamA whose walk is held

  beforeAll(async () => {
    ({ gw, token, teamA, done, walking } = await backfillHeld(held));
  });
  afterAll(async () => {
    held.open();
    await gw.close();
  });

  it('a checkpointed project and its renders by id: partial, equal to the live answer; explain says what is pending', async () => {
    const url = `/renders?${FIELDS}&filter[project][_eq]=${derivedUuid('project', done.id)}&sort=title&limit=-1`;
    const r = await gw.get(url, token, OPERATOR);
    expect([r.status, source(r), partial(r)]).toEqual([200, 'index', '1']);
    expect(r.body.explain.partial).toMatchObject({ answered: 'partial', teams_backfilling: [teamA], teams_loading: [] });
    expect(r.body.explain.partial.projects_pending).toBeGreaterThanOrEqual(1);
    expect(r.body.data).toEqual((await ref.get(url, refToken)).body.data);
    const render = rendersOf(done.id)[0]!;
    const one = await gw.get(`/renders/${derivedUuid('render', render.id)}?${FIELDS}`, token);
    expect([one.status, source(one), partial(one)]).toEqual([200, 'index', '1']);
    expect(one.body.data).toEqual((await ref.get(`/renders/${derivedUuid('render', render.id)}?${FIELDS}`, refToken)).body.data);
    // a one-to-many relation could reach the projects not copied yet: live
    const many = await gw.get(`/renders?fields=id,project.renders&filter[project][_eq]=${derivedUuid('project', done.id)}&limit=2`, token);
    expect([many.status, source(many)]).toEqual([200, 'live']);
  });

  it('a read touching the project still being walked goes live, and so does the whole scope', async () => {
    for (const u of [
      `/renders?filter[project][_eq]=${derivedUuid('project', walking.id)}&limit=5`,
      `/renders/${derivedUuid('render', rendersOf(walking.id)[0]!.id)}`,
      `/renders?filter[project][_in]=${derivedUuid('project', done.id)},${derivedUuid('project', walking.id)}&limit=5`,
      '/renders?aggregate[count]=*',
    ]) {
      const r = await gw.get(u, token, OPERATOR);
      expect([r.status, source(r), partial(r)], u).toEqual([200, 'live', undefined]);
      expect(r.body.explain.partial, u).toMatchObject({ answered: 'live', teams_backfilling: [teamA] });
    }
  });

  it('filters that name a copied project beside one not copied, or a project of a team the key does not reach, are answered live', async () => {
    const done_ = derivedUuid('project', done.id);
    const walk = derivedUuid('project', walking.id);
    const renderOf = (projectId: string) => derivedUuid('render', rendersOf(projectId)[0]!.id);
    for (const u of [
      `/renders?filter[_or][0][project][_eq]=${done_}&filter[_or][1][project][_eq]=${walk}&limit=5`,
      `/renders?filter[project][_neq]=${walk}&limit=5`,
      `/renders?filter[project][_nin]=${walk}&limit=5`,
      `/renders?filter[project][_null]=false&limit=5`,
      `/renders?filter[id][_in]=${renderOf(done.id)},${renderOf(walking.id)}&limit=5`,
    ]) {
      const r = await gw.get(u, token);
      expect([r.status, source(r), partial(r)], u).toEqual([200, 'live', undefined]);
    }
    // the copied project with filters that can only narrow it: partial, the same answers as live
    for (const u of [
      `/renders?fields=id,title&filter[project][_eq]=${done_}&filter[_or][0][project][_eq]=${walk}&filter[_or][1][status][_neq]=x&sort=title`,
      `/renders?fields=id&filter[project][_eq]=${done_}&filter[_or][0][id][_eq]=${renderOf(walking.id)}&filter[_or][1][project][_eq]=${walk}`,
    ]) {
      const r = await gw.get(u, token);
      expect([r.status, partial(r)], u).toEqual([200, '1']);
      expect(r.body.data, u).toEqual((await ref.get(u, refToken)).body.data);
    }
    // a key reaching teamA alone (being backfilled): a project of another team held here by ann's reads is not its to read
    const bobKey = sim.keys.findIndex((k) => k.teams.length === 1 && k.teams[0]!.id === teamA);
    expect(bobKey).toBeGreaterThan(0);
    await gw.addUser(bobKey, 'bob@example.com');
    const bob = await gw.login('bob@example.com');
    const other = projectsOf(teams()[1]!).find((p) => rendersOf(p.id).length > 0)!;
    expect(gw.deps.replica!.team(teams()[1]!)?.state).toBe('ready');
    const theirs = derivedUuid('project', other.id);
    for (const q of [`filter[project][_in]=${done_},${theirs}`, `filter[project][_eq]=${theirs}`, `filter[id][_eq]=${renderOf(other.id)}`]) {
      const b = await gw.get(`/renders?fields=id,project&${q}&limit=-1`, bob);
      expect([source(b), partial(b)], q).toEqual(['live', undefined]);
      expect((b.body.data ?? []).filter((x: { project: string }) => x.project === theirs), q).toEqual([]);
    }
  });

  it('a selection whose wildcards reach a one-to-many relation is answered live; `fields=*` stays partial', async () => {
    const p = derivedUuid('project', done.id);
    // (user uuids are each gateway's own)
    const users = (x: unknown): unknown => JSON.parse(JSON.stringify(x, (k, v: unknown) => (['user_created', 'owner'].includes(k) ? undefined : v)));
    for (const [fields, from] of [['*', 'partial'], ['*.*.*', 'live'], ['id,project.*', 'live']]) {
      const u = `/renders?fields=${fields}&filter[project][_eq]=${p}&sort=title&limit=3`;
      const r = await gw.get(u, token);
      expect([r.status, partial(r) === '1' ? 'partial' : source(r)], u).toEqual([200, from]);
      expect(users(r.body.data), u).toEqual(users((await ref.get(u, refToken)).body.data));
    }
  });

  it('once the backfill ends, reads are whole and kept again', async () => {
    const url = `/renders?${FIELDS}&filter[project][_eq]=${derivedUuid('project', done.id)}&limit=4`;
    expect(partial(await gw.get(url, token))).toBe('1');
    held.open();
    await backfilled(gw, token);
    const a = await gw.get(url, token);
    const b = await gw.get(url, token);
    expect([source(a), partial(a), memo(a)]).toEqual(['index', undefined, 'miss']);
    expect([source(b), partial(b), memo(b)]).toEqual(['index', undefined, 'hit']);
    expect(a.body.data).toEqual((await ref.get(url, refToken)).body.data);
  });
});

describe('during a backfill, a checkpointed project older than the bound', () => {
  let gw: TestGateway;
  let token: string;
  const held = gate();
  let done: { id: string };

  beforeAll(async () => {
    ({ gw, token, done } = await backfillHeld(held));
  });
  afterAll(async () => {
    held.open();
    await gw.close();
  });

  it('is not answered from its copy (its head is not synced during the backfill): live, with the renders made since', async () => {
    const url = `/renders?fields=id,title&filter[project][_eq]=${derivedUuid('project', done.id)}&sort=title&limit=-1`;
    const before = await gw.get(url, token, OPERATOR);
    expect(partial(before)).toBe('1');
    // the answer's age: its copied project's since its walk started, its other teams' since their sync (within the bound)
    expect(before.body.explain.index_age_ms).toBeGreaterThanOrEqual(0);
    expect(before.body.explain.index_age_ms).toBeLessThanOrEqual(before.body.explain.bound_ms);
    const pending = before.body.explain.partial.projects_pending;
    const person = sim.sim.world.authenticate(`Bearer ${sim.keys[0]!.api_key}`);
    const made = sim.sim.world.createRender(person, { project_id: done.id, name: 'made after the walk' });
    sim.sim.world.advance(60_000);
    await gw.deps.replica!.syncNow(teams().slice(1)); // the teams held whole are fresh
    const r = await gw.get(url, token, OPERATOR);
    expect([r.status, source(r), partial(r)]).toEqual([200, 'live', undefined]);
    // the stale copy is pending again
    expect(r.body.explain.partial).toMatchObject({ answered: 'live', projects_pending: pending + 1 });
    expect(r.body.data.map((x: { title: string }) => x.title)).toContain(made.name);
    expect(r.body.data).toEqual((await ref.get(url, refToken)).body.data);
  });
});
