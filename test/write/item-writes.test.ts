import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Reads that fail, and writes, as a real Directus 10.10 answered them to a non-admin role shaped like the legacy users'
 * (test/fixtures/directus/clients-answers.json, captured by `npm run capture:directus` from clients-cases.json over the
 * same data). Every case runs in the capture's order (writes change what later cases see, on both sides) and is held to
 * Directus's status and code — or, where the case says so, to the gateway's deliberate answer (docs/clients.md).
 */
interface Case { name: string; method: string; path: string; body?: unknown; raw?: string; gateway?: { status: number; code: string }; because?: string }
interface Captured { method: string; path: string; status: number; body: unknown }
const cases = JSON.parse(readFileSync('test/fixtures/directus/clients-cases.json', 'utf8')) as Case[];
const captured = JSON.parse(readFileSync('test/fixtures/directus/clients-answers.json', 'utf8')) as {
  values: Record<string, string>; answers: Record<string, Captured>;
};
const fill = <T>(v: T): T => JSON.parse(JSON.stringify(v).replace(/\{\{(\w+)\}\}/g, (_, k: string) => captured.values[k] ?? k)) as T;
const codeOf = (body: unknown) => (body as { errors?: { extensions?: { code?: string } }[] } | null)?.errors?.[0]?.extensions?.code;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** New uuids (of items a case created) differ on each side: they are compared as "a new id"; known ones as they are. */
function normalised(v: unknown, known: ReadonlySet<string>): unknown {
  if (typeof v === 'string') return UUID.test(v) && !known.has(v) ? '<new id>' : v;
  if (Array.isArray(v)) return v.map((x) => normalised(x, known));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalised(x, known)]));
  return v;
}
const ids = (data: unknown) => (Array.isArray(data) ? data.map((x: { id?: string }) => x.id ?? '') : []);

let gw: TestGateway;
let token: string;
let known: Set<string>;
beforeAll(async () => {
  gw = await startGateway({}, { scale: 'tiny' });
  await gw.addUser(0, 'ann@example.com');
  token = await gw.login('ann@example.com');
  known = new Set(Object.values(captured.values));
  // what Directus holds (the gateway's data): every uuid a client was given is known to the gateway
  for (const c of ['renders', 'projects', 'accounts', 'templates']) {
    for (const x of (await gw.get(`/${c}?limit=-1&fields=id`, token)).body.data as { id: string }[]) known.add(x.id);
  }
  await gw.deps.replica!.syncNow(gw.s.keys[0]!.teams.map((t) => t.id));
});
afterAll(async () => gw.close());

