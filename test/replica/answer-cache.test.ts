import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnswerCache, answerCacheKey } from '../../src/replica/reads/answer-cache.js';
import { refreshAt } from '../../src/replica/sync/signed-urls.js';
import { derivedUuid } from '../../src/translate/ids.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

const memo = (r: { headers: Record<string, unknown> }) => r.headers['x-gateway-answer-cache'];
const source = (r: { headers: Record<string, unknown> }) => r.headers['x-gateway-source'];
const OPERATOR = { 'x-gateway-operator-token': 'operator-token-0123456789' };

describe('AnswerCache', () => {
  it('gives an answer only at the epoch it was read at and before its moment', () => {
    const c = new AnswerCache(1024 * 1024);
    c.set('k', 'e1', 1_000, '{"data":1}');
    expect(c.get('k', 'e1', 999)).toBe('{"data":1}');
    expect(c.get('k', 'e2', 999)).toBeUndefined(); // the data moved on: a miss, and the entry is gone
    expect(c.holds('k')).toBe(false);
    c.set('k', 'e1', 1_000, '{"data":1}');
    expect(c.get('k', 'e1', 1_000)).toBeUndefined(); // at its moment: no longer given
    expect(c.hits).toBe(1);
    expect(c.misses).toBe(0); // misses are counted by the reader that computes the answer (once per read)
  });

  it('is bounded in bytes, keeps no answer larger than a sixteenth of it, and does nothing at 0', () => {
    const c = new AnswerCache(64 * 1024);
    c.set('big', 'e', 10, 'x'.repeat(4 * 1024 + 1)); // > 4 KiB
    expect(c.holds('big')).toBe(false);
    for (let i = 0; i < 100; i++) c.set(`k${i}`, 'e', 10, 'y'.repeat(1000));
    expect(c.size).toBeLessThan(100);
    expect(c.holds('k99')).toBe(true); // the most recent kept, the oldest gone
    expect(c.holds('k0')).toBe(false);
    // a long answer is kept as its UTF-8 bytes, the same text
    const roomy = new AnswerCache(1024 * 1024);
    const long = JSON.stringify({ data: 'é'.repeat(5000) });
    roomy.set('long', 'e', 10, long);
    const got = roomy.get('long', 'e', 0);
    expect(Buffer.isBuffer(got)).toBe(true);
    expect(got!.toString()).toBe(long);
    const off = new AnswerCache(0);
    off.set('k', 'e', 10, '{}');
    expect(off.enabled).toBe(false);
    expect(off.holds('k')).toBe(false);
    expect(off.get('k', 'e', 0)).toBeUndefined();
  });

  it('keys partition by v1 key, user, route and item; a dynamic variable or a long query is never kept', () => {
    const k = (p: string, u: string, route: string, id: string, url: string) => answerCacheKey(p, u, route, id, url);
    const base = k('p1', 'u1', '/renders', '', '/renders?limit=2');
    expect(base).not.toBeNull();
    expect(new Set([base, k('p2', 'u1', '/renders', '', '/renders?limit=2'), k('p1', 'u2', '/renders', '', '/renders?limit=2'),
      k('p1', 'u1', '/projects', '', '/renders?limit=2'), k('p1', 'u1', '/renders', 'x', '/renders?limit=2'),
      k('p1', 'u1', '/renders', '', '/renders?limit=3')]).size).toBe(6);
    // the token given in the query is not part of the key
    expect(k('p1', 'u1', '/renders', '', '/renders?limit=2&access_token=abc')).toBe(base);
    expect(k('p1', 'u1', '/renders', '', '/renders?access_token=abc&limit=2')).toBe(k('p1', 'u1', '/renders', '', '/renders?&limit=2'));
    for (const url of ['/renders?filter[date_created][_gt]=$NOW(-1 day)', '/renders?filter[date_created][_gt]=%24NOW', '/renders?filter[user_created][_eq]=%24current_user',
      `/renders?fields=${'a,'.repeat(1100)}id`]) {
      expect(k('p1', 'u1', '/renders', '', url), url).toBeNull();
    }
  });
});

