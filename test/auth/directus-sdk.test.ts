import { authentication, createDirectus, readMe, rest } from '@directus/sdk';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

describe("docs/clients.md's SDK snippet, run as a client runs it", () => {
  // the snippet as the page gives it; each SDK it names runs it in a node process of its own against a listening gateway
  const page = readFileSync('docs/clients.md', 'utf8');
  const snippet = /## Using the Directus SDK[\s\S]*?```js\n([\s\S]*?)```/.exec(page)![1]!;
  const olderLogin = /SDK 17–19[^\n]*: (client\.login\([^)]*\))/.exec(snippet)![1]!;
  const sdks = [
    { name: '@directus/sdk', major: SDK_MAJOR }, // 18 on Node 20; the current major (26) in CI's Node 22 pass
    { name: 'directus-sdk-17', major: 17 },
  ];
  let gw: TestGateway;
  let base = '';
  let token = '';
  beforeAll(async () => {
    gw = await startGateway({}, { scale: 'tiny' });
    await gw.addUser(0, 'demo@example.com', 'demo-password');
    token = await gw.login('demo@example.com', 'demo-password');
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => gw.close());

  for (const sdk of sdks) {
    it(`with ${sdk.name} (major ${sdk.major}): logs in, reads, creates — what the gateway answers`, async () => {
      let code = snippet.replace("from '@directus/sdk'", `from '${sdk.name}'`);
      if (sdk.major < 20) code = code.replace(/^await client\.login\(\{[^\n]*$/m, `await ${olderLogin};`);
      // a folder inside the checkout, so the package names resolve from its node_modules
      const dir = mkdtempSync(join(process.cwd(), '.snippet-'));
      try {
        writeFileSync(join(dir, 'snippet.mjs'), code);
        // asynchronously: the gateway answers from this process
        const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((ok) => {
          execFile(process.execPath, [join(dir, 'snippet.mjs')], { env: { ...process.env, GATEWAY: base }, timeout: 60_000 }, (e, stdout, stderr) => {
            ok({ status: e ? ((e as { code?: number }).code ?? 1) : 0, stdout, stderr });
          });
        });
        expect(run.status, run.stderr).toBe(0);
        const printed = JSON.parse(run.stdout) as { complete: number; statuses: string[]; created: string };
        const complete = (await gw.get('/renders?filter[status][_eq]=complete&fields=id&limit=10', token)).body.data as unknown[];
        expect(complete.length).toBeGreaterThan(0);
        expect(printed).toMatchObject({ complete: complete.length, statuses: ['complete'] });
        const made = await gw.get(`/renders/${printed.created}?fields=title,status`, token);
        expect(made.body.data).toEqual({ title: 'Hello', status: 'draft' });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
