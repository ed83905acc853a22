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
