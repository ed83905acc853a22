import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Relational paths two and three levels deep filter exactly as the same request's projection shows the related values
 * (an independent reading of the answer), on every planned path: merge, scan, meta count, aggregate.
 */
let gw: TestGateway;
let token: string;
beforeAll(async () => {
  gw = await startGateway({}, { scale: 'small' });
  await gw.addUser(0, 'deep@example.com');
  token = await gw.login('deep@example.com');
});
afterAll(async () => gw.close());

describe('filters through two relations', () => {
  it('render → project → account: every account, every planned path', async () => {
    const all = (await gw.get('/renders?limit=-1&fields=id,project.account.name,project.account.id', token)).body.data as any[];
    const names = [...new Set(all.map((r) => r.project.account.name as string))];
    expect(names.length).toBeGreaterThan(1);
    for (const name of names) {
      const expected = all.filter((r) => r.project.account.name === name).map((r) => r.id).sort();
      const f = encodeURIComponent(JSON.stringify({ project: { account: { name: { _eq: name } } } }));
      for (const extra of ['&limit=-1', '&limit=-1&sort=title', '&limit=-1&meta=filter_count']) {
        const got = (await gw.get(`/renders?fields=id&filter=${f}${extra}`, token)).body;
        expect(got.data.map((r: any) => r.id).sort(), `${name} ${extra}`).toEqual(expected);
        if (got.meta) expect(got.meta.filter_count).toBe(expected.length);
      }
      const agg = (await gw.get(`/renders?filter=${f}&aggregate[count]=*`, token)).body.data;
      expect(agg).toEqual([{ count: String(expected.length) }]);
      // the bracket form says the same
      const bracket = (await gw.get(`/renders?fields=id&limit=-1&filter[project][account][name][_eq]=${encodeURIComponent(name)}`, token)).body.data;
      expect(bracket.length).toBe(expected.length);
    }
  });

  it('the same chain ending on the account id', async () => {
    const all = (await gw.get('/renders?limit=-1&fields=id,project.account.id', token)).body.data as any[];
    const acc = all[all.length - 1].project.account.id;
    const expected = all.filter((r) => r.project.account.id === acc).length;
    const got = (await gw.get(`/renders?fields=id&limit=-1&filter=${encodeURIComponent(JSON.stringify({ project: { account: { id: { _eq: acc } } } }))}`, token)).body.data;
    expect(got.length).toBe(expected);
  });
});

describe('sorts through two relations', () => {
  it('sort=-project.account.name,id orders by the account name, then the id', async () => {
    const got = (await gw.get('/renders?limit=-1&fields=id,project.account.name&sort=-project.account.name,id', token)).body.data as any[];
    const collator = new Intl.Collator('en', { sensitivity: 'variant' });
    const expected = [...got].sort((a, b) => -collator.compare(a.project.account.name, b.project.account.name) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    expect(got.map((r) => r.id)).toEqual(expected.map((r) => r.id));
    expect(new Set(got.map((r) => r.project.account.name)).size).toBeGreaterThan(1);
    const page = (await gw.get('/renders?limit=5&fields=id&sort=-project.account.name,id', token)).body.data.map((r: any) => r.id);
    expect(page).toEqual(expected.slice(0, 5).map((r) => r.id));
  });
});
