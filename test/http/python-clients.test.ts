import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * The HTTP exchanges three Python Directus clients make, written down from their source (method, path, headers, JSON
 * body: what their code sends, not their code) and played against the gateway over real HTTP:
 * - py-directus (panos-stavrianos/py-directus, httpx): lists with SEARCH /items/<c> and `{"query": params}`, where
 *   `fields` and `groupBy` are comma strings, `sort` a list, `limit`/`page` numbers, `meta` "*", and `filter` and
 *   `aggregate` JSON *strings* (its F and Agg objects serialise through `__json__` to `json.dumps(...)`); gets an item
 *   with GET and query parameters; refreshes with `{"refresh_token", "mode": "json"}`; reads /users/me for its user;
 *   logs out with an empty POST (no refresh token: a 400, as on Directus).
 * - directus-sdk-py (reise69/directus-py-sdk, requests): logs in with email and password, then refreshes before every
 *   call (`get_token()`: POST /auth/refresh `{"refresh_token"}`), lists with SEARCH and the body the caller gives
 *   (`{"query": {...}}` in its README), needs 200 for POST and 200/204 for PATCH, reads GET /collections/<c>.
 * - pydirectus (ebursztein/pydirectus, httpx): a static token only (it refuses passwords); pings GET /server/health, reads
 *   GET /collections/<c> (every `meta` key it copies) and GET /fields/<c> (`field`, `type`, `schema`, `meta.required`)
 *   before querying; lists with SEARCH `{"query": {"fields": [...], "limit": n, "sort": "-f", "filter": {...}}}` (no
 *   page); inserts with a list body (`[item]`), updates with PATCH /items/<c>/<id>.
 */