/** A simulator and a gateway on its clock, ann (the first person) logged in, her teams backfilled. */
async function indexed(env: Record<string, string>): Promise<{ sim: RunningSim; gw: TestGateway; token: string }> {
  const sim = await startSim();
  const gw = await startGateway(env, {}, { sim, simClock: true });
  await gw.addUser(0, 'ann@example.com');
  const token = await gw.login('ann@example.com');
  for (let i = 0; i < 200 && source(await gw.get('/renders?limit=1', token)) !== 'index'; i++) await new Promise((r) => setTimeout(r, 10));
  return { sim, gw, token };
}

describe('the answer cache in front of the render index', () => {
  let sim: RunningSim;
  let gw: TestGateway;
  let token: string;

  beforeAll(async () => {
    ({ sim, gw, token } = await indexed({}));
    await gw.addUser(3, 'cy@example.com');
    await gw.addUser(4, 'dee@example.com');
  });
  afterAll(async () => { await gw.close(); await sim.sim.close(); });

  it('gives the same bytes again with no read, and says so', async () => {
    const url = '/renders?filter[status][_eq]=complete&sort=-date_created&limit=5&fields=id,title,status,output';
    const misses = gw.deps.replica!.answers.misses;
    const first = await gw.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
    expect(first.headers['x-gateway-source']).toBe('index');
    expect(first.headers['x-gateway-answer-cache']).toBe('miss');
    expect(gw.deps.replica!.answers.misses).toBe(misses + 1); // counted once
    const hits = gw.deps.replica!.answers.hits;
    const again = await gw.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
    expect(again.headers['x-gateway-answer-cache']).toBe('hit');
    expect(again.headers['x-gateway-v1-calls']).toBe('0');
    expect(again.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(again.body).toBe(first.body);
    expect(gw.deps.replica!.answers.hits).toBe(hits + 1);
    expect(gw.deps.replica!.answers.misses).toBe(misses + 1);
    // by id too, and the same answer as the list's item
    const id = first.json().data[0].id as string;
    const one = await gw.get(`/renders/${id}?fields=id,title,status,output`, token);
    expect(memo(one)).toBe('miss');
    const oneAgain = await gw.get(`/renders/${id}?fields=id,title,status,output`, token);
    expect(memo(oneAgain)).toBe('hit');
    expect(oneAgain.body.data).toEqual(first.json().data[0]);
    // the operators see it in the metrics
    const metrics = await gw.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer operator-token-0123456789' } });
    expect(metrics.body).toMatch(/gateway_answer_cache_hits_total [1-9]/);
    expect(metrics.body).toMatch(/gateway_answer_cache_entries [1-9]/);
  });

  it("a write through the gateway, an overlay and a change in v1 show in the very next read", async () => {
    const list = '/renders?limit=3&fields=id,title';
    await gw.get(list, token);
    expect(memo(await gw.get(list, token))).toBe('hit');
    const team = sim.keys[0]!.teams[0]!.id;
    const project = [...sim.sim.world.projects.values()].find((p) => p.teamId === team)!;
    const created = await gw.app.inject({
      method: 'POST', url: '/renders', headers: { authorization: `Bearer ${token}` },
      payload: { project: derivedUuid('project', project.id), account: derivedUuid('account', team), data: {}, title: 'newest of all' },
    });
    expect(created.statusCode).toBe(200);
    const after = await gw.get(list, token);
    expect(memo(after)).toBe('miss');
    expect(after.body.data[0]).toEqual({ id: created.json().data.id, title: 'newest of all' });
    // an overlay (PATCH) on the render just answered
    const one = `/renders/${created.json().data.id}?fields=title`;
    expect((await gw.get(one, token)).body.data.title).toBe('newest of all');
    expect(memo(await gw.get(one, token))).toBe('hit');
    const patched = await gw.app.inject({ method: 'PATCH', url: `/renders/${created.json().data.id}`, headers: { authorization: `Bearer ${token}` }, payload: { title: 'renamed' } });
    expect(patched.statusCode).toBe(200);
    const renamed = await gw.get(one, token);
    expect(memo(renamed)).toBe('miss');
    expect(renamed.body.data.title).toBe('renamed');
    // a render made directly in v1: once the bound has passed, the read that syncs the team answers with it
    const counted = '/renders?aggregate[count]=*';
    const before = Number((await gw.get(counted, token)).body.data[0].count);
    expect(memo(await gw.get(counted, token))).toBe('hit');
    sim.sim.world.createRender(sim.sim.world.authenticate(`Bearer ${sim.keys[0]!.api_key}`), { project_id: project.id, name: 'made in v1' });
    sim.sim.clock.advance(gw.config.INDEX_MAX_STALENESS_MS + 1);
    const synced = await gw.get(counted, token);
    expect(memo(synced)).toBe('miss');
    expect(Number(synced.body.data[0].count)).toBe(before + 1);
  });

  it('an id import (read again by the translator) changes the next answer', async () => {
    const url = '/projects?sort=id&limit=1&fields=id,title';
    const before = await gw.get(url, token);
    expect(memo(await gw.get(url, token))).toBe('hit');
    const project = [...sim.sim.world.projects.values()].find((p) => derivedUuid('project', p.id) === before.body.data[0].id)!;
    const imported = '00000000-0000-4000-8000-00000000abcd';
    await gw.deps.idMap.importPairs([{ type: 'project', uuid: imported, v1Id: project.id }]);
    await gw.deps.ids.load(); // (what the bus's 'ids' notice, or a resync, makes every instance do)
    const after = await gw.get(url, token);
    expect(memo(after)).toBe('miss');
    expect(after.body.data[0]).toEqual({ id: imported, title: before.body.data[0].title });
  });

  it('never gives one key the answer of another', async () => {
    const cy = await gw.login('cy@example.com');
    const dee = await gw.login('dee@example.com');
    const url = '/accounts?fields=id&sort=id';
    const a = await gw.get(url, cy);
    expect(memo(a)).toBe('miss');
    const b = await gw.get(url, dee);
    expect(memo(b)).toBe('miss');
    expect(b.body.data).not.toEqual(a.body.data);
    const reach = (i: number) => sim.keys[i]!.teams.map((t) => derivedUuid('account', t.id)).sort();
    expect(a.body.data.map((x: { id: string }) => x.id)).toEqual(reach(3));
    expect((await gw.get(url, dee)).body.data.map((x: { id: string }) => x.id)).toEqual(reach(4));
    expect((await gw.get(url, cy)).body.data.map((x: { id: string }) => x.id)).toEqual(reach(3));
  });

  it('does not keep answers that depend on the clock or the caller, nor explained or exported ones', async () => {
    // (also spelled so that no `$` is in the query string: a JSON filter's escape)
    const escaped = `/renders?limit=1&fields=id&filter=${encodeURIComponent('{"date_created":{"_lte":"\\u0024NOW"}}')}`;
    const escapedUser = `/renders?limit=1&fields=id&filter=${encodeURIComponent('{"user_created":{"_eq":"\\u0024CURRENT_USER"}}')}`;
    expect(escaped).not.toMatch(/\$|%24/i);
    for (const url of ['/renders?filter[date_created][_lte]=$NOW&limit=1&fields=id', '/renders?filter[user_created][_eq]=$CURRENT_USER&limit=1&fields=id',
      '/renders?limit=1&fields=id&export=json', escaped, escapedUser]) {
      await gw.get(url, token);
      const r = await gw.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
      expect(r.statusCode, url).toBe(200);
      expect(r.headers['x-gateway-answer-cache'], url).toBeUndefined();
    }
    const explained = await gw.get('/renders?limit=1&fields=id', token, { 'x-gateway-explain': '1', ...OPERATOR });
    expect(explained.body.explain.source).toBe('index');
    expect(memo(explained)).toBeUndefined();
    // a bad export format is a 400 before the 403 of an id that is not a uuid
    expect((await gw.get('/renders/not-a-uuid?export=pdf', token)).status).toBe(400);
    expect((await gw.get('/renders/not-a-uuid', token)).status).toBe(403);
    // a bad query is still a 400, kept or not
    expect((await gw.get('/renders?limit=abc', token)).status).toBe(400);
    expect((await gw.get('/renders?limit=abc', token)).status).toBe(400);
  });
});

describe('how long a kept answer is given', () => {
  let sim: RunningSim;
  let gw: TestGateway;
  let token: string;
  const MAX_AGE = 400_000;

  beforeAll(async () => {
    // no sync and no lifecycle in the way: only the clock moves
    ({ sim, gw, token } = await indexed({ INDEX_MAX_STALENESS_MS: '36000000', ANSWER_CACHE_MAX_AGE_MS: String(MAX_AGE), ACCESS_TOKEN_TTL: '36000000' }));
  });
  afterAll(async () => { await gw.close(); await sim.sim.close(); });

  it('not once its first signed URL must be refreshed: the next answer has fresh ones', async () => {
    const url = '/renders?filter[status][_eq]=complete&filter[output][_nnull]=true&limit=1&fields=id,output';
    const first = await gw.get(url, token);
    expect(memo(first)).toBe('miss');
    const output = first.body.data[0].output as Record<string, string | null>;
    const urls = Object.values(output).filter((u): u is string => typeof u === 'string' && u.includes('expires='));
    expect(urls.length).toBeGreaterThan(0);
    const expiresAt = Math.min(...urls.map((u) => Number(new URL(u).searchParams.get('expires')) * 1000));
    const id = first.body.data[0].id as string;
    const t = gw.deps.replica!.team(sim.keys[0]!.teams.find((x) => gw.deps.replica!.team(x.id)?.renderV1(id))!.id)!;
    const seenAt = t.renderState(t.renderV1(id)!)!.seenAt;
    const deadline = refreshAt(expiresAt, seenAt);
    expect(deadline - sim.sim.clock.now()).toBeLessThan(MAX_AGE); // the URL, not the age, ends this answer
    sim.sim.clock.advance(deadline - sim.sim.clock.now() - 1_000);
    const before = await gw.get(url, token);
    expect(memo(before)).toBe('hit');
    sim.sim.clock.advance(1_001);
    const after = await gw.get(url, token);
    expect(memo(after)).toBe('miss');
    expect(after.body.data[0].id).toBe(id);
    const fresh = Object.values(after.body.data[0].output as Record<string, string | null>).filter((u): u is string => typeof u === 'string' && u.includes('expires='));
    for (const u of fresh) expect(Number(new URL(u).searchParams.get('expires')) * 1000).toBeGreaterThan(expiresAt);
  });

  it('not past ANSWER_CACHE_MAX_AGE_MS', async () => {
    const url = '/renders?aggregate[count]=*&groupBy[]=status';
    expect(memo(await gw.get(url, token))).toBe('miss');
    sim.sim.clock.advance(MAX_AGE - 1);
    expect(memo(await gw.get(url, token))).toBe('hit');
    sim.sim.clock.advance(1);
    expect(memo(await gw.get(url, token))).toBe('miss');
  });

  it('ANSWER_CACHE_MB=0 keeps nothing', async () => {
    const off = await startGateway({ ANSWER_CACHE_MB: '0', DATABASE_URL: gw.config.DATABASE_URL }, {}, { sim, simClock: true });
    try {
      const t = await off.login('ann@example.com');
      for (let i = 0; i < 3; i++) {
        const r = await off.get('/renders?limit=2&fields=id', t);
        expect(r.status).toBe(200);
        expect(memo(r)).toBeUndefined();
      }
      expect(off.deps.replica!.answers.hits).toBe(0);
    } finally {
      await off.app.close();
      await off.deps.close();
    }
  });
});
