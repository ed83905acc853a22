import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let token: string;
beforeAll(async () => {
  gw = await startGateway();
  await gw.addUser(0, 'ann@example.com');
  token = await gw.login('ann@example.com');
});
afterAll(async () => gw.close());

const PROTO = [...Object.getOwnPropertyNames(Object.prototype), 'name', 'length'];
const nest = (depth: number, leaf: unknown): unknown => { let v = leaf; for (let i = 0; i < depth; i++) v = { _and: [v] }; return v; };
/** Deep nesting of every kind (top level, under a field, under a relation, under _some), as JSON filter strings. */
const DEEP = [
  nest(1100, { title: { _eq: 'x' } }), { title: nest(1100, { _eq: 'x' }) }, { project: { title: nest(1100, { _eq: 'x' }) } },
  { project: { renders: { _some: nest(1100, { title: { _eq: 'x' } }) } } }, { renders: { _some: nest(200, { title: { _eq: 'x' } }) } },
].map((f) => JSON.stringify(f));
const ENCODED_PATHS = ['/%5Fgateway/users', '/%5fgateway/compare', '/_gateway/%75sage', '/%72enders', '/renders%2F', '/%2e%2e/renders', '//renders'];
const PATHS = [...ENCODED_PATHS, '/renders', '/renders/', '/render/x', '/projects', '/accounts', '/templates', '/users/me', '/users', '/auth/login', '/auth/refresh', '/auth/logout', '/_gateway/compare', '/renders/7d444840-9dc0-11d1-b245-5ffdce74fad2', '/projects/%E0%A4%A', '/nope'];
const PARAMS = ['fields', 'filter', 'search', 'sort', 'limit', 'offset', 'page', 'meta', 'aggregate', 'groupBy', 'access_token', 'deep'];

describe('no input produces a 500', () => {
  it('holds for arbitrary methods, paths, query strings, bodies and tokens', async () => {
    await fc.assert(fc.asyncProperty(
      fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT'),
      fc.constantFrom(...PATHS),
      fc.array(fc.tuple(
        fc.oneof(
          fc.constantFrom(...PARAMS, 'filter[title][_eq]', 'filter[_or][0][status]', 'aggregate[sum]', 'aggregate[count]', 'fields[]'),
          fc.constantFrom(...PROTO).chain((n) => fc.constantFrom(n, `a[${n}][name]`, `filter[${n}][_eq]`, `fields[${n}]`, `aggregate[${n}]`, `filter[title][${n}]`)),
        ),
        fc.oneof(
          fc.string(), fc.json(),
          fc.constantFrom('-1', '1e309', '$NOW(x)', '{"_and":{}}', '[]', 'null', '*,id', 'id,*', '*,id,status', '{"count":["*","id"]}'),
          fc.constantFrom(...DEEP), fc.constant(`{"date_created":{"_gt":"$NOW(${'9'.repeat(14_000)}x)"}}`),
        ),
      ), { maxLength: 4 }),
      fc.oneof(fc.constant(undefined), fc.json(), fc.string(), fc.constant('{"project":'), fc.constant('[]')),
      fc.constantFrom('good', 'none', 'garbage', 'Bearer', 'expired-ish'),
      async (method, path, params, body, auth) => {
        const qs = params.map(([k, v]) => `${encodeURIComponent(k).replace(/%5B/g, '[').replace(/%5D/g, ']')}=${encodeURIComponent(v)}`).join('&');
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (auth === 'good') headers.authorization = `Bearer ${token}`;
        if (auth === 'garbage') headers.authorization = 'Bearer a.b.c';
        if (auth === 'Bearer') headers.authorization = 'Bearer';
        if (auth === 'expired-ish') headers.authorization = `Bearer ${token.slice(0, -3)}abc`;
        const res = await gw.app.inject({ method: method as 'GET', url: `${path}${qs ? `?${qs}` : ''}`, headers, ...(body !== undefined && method !== 'GET' && method !== 'DELETE' ? { payload: body } : {}) });
        expect(res.statusCode, `${method} ${path}?${qs} → ${res.body.slice(0, 300)}`).toBeLessThan(500);
        if (res.statusCode >= 400 && res.body) expect(JSON.parse(res.body).errors[0].extensions.code).toMatch(/^[A-Z_]+$/);
      },
    ), { numRuns: 600 });
  });
});
