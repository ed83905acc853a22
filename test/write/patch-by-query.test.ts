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
  await gw.deps.index!.syncNow(gw.s.keys[0]!.teams.map((t) => t.id));
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

  it('limit -1 updates every matched item, as Directus does (was an empty answer)', async () => {
    const res = await patch('/renders?fields=id,title', { query: { limit: -1 }, data: { title: 'all of them' } });
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