interface Sent { method: string; path: string; token?: string; json?: unknown; agent: string }
let base = '';
async function send({ method, path, token, json, agent }: Sent): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { 'user-agent': agent, accept: '*/*' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (json !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(base + path, { method, headers, ...(json !== undefined ? { body: JSON.stringify(json) } : {}) });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
}

let gw: TestGateway;
let userId = '';
const EMAIL = 'py@example.com';
const PASSWORD = 'python-password-1';
beforeAll(async () => {
  gw = await startGateway();
  userId = await gw.addUser(0, EMAIL, PASSWORD);
  base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => gw.close());

/** What the legacy GET answers for the same question (the reference for every list). */
const legacyGet = async (token: string, url: string) => (await send({ method: 'GET', path: url, token, agent: 'reference' })).body;
/** A project of the user's, and its account: what a render is created under. */
const aProject = async (token: string) => (await legacyGet(token, '/projects?fields=id,account&sort=id&limit=1')).data[0] as { id: string; account: string };

describe('py-directus (httpx)', () => {
  const agent = 'python-httpx/0.27.0';
  it('login, a filtered, sorted, paged list with counts, an aggregate, get by id, create, update, refresh, /users/me, logout', async () => {
    const login = await send({ method: 'POST', path: '/auth/login', json: { email: EMAIL, password: PASSWORD }, agent });
    expect(login.status).toBe(200);
    const { access_token, refresh_token, expires } = login.body.data;
    expect(typeof access_token).toBe('string');
    expect(typeof refresh_token).toBe('string');
    expect(expires).toBe(900_000);

    // .fields('id', 'title', 'status').filter(status='complete').sort('date_created', asc=False).limit(2).page(2).include_count()
    const filter = JSON.stringify({ status: { _eq: 'complete' } }, null, 2);
    const query = { fields: 'id,title,status', filter, sort: ['-date_created'], limit: 2, page: 2, meta: '*' };
    const list = await send({ method: 'SEARCH', path: '/items/renders', token: access_token, json: { query }, agent });
    expect(list.status).toBe(200);
    const reference = await legacyGet(access_token, '/renders?fields=id,title,status&filter[status][_eq]=complete&sort=-date_created&limit=2&page=2&meta=*');
    expect(list.body).toEqual(reference);
    expect(list.body.data).toHaveLength(2);
    expect(list.body.meta.filter_count).toBeGreaterThan(2);

    // .aggregate(count='*').group_by('status'): Agg serialises to a JSON string too
    const agg = await send({ method: 'SEARCH', path: '/items/renders', token: access_token, json: { query: { aggregate: JSON.stringify({ count: '*' }, null, 2), groupBy: 'status' } }, agent });
    expect(agg.status).toBe(200);
    expect(agg.body).toEqual(await legacyGet(access_token, '/renders?aggregate[count]=*&groupBy=status'));

    // .fields('id', 'title').read(id): GET with the params as a query string
    const id = list.body.data[0].id as string;
    const one = await send({ method: 'GET', path: `/items/renders/${id}?fields=id%2Ctitle`, token: access_token, agent });
    expect(one.status).toBe(200);
    expect(one.body.data).toEqual({ id, title: list.body.data[0].title });

    const project = await aProject(access_token);
    const created = await send({ method: 'POST', path: '/items/renders', token: access_token, json: { project: project.id, account: project.account, data: { title: 'From py-directus' } }, agent });
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({ title: 'From py-directus', project: project.id });
    const updated = await send({ method: 'PATCH', path: `/items/renders/${created.body.data.id}`, token: access_token, json: { title: 'Renamed by py-directus' }, agent });
    expect(updated.status).toBe(200);
    expect(updated.body.data.title).toBe('Renamed by py-directus');

    const refreshed = await send({ method: 'POST', path: '/auth/refresh', json: { refresh_token, mode: 'json' }, agent });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.data.refresh_token).not.toBe(refresh_token);
    const me = await send({ method: 'GET', path: '/users/me', token: refreshed.body.data.access_token, agent });
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({ id: userId, email: EMAIL });

    // logout(): an empty POST, so no refresh token: Directus's 400 (the client reads it as "not logged out")
    const out = await send({ method: 'POST', path: '/auth/logout', agent });
    expect(out.status).toBe(400);
    expect(out.body.errors[0].extensions.code).toBe('INVALID_PAYLOAD');
  });
});

describe('directus-sdk-py (requests)', () => {
  const agent = 'python-requests/2.32.3';
  it('login, a refresh before every call, a filtered, sorted, paged list, get by id, create, update, the collection, logout', async () => {
    const login = await send({ method: 'POST', path: '/auth/login', json: { email: EMAIL, password: PASSWORD }, agent });
    expect(login.status).toBe(200);
    let refresh = login.body.data.refresh_token as string;
    /** get_token(): with a temporary token the client refreshes first, then uses the new access token. */
    const token = async () => {
      const r = await send({ method: 'POST', path: '/auth/refresh', json: { refresh_token: refresh }, agent });
      expect(r.status).toBe(200);
      refresh = r.body.data.refresh_token;
      return r.body.data.access_token as string;
    };

    // get_items('renders', {"query": {...}}): SEARCH with the caller's body
    const query = { filter: { title: { _icontains: 'render' } }, sort: ['-date_created', 'id'], limit: 2, page: 2, fields: ['id', 'title', 'project.title'] };
    const t1 = await token();
    const list = await send({ method: 'SEARCH', path: '/items/renders', token: t1, json: { query }, agent });
    expect(list.status).toBe(200);
    expect(list.body).toEqual(await legacyGet(t1, '/renders?filter[title][_icontains]=render&sort=-date_created,id&limit=2&page=2&fields=id,title,project.title'));
    expect(list.body.data).toHaveLength(2);

    const id = list.body.data[1].id as string;
    const one = await send({ method: 'GET', path: `/items/renders/${id}`, token: await token(), agent });
    expect(one.status).toBe(200);
    expect(one.body.data.id).toBe(id);

    const t2 = await token();
    const project = await aProject(t2);
    const created = await send({ method: 'POST', path: '/items/renders', token: t2, json: { project: project.id, account: project.account, data: { title: 'From directus-sdk-py' } }, agent });
    expect(created.status).toBe(200); // the client raises on anything but 200
    const updated = await send({ method: 'PATCH', path: `/items/renders/${created.body.data.id}`, token: await token(), json: { title: 'Renamed by directus-sdk-py' }, agent });
    expect([200, 204]).toContain(updated.status);
    expect(updated.body.data.title).toBe('Renamed by directus-sdk-py');

    const collection = await send({ method: 'GET', path: '/collections/renders', token: await token(), agent });
    expect(collection.status).toBe(200);
    expect(collection.body.data.collection).toBe('renders');

    const out = await send({ method: 'POST', path: '/auth/logout', json: { refresh_token: refresh }, agent });
    expect(out.status).toBe(204);
    expect((await send({ method: 'POST', path: '/auth/refresh', json: { refresh_token: refresh }, agent })).status).toBe(401);
  });
});

describe('pydirectus (httpx, static token)', () => {
  const agent = 'python-httpx/0.28.1';
  it('ping, the collection and its fields, a filtered, sorted, limited list, get by id, insert (a list), update', async () => {
    const token = (await gw.deps.users.createStaticToken(userId, 'pydirectus')).token;
    expect((await send({ method: 'GET', path: '/server/health', token, agent })).status).toBe(200);

    // Collection('renders'): every meta key it reads must be there
    const meta = await send({ method: 'GET', path: '/collections/renders', token, agent });
    expect(meta.status).toBe(200);
    for (const k of ['icon', 'display_template', 'hidden', 'singleton', 'translations', 'archive_field', 'archive_app_filter', 'archive_value',
      'unarchive_value', 'sort_field', 'accountability', 'color', 'item_duplication_fields', 'sort', 'group', 'collapse', 'preview_url', 'versioning']) {
      expect(meta.body.data.meta, k).toHaveProperty(k);
    }
    const fields = await send({ method: 'GET', path: '/fields/renders', token, agent });
    expect(fields.status).toBe(200);
    const byName = Object.fromEntries((fields.body.data as any[]).map((f) => [f.field, f]));
    expect(byName.id).toMatchObject({ type: 'uuid', schema: { is_primary_key: true, is_nullable: false }, meta: { required: false } });
    expect(byName.title.schema.max_length).toBe(255);
    expect(byName.data.type).toBe('json');

    // query(['id', 'title', 'status']).filter('status').eq('complete') + .filter('title').contains('render'), sort desc, limit 3
    const query = {
      fields: ['id', 'title', 'status'], limit: 3, sort: '-date_created',
      filter: { _and: [{ status: { _eq: 'complete' } }, { title: { _contains: 'render' } }] },
    };
    const list = await send({ method: 'SEARCH', path: '/items/renders', token, json: { query }, agent });
    expect(list.status).toBe(200);
    expect(list.body).toEqual(await legacyGet(token, `/renders?fields=id,title,status&limit=3&sort=-date_created&filter=${encodeURIComponent(JSON.stringify(query.filter))}`));
    expect(list.body.data.length).toBeGreaterThan(0);

    const id = list.body.data[0].id as string;
    const one = await send({ method: 'GET', path: `/items/renders/${id}`, token, agent });
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject({ id, status: 'complete' });

    // insert(item): always a list body
    const project = await aProject(token);
    const inserted = await send({ method: 'POST', path: '/items/renders', token, json: [{ project: project.id, account: project.account, data: { title: 'From pydirectus' } }], agent });
    expect([200, 201, 204]).toContain(inserted.status);
    expect(inserted.body.data).toHaveLength(1);
    expect(inserted.body.data[0]).toMatchObject({ title: 'From pydirectus', project: project.id });
    const updated = await send({ method: 'PATCH', path: `/items/renders/${inserted.body.data[0].id}`, token, json: { title: 'Renamed by pydirectus' }, agent });
    expect(updated.status).toBe(200);
    expect(updated.body.data.title).toBe('Renamed by pydirectus');
  });
});