describe('reads that fail, and writes, as Directus 10.10 answers them to the legacy role', () => {
  it('the fixtures hold an answer for every case, in the same order', () => {
    expect(Object.keys(captured.answers)).toEqual(cases.map((c) => c.name));
  });

  for (const c of cases) {
    it(c.name, async () => {
      const dx = captured.answers[c.name]!;
      const f = fill(c);
      const payload = f.raw ?? (f.body === undefined ? undefined : JSON.stringify(f.body));
      const res = await gw.app.inject({
        method: f.method as 'GET', url: f.path, payload,
        headers: { authorization: `Bearer ${token}`, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
      });
      const body: unknown = res.body ? JSON.parse(res.body) : null;
      if (c.gateway) {
        // a deliberate difference: Directus's answer is what the table says, the gateway's is its own
        expect([dx.status, codeOf(dx.body)]).not.toEqual([c.gateway.status, c.gateway.code]);
        expect([res.statusCode, codeOf(body)], res.body).toEqual([c.gateway.status, c.gateway.code]);
        return;
      }
      expect([res.statusCode, codeOf(body)], res.body).toEqual([dx.status, codeOf(dx.body)]);
      if (dx.status >= 300) return;
      const ours = (body as { data: unknown }).data;
      const theirs = (dx.body as { data: unknown }).data;
      if (Array.isArray(theirs) && theirs.some((x: { id?: string }) => x.id && !known.has(x.id))) {
        // items made by the case: new ids on each side; both in primary-key order, the same items otherwise
        expect(ids(theirs)).toEqual([...ids(theirs)].sort());
        expect(ids(ours)).toEqual([...ids(ours)].sort());
        const sorted = (a: unknown) => (normalised(a, known) as unknown[]).map((x) => JSON.stringify(x)).sort();
        expect(sorted(ours)).toEqual(sorted(theirs));
        return;
      }
      expect(normalised(ours, known)).toEqual(normalised(theirs, known));
    });
  }
});

describe('the reads that drop unknown fields and ignore deep, on the live path too (INDEX_ENABLED=false)', () => {
  it('answers as Directus answered', async () => {
    const live = await startGateway({ INDEX_ENABLED: 'false' }, { scale: 'tiny' });
    try {
      await live.addUser(0, 'live@example.com');
      const t = await live.login('live@example.com');
      for (const c of cases.filter((x) => /^(fields|deep)/.test(x.name))) {
        const dx = captured.answers[c.name]!;
        const res = await live.get(fill(c.path), t);
        expect(res.headers['x-gateway-source'], c.name).toBe('live');
        expect([res.status, res.body], c.name).toEqual([dx.status, dx.body]);
      }
    } finally {
      await live.close();
    }
  });
});

describe('the Directus SDK write functions (/items/renders)', () => {
  let g: TestGateway;
  let base = '';
  beforeAll(async () => {
    g = await startGateway({}, { scale: 'tiny' });
    await g.addUser(0, 'sdk-writes@example.com', 'sdk-password-123');
    base = await g.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => g.close());

  it('createItem, createItems, updateItem, updateItems (keys or a query) and updateItemsBatch answer as Directus; deleteItem and deleteItems are 403', async () => {
    const sdk = await import('@directus/sdk');
    const { createDirectus, authentication, rest, createItem, createItems, updateItem, updateItems, updateItemsBatch, deleteItem, deleteItems, readItems } = sdk;
    const client = createDirectus<any>(base).with(authentication('json')).with(rest());
    // SDK 20+ (Node 22, the CI's second run) logs in with an object; SDK 18 (Node 20) with two arguments
    const major = Number((JSON.parse(readFileSync(createRequire(import.meta.url).resolve('@directus/sdk/package.json'), 'utf8')) as { version: string }).version.split('.')[0]);
    const c = client as any;
    await (major >= 20 ? c.login({ email: 'sdk-writes@example.com', password: 'sdk-password-123' }) : c.login('sdk-writes@example.com', 'sdk-password-123'));
    const reach = new Set(g.s.keys[0]!.teams.filter((t) => g.s.sim.world.teams.get(t.id)!.credits > 0).map((t) => t.id));
    const projects = await client.request(readItems('projects', { fields: ['id', 'account'], limit: -1 }));
    const { derivedUuid } = await import('../../src/translate/ids.js');
    const project = projects.find((p: Record<string, any>) => [...reach].some((t) => derivedUuid('account', t) === p.account))!;
    const item = (title: string) => ({ project: project.id, account: project.account, data: {}, title });
    const fields = { fields: ['id', 'title'] };

    const one = await client.request(createItem('renders', item('SDK one'), fields));
    expect(one).toEqual({ id: expect.stringMatching(UUID), title: 'SDK one' });
    const many = await client.request(createItems('renders', [item('SDK b'), item('SDK a'), item('SDK c')], fields));
    expect(many.map((x: Record<string, any>) => x.title).sort()).toEqual(['SDK a', 'SDK b', 'SDK c']);
    expect(ids(many)).toEqual([...ids(many)].sort()); // primary-key order, as Directus answers
    expect(await client.request(updateItem('renders', one.id, { title: 'SDK renamed' }, fields))).toEqual({ id: one.id, title: 'SDK renamed' });
    const keys = ids(many);
    expect(await client.request(updateItems('renders', keys, { title: 'SDK all' }, fields))).toEqual(keys.map((id) => ({ id, title: 'SDK all' })));
    const byQuery = await client.request(updateItems('renders', { filter: { id: { _in: keys } } }, { title: 'SDK query' }, fields));
    expect(byQuery).toEqual(keys.map((id) => ({ id, title: 'SDK query' })));
    const batch = await client.request(updateItemsBatch('renders', [{ id: keys[1], title: 'B1' }, { id: keys[0], title: 'B0' }], fields));
    expect(batch).toEqual([{ id: keys[0], title: 'B0' }, { id: keys[1], title: 'B1' }]);
    for (const refused of [deleteItem<any, any>('renders', one.id), deleteItems<any, any, any>('renders', keys)]) {
      const e = await client.request(refused).then(() => undefined, (x: unknown) => x as { errors: { extensions: { code: string } }[]; response: Response });
      expect(e?.response.status).toBe(403);
      expect(e?.errors[0]!.extensions.code).toBe('FORBIDDEN');
    }
    expect(await client.request(readItems('renders', { fields: ['title'], filter: { id: { _eq: one.id } } }))).toEqual([{ title: 'SDK renamed' }]);
  });
});

describe('an array body: stops at the first failure, and an Idempotency-Key applies per item', () => {
  let g: TestGateway;
  let t: string;
  beforeAll(async () => {
    g = await startGateway({}, { scale: 'tiny' }, { simClock: true });
    await g.addUser(0, 'batch@example.com');
    t = await g.login('batch@example.com');
    await g.get('/projects?limit=-1&fields=id', t);
    await g.get('/accounts?limit=-1&fields=id', t);
  });
  afterAll(async () => g.close());

  it('makes the items before a v1 refusal, answers it with their uuids; the same key never makes an item twice', async () => {
    const { derivedUuid } = await import('../../src/translate/ids.js');
    const world = g.s.sim.world;
    const reach = new Set(g.s.keys[0]!.teams.map((x) => x.id));
    const p = [...world.projects.values()].find((x) => reach.has(x.teamId) && world.teams.get(x.teamId)!.credits > 0)!;
    const q = [...world.projects.values()].find((x) => reach.has(x.teamId) && x.teamId !== p.teamId)!; // another team's project
    const item = (title: string, at = p) => ({ project: derivedUuid('project', at.id), account: derivedUuid('account', at.teamId), data: {}, title });
    const items = [item('Per item 1'), item('Per item 2', q), item('Per item 3')];
    const named = () => [...world.renders.values()].filter((r) => r.name.startsWith('Per item ')).map((r) => r.name).sort();
    const credits = (n: number) =>
      fetch(`${g.s.url}/_sim/credits`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ team_id: q.teamId, credits: n }) });
    const post = () => g.app.inject({
      method: 'POST', url: '/items/renders?fields=id,title', payload: items,
      headers: { authorization: `Bearer ${t}`, 'idempotency-key': 'batch-key-1' },
    });

    await credits(0); // the second item's team has no credits: v1 refuses it (402)
    const first = await post();
    expect(first.statusCode).toBe(402);
    const e = first.json().errors[0];
    expect(e.extensions).toMatchObject({ code: 'PAYMENT_REQUIRED', failed_item: 1, created: [expect.stringMatching(UUID)] });
    expect(named()).toEqual(['Per item 1']);
    const made = e.extensions.created[0] as string;
    expect((await g.get(`/renders/${made}?fields=title`, t)).body.data).toEqual({ title: 'Per item 1' });

    // the same array with the same key: each item's first answer again — the render made is not made twice, the refusal
    // (a 4xx is kept, as for one item) is answered again; the rest is sent on its own, under a new key
    await credits(1000);
    const replay = await post();
    expect(replay.statusCode).toBe(402);
    expect(replay.json().errors[0].extensions.created).toEqual([made]);
    expect(named()).toEqual(['Per item 1']);
    const rest = await g.app.inject({
      method: 'POST', url: '/items/renders?fields=id,title', payload: items.slice(1),
      headers: { authorization: `Bearer ${t}`, 'idempotency-key': 'batch-key-2' },
    });
    expect(rest.json().data.map((x: { title: string }) => x.title).sort()).toEqual(['Per item 2', 'Per item 3']);
    expect(named()).toEqual(['Per item 1', 'Per item 2', 'Per item 3']);
  });

  it('v1 unreachable mid-array: a retry with the same key makes what was not made, once, and replays what was', async () => {
    const { derivedUuid } = await import('../../src/translate/ids.js');
    const world = g.s.sim.world;
    const reach = new Set(g.s.keys[0]!.teams.map((x) => x.id));
    const p = [...world.projects.values()].find((x) => reach.has(x.teamId) && world.teams.get(x.teamId)!.credits > 0)!;
    const item = (title: string) => ({ project: derivedUuid('project', p.id), account: derivedUuid('account', p.teamId), data: {}, title });
    const named = () => [...world.renders.values()].filter((r) => r.name.startsWith('Unreachable ')).map((r) => r.name).sort();
    const post = () => g.app.inject({
      method: 'POST', url: '/items/renders?fields=id,title', payload: [item('Unreachable 1'), item('Unreachable 2')],
      headers: { authorization: `Bearer ${t}`, 'idempotency-key': 'batch-key-3' },
    });
    const fault = (rules: unknown[]) =>
      fetch(`${g.s.url}/_sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ rules }) });
    await fault([{ kind: 'error500', method: 'POST', path: '/v1/renders', count: 1 }]);
    const first = await post();
    await fetch(`${g.s.url}/_sim/faults`, { method: 'DELETE' });
    expect(first.statusCode).toBe(503);
    expect(first.json().errors[0].extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE', outcome: 'not_created', created: [], failed_item: 0 });
    expect(named()).toEqual([]);
    const again = await post();
    expect(again.statusCode).toBe(200);
    expect(named()).toEqual(['Unreachable 1', 'Unreachable 2']);
    const data = again.json().data as { id: string }[];
    expect(data.map((x) => x.id)).toEqual(data.map((x) => x.id).sort());
    // and again: every item replayed, nothing made
    const third = await post();
    expect(third.json()).toEqual(again.json());
    expect(named()).toEqual(['Unreachable 1', 'Unreachable 2']);
  });

  it('a replayed array keeps primary-key order when ?fields= leaves the id out (the key\'s recorded render places it)', async () => {
    const { derivedUuid } = await import('../../src/translate/ids.js');
    const world = g.s.sim.world;
    const reach = new Set(g.s.keys[0]!.teams.map((x) => x.id));
    const p = [...world.projects.values()].find((x) => reach.has(x.teamId) && world.teams.get(x.teamId)!.credits > 0)!;
    const titles = ['Order 1', 'Order 2', 'Order 3', 'Order 4', 'Order 5'];
    const payload = titles.map((title) => ({ project: derivedUuid('project', p.id), account: derivedUuid('account', p.teamId), data: {}, title }));
    const post = () => g.app.inject({
      method: 'POST', url: '/items/renders?fields=title', payload, headers: { authorization: `Bearer ${t}`, 'idempotency-key': 'batch-key-4' },
    });
    const first = await post();
    const order = (first.json().data as { title: string }[]).map((x) => x.title);
    const uuidOf = (title: string) => derivedUuid('render', [...world.renders.values()].find((r) => r.name === title)!.id);
    expect(order).toEqual([...titles].sort((a, b) => uuidOf(a).localeCompare(uuidOf(b))));
    expect(order).not.toEqual(titles); // the order sent is not the answer's (so the replay's order is a real check)
    expect((await post()).json()).toEqual(first.json());
  });

  it('a refused item refuses the whole array before anything is made, as Directus (which rolls back)', async () => {
    const before = g.s.sim.world.renders.size;
    const res = await g.app.inject({
      method: 'POST', url: '/renders', headers: { authorization: `Bearer ${t}` },
      payload: [{ project: captured.values.project, account: captured.values.account, data: {} }, { nope: 1 }],
    });
    expect(res.statusCode).toBe(403);
    expect(g.s.sim.world.renders.size).toBe(before);
  });
});

describe('no write body produces a 500', () => {
  it('holds for arbitrary JSON (arrays, prototype-member keys, keys/data shapes) on every write route and collection', async () => {
    const fc = (await import('fast-check')).default;
    const g = await startGateway({}, { scale: 'tiny' });
    try {
      await g.addUser(0, 'fuzz@example.com');
      const tk = await g.login('fuzz@example.com');
      const id = captured.values.render!;
      const key = fc.constantFrom('project', 'account', 'data', 'title', 'status', 'id', 'keys', 'query', 'nope', ...Object.getOwnPropertyNames(Object.prototype));
      const value = fc.oneof(fc.jsonValue(), fc.constantFrom(id, captured.values.project!, [id], { title: 'x' }, null));
      const item = fc.dictionary(key, value, { maxKeys: 5 });
      await fc.assert(fc.asyncProperty(
        fc.constantFrom('POST', 'PATCH', 'DELETE'),
        fc.constantFrom('/items/renders', `/items/renders/${id}`, '/renders', `/render/${id}`, '/items/projects', `/items/accounts/${id}`, '/items/templates', '/items/nope', '/items/__proto__', '/items/constructor/x'),
        fc.oneof(item, fc.array(item, { maxLength: 3 }), fc.jsonValue(), fc.constantFrom('{"keys":', '"x"', '', '[{"id":1}]')),
        async (method, url, body) => {
          const payload = typeof body === 'string' ? body : JSON.stringify(body);
          const res = await g.app.inject({ method, url, payload, headers: { authorization: `Bearer ${tk}`, 'content-type': 'application/json' } });
          expect(res.statusCode, `${method} ${url} ${payload}`).toBeLessThan(500);
          expect(res.json().errors?.[0]?.extensions?.code ?? 'ok', `${method} ${url} ${payload}`).toMatch(/^(ok|[A-Z_]+)$/);
        },
      ), { numRuns: 300 });
    } finally {
      await g.close();
    }
  }, 120_000);
});
