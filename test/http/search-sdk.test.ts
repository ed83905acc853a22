import { aggregate, authentication, createDirectus, createItem, readItem, readItems, readMe, rest, updateItem, withSearch } from '@directus/sdk';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';

/**
 * The Directus SDK's withSearch(): its list reads go out as SEARCH /items/<collection> with `{"query": ...}` (the SDK puts
 * its query-string values in the body: filter, deep and aggregate as JSON strings, limit as a string, fields as a list).
 * The flows of the json-mode SDK test, with the lists and aggregates searched.
 */
const SDK_MAJOR = Number((JSON.parse(readFileSync(createRequire(import.meta.url).resolve('@directus/sdk/package.json'), 'utf8')) as { version: string }).version.split('.')[0]);
const login = (client: any, email: string, password: string) => (SDK_MAJOR >= 20 ? client.login({ email, password }) : client.login(email, password));

describe('the Directus SDK with withSearch()', () => {
  let gw: TestGateway;
  let base = '';
  beforeAll(async () => {
    gw = await startGateway();
    await gw.addUser(0, 'search@example.com', 'search-password-1');
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => gw.close());

  it('readItems, aggregate and deep reads as SEARCH, with readItem, createItem, updateItem and readMe, as the GET flows answer', async () => {
    const methods: string[] = [];
    const spy: typeof fetch = async (input, init) => { methods.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`); return fetch(input, init); };
    const client = createDirectus<any>(base, { globals: { fetch: spy } }).with(authentication('json')).with(rest());
    await login(client, 'search@example.com', 'search-password-1');
    const token = (await client.getToken())!;
    const query = { fields: ['id', 'title', 'status'], filter: { status: { _eq: 'complete' } }, sort: ['-date_created'], limit: 3 };
    const list = await client.request(withSearch(readItems('renders', query)));
    expect(list).toEqual((await gw.get('/renders?fields=id,title,status&filter[status][_eq]=complete&sort=-date_created&limit=3', token)).body.data);
    expect(list.length).toBe(3);
    expect(methods).toContain('SEARCH /items/renders');
    const counts = await client.request(withSearch(aggregate('renders', { aggregate: { count: '*' }, groupBy: ['status'] })));
    expect(counts).toEqual((await gw.get('/renders?aggregate[count]=*&groupBy=status', token)).body.data);
    const deep = await client.request(withSearch(readItems('projects', { fields: ['id', { renders: ['id', 'title'] }], deep: { renders: { _limit: 1, _sort: ['title'] } }, sort: ['id'], limit: 2 })));
    expect(deep).toEqual((await gw.get('/projects?fields=id,renders.id,renders.title&deep[renders][_limit]=1&deep[renders][_sort]=title&sort=id&limit=2', token)).body.data);
    // an item's own route has no SEARCH (as on Directus): readItem stays a GET
    const one = await client.request(readItem('renders', list[0]!.id, { fields: ['id', 'project.title'] }));
    expect(one).toEqual((await gw.get(`/renders/${list[0]!.id}?fields=id,project.title`, token)).body.data);
    await expect(client.request(withSearch(readItem('renders', list[0]!.id)))).rejects.toMatchObject({ response: { status: 404 } });
    const project = (await client.request(withSearch(readItems('projects', { fields: ['id', 'account'], limit: 1 }))))[0]!;
    const created = await client.request(createItem('renders', { project: project.id, account: project.account, data: { title: 'Searched, then created' } }));
    expect(created).toMatchObject({ title: 'Searched, then created', project: project.id });
    const renamed = await client.request(updateItem('projects', project.id, { title: 'Renamed after a search' }));
    expect(renamed.title).toBe('Renamed after a search');
    expect((await client.request(readMe({ fields: ['email'] }))).email).toBe('search@example.com');
    const usage = (await gw.get('/_gateway/usage', TEST_ENV.GATEWAY_ADMIN_TOKEN)).body.data.map((u: { route: string }) => u.route);
    expect(usage).toEqual(expect.arrayContaining(['SEARCH /items/renders', 'SEARCH /items/projects', 'POST /items/renders']));
  });
});
