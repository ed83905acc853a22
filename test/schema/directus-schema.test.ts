import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMappings } from '../../src/config/mappings.js';
import { describeSchema } from '../../src/schema/directus-schema.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * The schema routes describe exactly what the gateway serves, in Directus's shapes: the fields of each collection are the
 * mapping's fields and the keys of a real `fields=*` answer; the shapes are what a real Directus 10.10 answered
 * (test/fixtures/directus/schema-answers.json, captured from collections made with the mapping's types), but for the
 * numbering of field and relation ids; unknown collections and fields are 403, as there.
 */
type Answer = { status: number; body: any };
const oracle = JSON.parse(readFileSync('test/fixtures/directus/schema-answers.json', 'utf8')) as Record<string, Answer>;
const COLLECTIONS = ['accounts', 'projects', 'renders', 'templates'];
/** Field and relation answers without Directus's row ids and sort positions (creation order, not meaning). */
const unnumbered = (x: any): any => {
  if (Array.isArray(x)) return x.map(unnumbered);
  if (!x || typeof x !== 'object') return x;
  const { meta, ...rest } = x;
  if (!meta || typeof meta !== 'object') return x;
  const { id: _id, sort: _sort, ...m } = meta;
  return { ...rest, meta: m };
};
const byField = (xs: any[]) => [...xs].sort((a, b) => `${a.collection}.${a.field}`.localeCompare(`${b.collection}.${b.field}`));

describe('the schema routes', () => {
  let gw: TestGateway;
  let token = '';
  beforeAll(async () => {
    gw = await startGateway();
    await gw.addUser(0, 'schema@example.com');
    token = await gw.login('schema@example.com');
  });
  afterAll(async () => gw.close());
  /** Status and body of a GET with `t` (the signed-in user's token by default; null: none). */
  const ask = async (url: string, t: string | null = token): Promise<Answer> => {
    const r = await gw.get(url, t ?? undefined);
    return { status: r.status, body: r.body };
  };

  it('list each collection with the fields the mappings give it and a real answer carries', async () => {
    const mappings = loadMappings('mappings');
    const fromMappings = Object.values(mappings.resources).filter((r) => !r.collection.startsWith('directus_'));
    expect(fromMappings.map((r) => r.collection).sort()).toEqual(COLLECTIONS);
    const collections = await ask('/collections');
    expect(collections.status).toBe(200);
    expect(collections.body.data.map((c: any) => c.collection)).toEqual(COLLECTIONS);
    for (const r of fromMappings) {
      const fields = (await ask(`/fields/${r.collection}`)).body.data as { field: string; type: string }[];
      expect(Object.fromEntries(fields.map((f) => [f.field, f.type]))).toEqual(Object.fromEntries(Object.entries(r.fields).map(([n, f]) => [n, f.type])));
      // the parser's schema and a real answer agree with it
      expect(Object.keys(mappings.schemas[Object.keys(mappings.resources).find((k) => mappings.resources[k] === r)!]!.fields).sort()).toEqual(fields.map((f) => f.field).sort());
      const item = (await ask(`/${r.collection}?fields=*&limit=1`)).body.data[0];
      expect(Object.keys(item).sort()).toEqual(fields.map((f) => f.field).sort());
    }
    // /fields holds every collection's fields, /fields/:c/:f one of them
    expect(byField((await ask('/fields')).body.data)).toEqual(byField(describeSchema(mappings).fields as any[]));
    expect((await ask('/fields/renders/title')).body.data).toMatchObject({ collection: 'renders', field: 'title', type: 'string' });
  });

  it('answer in the shapes of a real Directus 10.10 (the captured answers), ids aside', async () => {
    expect((await ask('/collections')).body).toEqual(oracle['GET /collections']!.body);
    expect((await ask('/collections/renders')).body).toEqual(oracle['GET /collections/renders']!.body);
    for (const c of COLLECTIONS) {
      const mine = (await ask(`/fields/${c}`)).body.data;
      expect(byField(unnumbered(mine)), c).toEqual(byField(unnumbered(oracle[`GET /fields/${c}`]!.body.data)));
      // columns in the mapping's order, as Directus lists them (aliases last)
      const columns = (xs: any[]) => xs.filter((f) => f.type !== 'alias').map((f) => f.field);
      expect(columns(mine)).toEqual(columns(oracle[`GET /fields/${c}`]!.body.data));
      expect(unnumbered((await ask(`/relations/${c}`)).body.data), c).toEqual(unnumbered(oracle[`GET /relations/${c}`]!.body.data));
    }
    expect(unnumbered((await ask('/fields/renders/title')).body.data)).toEqual(unnumbered(oracle['GET /fields/renders/title']!.body.data));
    const rel = (xs: any[]) => unnumbered(xs).sort((a: any, b: any) => `${a.collection}.${a.field}`.localeCompare(`${b.collection}.${b.field}`));
    expect(rel((await ask('/relations')).body.data)).toEqual(rel(oracle['GET /relations']!.body.data));
  });

  it('refuse unknown collections and fields, and the public role, with 403 FORBIDDEN as Directus', async () => {
    for (const url of ['/collections/nope', '/fields/nope', '/fields/renders/nope', '/relations/nope']) {
      const r = await ask(url);
      expect({ url, ...r }).toEqual({ url, ...oracle[`GET ${url}`] });
    }
    expect(await ask('/collections', null)).toEqual(oracle['GET /collections (no token)']);
    // the gateway describes the legacy collections only (a deliberate difference: Directus shows its system collections)
    expect(oracle['GET /collections/directus_users']!.status).toBe(200);
    expect((await ask('/collections/directus_users')).status).toBe(403);
    expect((await ask('/collections/__proto__')).status).toBe(403);
    expect((await ask('/fields/renders/constructor')).status).toBe(403);
  });

  it('/server/info: the public part to anyone, the limits and version to a signed-in user', async () => {
    expect(await ask('/server/info', null)).toEqual(oracle['GET /server/info (no token)']);
    expect(await ask('/server/info')).toEqual(oracle['GET /server/info']);
    const limited = await startGateway({ QUERY_LIMIT_MAX: '500' });
    try {
      await limited.addUser(0, 'schema@example.com');
      const t = await limited.login('schema@example.com');
      expect((await limited.get('/server/info', t)).body.data.queryLimit).toEqual({ default: 100, max: 500 });
    } finally { await limited.close(); }
    expect((await ask('/server/info', 'not-a-known-token')).status).toBe(401);
  });

  it('GraphQL and the websocket are not served: a Directus 404 that says so', async () => {
    for (const [method, url] of [['GET', '/graphql'], ['POST', '/graphql'], ['POST', '/graphql/system'], ['GET', '/websocket']] as const) {
      const r = await gw.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(method === 'POST' ? { payload: { query: '{ renders { id } }' } } : {}) });
      expect(r.statusCode, url).toBe(404);
      const e = r.json().errors[0];
      expect(e.message).toBe(`Route ${url} doesn't exist.`);
      expect(e.extensions).toMatchObject({ code: 'ROUTE_NOT_FOUND', path: url });
      expect(e.extensions.reason).toMatch(/not served by this gateway/);
    }
    expect(oracle['GET /websocket']!.body.errors[0].extensions).toEqual({ code: 'ROUTE_NOT_FOUND', path: '/websocket' });
  });
});
