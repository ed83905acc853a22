import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partitionOf } from '../../src/v1/client.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Issue 38: `PATCH {query, data}` resolves its keys as a GET does (from the replica when it holds the team), reads items
 * by id only when they changed, waits for a heavy-read place when its read is heavy, and updates every matched item for
 * `limit: -1`; array bodies and key lists are capped (MAX_BATCH_MUTATION).
 */
let gw: TestGateway;
let token: string;
let all: string[];
let key: string;
beforeAll(async () => {
  gw = await startGateway({ HEAVY_READS_PER_KEY: '1', MAX_BATCH_MUTATION: '5' }, { scale: 'tiny' });
  await gw.addUser(0, 'ann@example.com');
  token = await gw.login('ann@example.com');
  await gw.deps.replica!.syncNow(gw.s.keys[0]!.teams.map((t) => t.id));
  all = ((await gw.get('/renders?limit=-1&fields=id', token)).body.data as { id: string }[]).map((r) => r.id).sort();
  key = partitionOf(gw.s.keys[0]!.api_key);
});
afterAll(async () => gw.close());

const patch = (url: string, payload: unknown) =>
  gw.app.inject({ method: 'PATCH', url, payload: payload as object, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
const simStats = async () => (await (await fetch(`${gw.s.url}/_sim/stats`)).json()) as { total: number; requests: Record<string, number> };
const resetStats = () => fetch(`${gw.s.url}/_sim/stats/reset`, { method: 'POST' });
const byIdCalls = (s: { requests: Record<string, number> }) =>
  Object.entries(s.requests).filter(([k]) => /^GET \/v1\/(renders|projects)\/:/.test(k)).reduce((n, [, v]) => n + v, 0);

describe('PATCH {query, data}', () => {
  it('with nothing to change: the items the query reads, from the replica, no v1 read by id', async () => {
    expect(all.length).toBeGreaterThan(5);
    await resetStats();
    const res = await patch('/renders?fields=id', { query: { limit: 100_000 }, data: {} });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.map((r: { id: string }) => r.id)).toEqual(all);
    expect(byIdCalls(await simStats())).toBe(0);
  });

  it('limit -1 updates every matched item, as Directus does (was an empty answer); one transaction and one change a 100 items', async () => {
    let published = 0;
    gw.deps.bus.on('overlays', () => { published++; });
    const res = await patch('/renders?fields=id,title', { query: { limit: -1 }, data: { title: 'all of them' } });
    // (a change an item before: each read every overlay back and rebuilt every team's records — attack pass 14, H1)
    expect(published).toBe(Math.ceil(all.length / 100));
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual(all.map((id) => ({ id, title: 'all of them' })));
    const read = await gw.get('/renders?limit=-1&fields=title', token);
    expect(new Set(read.body.data.map((r: { title: string }) => r.title))).toEqual(new Set(['all of them']));
  });

  it('reads by id at most the items it changed; the answer keeps ?fields= (no id when not asked)', async () => {
    const two = all.slice(0, 2);
    await resetStats();
    const res = await patch('/renders?fields=title', { query: { filter: { id: { _in: two } } }, data: { title: 'two' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([{ title: 'two' }, { title: 'two' }]);
    expect(byIdCalls(await simStats())).toBeLessThanOrEqual(2);
    const unchanged = await patch('/renders?fields=title', { query: { filter: { id: { _in: two } } }, data: {} });
    expect(unchanged.json().data).toEqual([{ title: 'two' }, { title: 'two' }]);
  });

  it('a heavy query waits for one of its key\'s heavy-read places', async () => {
    const held = await gw.deps.heavyReads.enter(key);
    const pending = patch('/renders?fields=id', { query: { limit: 100_000 }, data: {} });
    for (let i = 0; i < 400 && gw.deps.heavyReads.load(key).waiting === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(gw.deps.heavyReads.load(key)).toEqual({ running: 1, waiting: 1 });
    held();
    expect((await pending).statusCode).toBe(200);
    expect(gw.deps.heavyReads.load(key)).toEqual({ running: 0, waiting: 0 });
  });

  it('is heavy by the answer it gives: a few items expanded by ?fields= wait as the same GET waits (review: the ids it reads first were light)', async () => {
    const held = await gw.deps.heavyReads.enter(key);
    const waits = async (_p: Promise<{ statusCode: number }>, n: number) => {
      for (let i = 0; i < 400 && gw.deps.heavyReads.load(key).waiting < n; i++) await new Promise((r) => setTimeout(r, 5));
      return gw.deps.heavyReads.load(key).waiting;
    };
    try {
      const get = gw.app.inject({ method: 'GET', url: '/renders?fields=*.*.*&limit=100', headers: { authorization: `Bearer ${token}` } });
      expect(await waits(get, 1)).toBe(1);
      const pending = patch('/renders?fields=*.*.*', { query: { limit: 100 }, data: {} });
      expect(await waits(pending, 2)).toBe(2);
      held();
      expect((await get).statusCode).toBe(200);
      expect((await pending).statusCode).toBe(200);
    } finally {
      held();
    }
  });
});

describe('PATCH {query, data} on live v1 (no replica)', () => {
  let live: TestGateway;
  let t: string;
  beforeAll(async () => {
    live = await startGateway({ INDEX_ENABLED: 'false' }, { scale: 'tiny' });
    await live.addUser(0, 'ann@example.com');
    t = await live.login('ann@example.com');
  });
  afterAll(async () => live.close());
  const stats = async () => (await (await fetch(`${live.s.url}/_sim/stats`)).json()) as { requests: Record<string, number> };
  const livePatch = (url: string, payload: unknown) =>
    live.app.inject({ method: 'PATCH', url, payload: payload as object, headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json' } });

  it('with nothing to change, reads no item by id (review: every matched item was read back, a v1 call each)', async () => {
    const every = ((await live.get('/renders?limit=-1&fields=id', t)).body.data as { id: string }[]).map((r) => r.id).sort();
    const page = ((await live.get('/renders?limit=7&sort=title&fields=id,title', t)).body.data as { id: string; title: string }[]);
    await fetch(`${live.s.url}/_sim/stats/reset`, { method: 'POST' });
    const whole = await livePatch('/renders?fields=id', { query: { limit: -1 }, data: {} });
    expect(whole.statusCode).toBe(200);
    expect(whole.json().data.map((r: { id: string }) => r.id)).toEqual(every);
    const some = await livePatch('/renders?fields=title', { query: { limit: 7, sort: ['title'] }, data: {} });
    expect(some.statusCode).toBe(200);
    // the seven the query reads, in primary-key order, with ?fields= only
    expect(some.json().data).toEqual([...page].sort((a, b) => (a.id < b.id ? -1 : 1)).map((r) => ({ title: r.title })));
    expect(byIdCalls(await stats())).toBe(0);
  });
});

describe('MAX_BATCH_MUTATION', () => {
  const limit = { errors: [{ message: 'Invalid payload. Exceeded max batch mutation limit of 5.', extensions: { code: 'INVALID_PAYLOAD', reason: 'Exceeded max batch mutation limit of 5' } }] };
  it('an array POST, an array PATCH and a keys PATCH longer than the cap: 400 before anything is made or changed', async () => {
    const project = (await gw.get('/projects?limit=1&fields=id,account', token)).body.data[0] as { id: string; account: string };
    await resetStats();
    const items = Array.from({ length: 6 }, (_, i) => ({ project: project.id, account: project.account, data: { n: i } }));
    const post = await gw.app.inject({ method: 'POST', url: '/renders', payload: items, headers: { authorization: `Bearer ${token}` } });
    expect(post.statusCode).toBe(400);
    expect(post.json()).toMatchObject(limit);
    const array = await patch('/renders', all.slice(0, 6).map((id) => ({ id, title: 'x' })));
    expect(array.statusCode).toBe(400);
    expect(array.json()).toMatchObject(limit);
    const keys = await patch('/renders', { keys: all.slice(0, 6), data: { title: 'x' } });
    expect(keys.statusCode).toBe(400);
    expect(keys.json()).toMatchObject(limit);
    expect((await simStats()).total).toBe(0);
    expect((await patch('/renders?fields=id', { keys: all.slice(0, 5), data: { title: 'five' } })).statusCode).toBe(200);
  });
});
