import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { derivedUuid } from '../../src/translate/ids.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * `GET /users` and `SEARCH /users` answer as Directus 10.10 answers the legacy role (its permission on directus_users is
 * the current user): the caller's own user, with the query language over it — what Python clients' user look-ups send.
 */
let gw: TestGateway;
let token: string;
let me: Record<string, unknown>;
beforeAll(async () => {
  gw = await startGateway({ MAX_RELATED_ITEMS: '200' }, { scale: 'tiny' });
  await gw.addUser(0, 'ann@example.com');
  await gw.addUser(1, 'bob@example.com');
  token = await gw.login('ann@example.com');
  me = (await gw.get('/users/me?fields=*', token)).body.data;
});
afterAll(async () => gw.close());

const search = async (query: unknown, t = token) => {
  const res = await gw.app.inject({ method: 'SEARCH', url: '/users', headers: { authorization: `Bearer ${t}` }, payload: { query } });
  return { status: res.statusCode, body: JSON.parse(res.body) };
};

describe('the users the legacy role reads: its own', () => {
  it('GET /users is the caller alone, shaped by fields, as /users/me is', async () => {
    const all = await gw.get('/users?fields=*', token);
    expect(all.status).toBe(200);
    expect(all.body.data).toEqual([me]);
    expect((await gw.get('/users?fields=id,email', token)).body.data).toEqual([{ id: me.id, email: 'ann@example.com' }]);
    const counted = await gw.get('/users?fields=id&meta=*&filter[email][_eq]=bob@example.com', token);
    expect(counted.body).toEqual({ meta: { total_count: 1, filter_count: 0 }, data: [] });
  });

  it('SEARCH /users: a look-up by email finds the caller, never another user', async () => {
    expect(await search({ filter: { email: { _eq: 'ann@example.com' } }, fields: ['id', 'first_name'] })).toEqual({
      status: 200, body: { data: [{ id: me.id, first_name: me.first_name }] },
    });
    expect((await search({ filter: { email: { _eq: 'bob@example.com' } } })).body).toEqual({ data: [] });
    expect((await search({ search: 'ann', fields: ['email'] })).body).toEqual({ data: [{ email: 'ann@example.com' }] });
    expect((await search({ limit: 1, offset: 1 })).body).toEqual({ data: [] });
    // relations reach the accounts the bound key reaches
    const team = gw.s.keys[0]!.teams[0]!.id;
    const withAccounts = await search({ fields: ['id', 'accounts.id'], filter: { accounts: { id: { _eq: derivedUuid('account', team) } } } });
    expect(withAccounts.body.data).toHaveLength(1);
    expect((withAccounts.body.data[0].accounts as { id: string }[]).map((a) => a.id)).toContain(derivedUuid('account', team));
  });

  it('wildcards charge the expansion budget as /users/me does: a clear 400, never an answer past MAX_RELATED_ITEMS', async () => {
    for (const url of ['/users?fields=*.*.*.*.*', '/users/me?fields=*.*.*.*.*']) {
      const r = await gw.get(url, token);
      expect(r.status, url).toBe(400);
      expect(r.body.errors[0].message, url).toContain('MAX_RELATED_ITEMS');
    }
    const searched = await search({ fields: ['*.*.*.*.*'] });
    expect(searched.status).toBe(400);
  });

  it('bad questions are Directus\'s 400s; no token is 403', async () => {
    const bad = await search({ filter: { nope: { _eq: 1 } } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].extensions.code).toBe('INVALID_QUERY');
    const anonymous = await gw.app.inject({ method: 'SEARCH', url: '/users', payload: { query: {} } });
    expect(anonymous.statusCode).toBe(403);
    expect((await gw.get('/users')).status).toBe(403);
  });

  it('deep applies under the user as under /accounts: _limit and _filter choose each account\'s related items (attack pass 11, M: ignored)', async () => {
    type Acc = { id: string; renders: { id: string; title: string }[] };
    const byId = (list: Acc[]) => Object.fromEntries(list.map((a) => [a.id, a.renders]));
    const fields = 'id,renders.id,renders.title';
    // the reference: the same accounts read as /accounts, with the same deep options
    const ref = async (deep: string) => byId((await gw.get(`/accounts?fields=${fields}&${deep}`, token)).body.data as Acc[]);
    const mine = async (deep: string) => {
      const one = await gw.get(`/users/me?fields=accounts.${fields.split(',').join(',accounts.')}&${deep.replace(/deep\[/g, 'deep[accounts][')}`, token);
      expect(one.status).toBe(200);
      const list = await gw.get(`/users?fields=accounts.${fields.split(',').join(',accounts.')}&${deep.replace(/deep\[/g, 'deep[accounts][')}`, token);
      expect(list.body.data).toEqual([one.body.data]);
      return byId(one.body.data.accounts as Acc[]);
    };
    const limited = await mine('deep[renders][_limit]=1');
    expect(Object.values(limited).every((r) => r.length <= 1)).toBe(true);
    expect(Object.values(limited).some((r) => r.length === 1)).toBe(true);
    expect(limited).toEqual(await ref('deep[renders][_limit]=1'));
    const all = await ref('deep[renders][_limit]=-1');
    const title = Object.values(all).flat()[0]!.title;
    const filtered = await mine(`deep[renders][_filter][title][_eq]=${encodeURIComponent(title)}`);
    expect(filtered).toEqual(await ref(`deep[renders][_filter][title][_eq]=${encodeURIComponent(title)}`));
    expect(Object.values(filtered).flat().every((r) => r.title === title)).toBe(true);
    expect(Object.values(filtered).flat().length).toBeGreaterThan(0);
    expect(Object.values(filtered).flat().length).toBeLessThan(Object.values(all).flat().length);
  });
});
