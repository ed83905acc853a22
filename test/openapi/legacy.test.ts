import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { componentName } from '../../src/openapi/legacy.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let token: string;
let doc: any;
beforeAll(async () => {
  gw = await startGateway();
  await gw.addUser(0, 'ann@example.com');
  token = await gw.login('ann@example.com');
  doc = (await gw.get('/server/specs/oas')).body;
});
afterAll(async () => gw.close());

/** Response schemas compiled with the document's components, so $refs resolve. */
function validatorFor(schema: unknown) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema({ $id: 'doc', components: doc.components });
  const rewrite = (v: unknown): unknown => Array.isArray(v) ? v.map(rewrite)
    : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === '$ref' && typeof x === 'string' ? `doc${x}` : rewrite(x)])) : v;
  return ajv.compile(rewrite(schema) as object);
}
const responseSchema = (path: string, method: string, status: number) => doc.paths[path][method].responses[String(status)].content['application/json'].schema;

describe('the legacy OpenAPI document', () => {
  it('is valid OpenAPI 3.1 (checked by a real validator), at /server/specs/oas and /openapi.json', async () => {
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
    expect((await gw.get('/openapi.json')).body).toEqual(doc);
  });

  it('is generated from the mappings: every resource and field, the status values, the query parameters, auth', () => {
    for (const r of Object.values(gw.deps.mappings.schemas)) {
      const s = doc.components.schemas[componentName(r.name)];
      expect(Object.keys(s.properties).sort()).toEqual(Object.keys(r.fields).sort());
      expect(s['x-collection']).toBe(r.name);
    }
    expect(doc.components.schemas.ItemsRenders.properties.status.enum.sort()).toEqual(Object.keys(gw.deps.mappings.status.toV1).sort());
    const params = doc.paths['/renders'].get.parameters.map((p: { name: string }) => p.name);
    expect(params).toEqual(['fields', 'filter', 'search', 'sort', 'limit', 'offset', 'page', 'meta', 'aggregate', 'groupBy', 'deep', 'alias', 'export']);
    // every parameter the query parser reads is documented (the parser's own source is the reference)
    const read = [...readFileSync('src/query/parse-query.ts', 'utf8').matchAll(/raw\.([a-zA-Z]+)/g)].map((m) => m[1]);
    expect(read.length).toBeGreaterThan(8);
    for (const name of read) expect(params, name).toContain(name);
    for (const p of ['fields', 'deep', 'alias', 'export']) expect(doc.paths['/renders/{id}'].get.parameters.map((x: { name: string }) => x.name), p).toContain(p);
    for (const p of ['/auth/login', '/auth/refresh', '/auth/logout', '/users/me', '/items/renders', '/items/projects/{id}', '/server/health']) expect(doc.paths[p], p).toBeDefined();
  });

  it('names each collection\'s schema as Directus 10.10 does, with the properties Directus lists', () => {
    // what a real Directus 10.10 listed for the legacy collections (GET /server/specs/oas, 2026-11-28, the oracle)
    const directus: Record<string, string[]> = {
      ItemsRenders: ['id', 'user_created', 'date_created', 'date_updated', 'process_id', 'account', 'project', 'title', 'playback_id', 'download_ready',
        'status', 'data', 'output'],
    };
    for (const [name, props] of Object.entries(directus)) {
      expect(doc.components.schemas[name]?.['x-collection'], name).toBe(name.slice(5).toLowerCase());
      expect(Object.keys(doc.components.schemas[name].properties), name).toEqual(expect.arrayContaining(props));
    }
    expect(componentName('directus_users')).toBe('Users');
    for (const c of ['renders', 'projects', 'accounts', 'templates']) {
      expect(doc.paths[`/items/${c}`].get.responses['200'].content['application/json'].schema.properties.data.items).toEqual({ $ref: `#/components/schemas/${componentName(c)}` });
    }
  });

  it('describes what the gateway really answers: a list, an item and an error envelope', async () => {
    const list = await gw.get('/renders?limit=3&fields=*,project.*', token);
    const v = validatorFor(responseSchema('/renders', 'get', 200));
    expect(v(list.body) ? [] : v.errors).toEqual([]);
    const one = await gw.get(`/projects/${(await gw.get('/projects?limit=1&fields=id', token)).body.data[0].id}`, token);
    const v1 = validatorFor(responseSchema('/projects/{id}', 'get', 200));
    expect(v1(one.body) ? [] : v1.errors).toEqual([]);
    const bad = await gw.get('/renders?filter[nope][_eq]=1', token);
    const ve = validatorFor(responseSchema('/renders', 'get', 400));
    expect(ve(bad.body) ? [] : ve.errors).toEqual([]);
    // and a wrong answer would not pass
    expect(v({ data: [{ status: 'no-such-status' }] })).toBe(false);
  });
});

describe('the schema routes and session mode in the document', () => {
  it('describes /collections, /fields, /relations and /server/info as they answer, and the session mode of auth', async () => {
    for (const [path, url] of [['/collections', '/collections'], ['/collections/{collection}', '/collections/renders'], ['/fields/{collection}', '/fields/projects'],
      ['/fields/{collection}/{field}', '/fields/renders/title'], ['/relations/{collection}', '/relations/renders'], ['/server/info', '/server/info']] as const) {
      const r = await gw.get(url, token);
      expect(r.status, url).toBe(200);
      const validate = validatorFor(responseSchema(path, 'get', 200));
      expect(validate(r.body), `${url}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    expect(doc.paths['/auth/login'].post.requestBody.content['application/json'].schema.properties.mode.enum).toContain('session');
    const session = await gw.app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'ann@example.com', password: 'correct horse battery', mode: 'session' } });
    const validate = validatorFor(responseSchema('/auth/login', 'post', 200));
    expect(validate(session.json()), JSON.stringify(validate.errors)).toBe(true);
  });
});

describe('the legacy OpenAPI document: writes', () => {
  it('POST /renders takes one render or an array of them, with the fields the legacy role may set, and names INVALID_FOREIGN_KEY; PATCH of several items', () => {
    const op = doc.paths['/items/renders'].post;
    const body = validatorFor(op.requestBody.content['application/json'].schema);
    const one = { project: '7d444840-9dc0-11d1-b245-5ffdce74fad2', account: '7d444840-9dc0-11d1-b245-5ffdce74fad2', data: {}, title: 123 };
    expect(body(one)).toBe(true);
    expect(body([one, one])).toBe(true);
    expect(body({ ...one, status: 'complete' })).toBe(false);
    expect(Object.keys(doc.components.schemas.RenderCreate.properties).sort()).toEqual([...gw.deps.mappings.permissions.renders!.create].sort());
    expect(op.responses['400'].description).toMatch(/INVALID_FOREIGN_KEY/);
    for (const path of ['/items/renders', '/projects', '/items/accounts']) expect(doc.paths[path].patch.description, path).toMatch(/"keys".*"query".*array/);
    expect(doc.paths['/items/templates'].patch).toBeUndefined();
    const answer = validatorFor(responseSchema('/items/renders', 'post', 200));
    expect(answer({ data: [{ id: '7d444840-9dc0-11d1-b245-5ffdce74fad2' }] })).toBe(true);
  });
});
