import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let token: string;
let total: number;
beforeAll(async () => {
  gw = await startGateway({ MAX_RELATED_ITEMS: '40', MAX_RELATIONAL_DEPTH: '3' });
  await gw.addUser(0, 'ann@example.com');
  token = await gw.login('ann@example.com');
  total = (await gw.get('/renders?limit=0&meta=total_count', token)).body.meta.total_count;
});
afterAll(async () => gw.close());

const refusedFor = (body: any, limit: string) => {
  expect(body.errors[0].extensions.code).toBe('INVALID_QUERY');
  expect(body.errors[0].message).toContain(limit);
};

describe('MAX_RELATED_ITEMS: a budget on related items expanded into one answer', () => {
  it('refuses an exploding wildcard selection with a 400 naming the limit', async () => {
    for (const url of ['/accounts?fields=*.*.*', '/projects?fields=*.*.*', '/accounts?fields=renders.project.*']) {
      const res = await gw.get(url, token);
      expect(res.status, url).toBe(400);
      refusedFor(res.body, 'MAX_RELATED_ITEMS');
    }
  });

  it('refuses a streamed answer that expands relations before any byte is sent (a whole 400, not a cut body)', async () => {
    expect(total).toBeGreaterThan(40);
    const res = await gw.app.inject({ method: 'GET', url: '/renders?limit=-1&fields=id,project.title', headers: { authorization: `Bearer ${token}` } });
    expect(res.statusCode).toBe(400);
    refusedFor(res.json(), 'MAX_RELATED_ITEMS');
  });

  it('does not limit top-level items that stream without relational expansion', async () => {
    const res = await gw.get('/renders?limit=-1&fields=id,title,status', token);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(total);
  });

  it('counts only what the answer holds: a small expansion passes', async () => {
    const res = await gw.get('/renders?limit=10&fields=id,project.title,account.name', token);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(10);
    expect(res.body.data.every((r: any) => typeof r.project.title === 'string')).toBe(true);
  });
});

describe('MAX_RELATIONAL_DEPTH: counted over fields, filter and sort', () => {
  it.each([
    ['fields', '/renders?fields=project.account.renders.id'],
    ['filter', '/renders?filter[project][account][renders][title][_eq]=x'],
    ['filter (JSON)', `/renders?filter=${encodeURIComponent('{"project":{"account":{"renders":{"title":{"_eq":"x"}}}}}')}`],
    ['sort', '/renders?sort=project.account.name.x'],
  ])('%s beyond the depth is a 400 naming it', async (_where, url) => {
    const res = await gw.get(url, token);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('Max relational depth exceeded');
  });
  it('paths within the depth still answer', async () => {
    expect((await gw.get('/renders?limit=1&fields=id,project.account.name', token)).status).toBe(200);
    expect((await gw.get('/renders?limit=1&filter[project][account][name][_nnull]=true', token)).status).toBe(200);
  });
});

describe('deep and alias count against the same limits', () => {
  it('related items chosen by deep (or listed under an alias) are charged to MAX_RELATED_ITEMS', async () => {
    // 8 projects × 8 renders here: four of each fit in 40, every one does not
    const few = await gw.get('/projects?fields=id,renders&limit=-1&deep[renders][_limit]=4', token);
    expect(few.status).toBe(200);
    expect(few.body.data.every((p: { renders: string[] }) => p.renders.length === 4)).toBe(true);
    const many = await gw.get('/projects?fields=id,renders&limit=-1&deep[renders][_limit]=-1', token);
    expect(many.status).toBe(400);
    refusedFor(many.body, 'MAX_RELATED_ITEMS');
    // an alias lists the relation a second time: both lists count
    const both = '/projects?fields=id,renders,all&alias[all]=renders&limit=-1&deep[renders][_limit]=2';
    expect((await gw.get(`${both}&deep[all][_limit]=2`, token)).status).toBe(200);
    const over = await gw.get(`${both}&deep[all][_limit]=4`, token);
    expect(over.status).toBe(400);
    refusedFor(over.body, 'MAX_RELATED_ITEMS');
  });

  it('deep paths count against MAX_RELATIONAL_DEPTH (3 here)', async () => {
    const ok = await gw.get('/accounts?fields=id&deep[projects][renders][_limit]=1', token);
    expect(ok.status).toBe(200);
    const deep = await gw.get('/accounts?fields=id&deep[projects][renders][project][_limit]=1', token);
    expect(deep.status).toBe(400);
    expect(deep.body.errors[0].message).toContain('Max relational depth exceeded');
  });
});
