import { authentication, createDirectus, readMe, rest } from '@directus/sdk';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

/** SDK 20+ (Node 22, the CI's second run) logs in with an object; SDK 18 (Node 20) with two arguments. */
const SDK_MAJOR = Number((JSON.parse(readFileSync(createRequire(import.meta.url).resolve('@directus/sdk/package.json'), 'utf8')) as { version: string }).version.split('.')[0]);
const login = (client: any, email: string, password: string) => (SDK_MAJOR >= 20 ? client.login({ email, password }) : client.login(email, password));
import { ManualClock } from '../../src/lib/clock.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';

describe('a real client: the Directus JavaScript SDK', () => {
  let gw: TestGateway;
  let base = '';
  // the gateway's time moves only when told: token expiry is decided by it, not by a sleep
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    gw = await startGateway({ ACCESS_TOKEN_TTL: '1s' }, {}, { clock });
    await gw.addUser(0, 'sdk@example.com', 'sdk-password-123');
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => gw.close());

  it('logs in, refreshes automatically once the token has expired, reads /users/me and logs out', async () => {
    const rotate = vi.spyOn(gw.deps.sessions, 'rotate');
    const client = createDirectus(base).with(authentication('json', { autoRefresh: true })).with(rest());
    const auth = await login(client, 'sdk@example.com', 'sdk-password-123');
    expect(auth.expires).toBe(1000);
    const firstToken = (await client.getToken())!;
    expect(await client.request(readMe({ fields: ['id', 'email'] }))).toMatchObject({ email: 'sdk@example.com' });
    clock.advance(2_000);
    // the first access token is expired now, by the gateway's clock
    const raw = await fetch(`${base}/users/me`, { headers: { authorization: `Bearer ${firstToken}` } });
    expect(raw.status).toBe(401);
    expect(((await raw.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('TOKEN_EXPIRED');
    // the SDK refreshes (a token of 1 s is always within its refresh margin) and reads on
    const me = await client.request(readMe());
    expect(me.email).toBe('sdk@example.com');
    expect(rotate).toHaveBeenCalled();
    expect((await rotate.mock.results.at(-1)!.value).ok).toBe(true);
    expect(await client.getToken()).not.toBe(firstToken);
    await client.logout();
    expect(await client.getToken()).toBeNull();
  });
});

describe('the Directus SDK item functions (/items/<collection>)', () => {
  let gw: TestGateway;
  let base = '';
  beforeAll(async () => {
    gw = await startGateway();
    await gw.addUser(0, 'items@example.com', 'items-password-123');
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => gw.close());

  it('readItems, readItem, aggregate, createItem and updateItem answer as the legacy routes do', async () => {
    const { readItems, readItem, aggregate, createItem, updateItem } = await import('@directus/sdk');
    const client = createDirectus<any>(base).with(authentication('json')).with(rest());
    await login(client, 'items@example.com', 'items-password-123');
    const token = (await client.getToken())!;
    const list = await client.request(readItems('renders', { fields: ['id', 'title', 'status'], filter: { status: { _eq: 'complete' } }, sort: ['-date_created'], limit: 3 }));
    const legacy = await gw.get('/renders?fields=id,title,status&filter[status][_eq]=complete&sort=-date_created&limit=3', token);
    expect(list).toEqual(legacy.body.data);
    expect(list.length).toBe(3);
    const one = await client.request(readItem('renders', list[0]!.id, { fields: ['id', 'project.title'] }));
    expect(one).toEqual((await gw.get(`/renders/${list[0]!.id}?fields=id,project.title`, token)).body.data);
    const counts = await client.request(aggregate('renders', { aggregate: { count: '*' }, groupBy: ['status'] }));
    expect(counts).toEqual((await gw.get('/renders?aggregate[count]=*&groupBy=status', token)).body.data);
    const project = (await client.request(readItems('projects', { fields: ['id', 'account'], limit: 1 })))[0]!;
    const created = await client.request(createItem('renders', { project: project.id, account: project.account, data: { title: 'From the SDK' } }));
    expect(created).toMatchObject({ title: 'From the SDK', project: project.id, status: 'draft' });
    const renamed = await client.request(updateItem('projects', project.id, { title: 'Renamed by the SDK' }));
    expect(renamed.title).toBe('Renamed by the SDK');
    const usage = (await gw.get('/_gateway/usage', TEST_ENV.GATEWAY_ADMIN_TOKEN)).body.data.map((u: { route: string }) => u.route);
    expect(usage).toEqual(expect.arrayContaining(['GET /items/renders', 'GET /items/renders/:id', 'POST /items/renders', 'PATCH /items/projects/:id']));
  });
});
