import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Shadow mode runs the translated side as the gateway user who is the legacy side's user. It found that user by the
 * email the legacy side reported (attack pass 24, N5): a legacy user holding another's email — changed on either side —
 * compared, and with COMPARE_WRITES wrote, as whoever holds that email on the gateway. Now by the legacy user's id
 * (`users import` keeps the legacy uuids), by the email only when COMPARE_MATCH_BY_EMAIL says so.
 */
let legacy: FastifyInstance;
let legacyUrl = '';
/** What the legacy side's `/users/me` answers for each token. */
const people: Record<string, { id: string; email: string }> = {};
const opened: TestGateway[] = [];

beforeAll(async () => {
  legacy = Fastify();
  legacy.all('/*', async (req, reply) => {
    // (Directus reads the token from a Bearer Authorization header, else the access_token query parameter, else the
    // session cookie)
    const inQuery = (req.query as Record<string, unknown>).access_token;
    const bearer = /^Bearer\s+(.+)$/i.exec(String(req.headers.authorization ?? ''))?.[1];
    const cookie = /(?:^|;\s*)directus_session_token=([^;]+)/.exec(String(req.headers.cookie ?? ''))?.[1];
    const who = people[bearer ?? (typeof inQuery === 'string' && inQuery ? inQuery : cookie ?? '')];
    if (!who) return reply.status(401).send({ errors: [{ message: 'Invalid user credentials.', extensions: { code: 'INVALID_CREDENTIALS' } }] });
    if (req.url.startsWith('/users/me')) return { data: who };
    return { data: { ...(req.body as object), status: 'draft' } };
  });
  legacyUrl = await legacy.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => { for (const g of opened) await g.close(); await legacy.close(); });

async function shadowed(env: Record<string, string> = {}) {
  const gw = await startGateway({ ROUTE_MODES: JSON.stringify({ '/render': 'shadow' }), LEGACY_BASE_URL: legacyUrl, COMPARE_WRITES: 'true', ...env });
  opened.push(gw);
  const bobId = await gw.addUser(0, 'bob@example.com');
  const bob = await gw.login('bob@example.com');
  const render = (await gw.get('/renders?limit=1&fields=id', bob)).body.data[0].id as string;
  const base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  /** A shadowed PATCH of Bob's render's title with `token` (in the query when `inQuery`); then the title the gateway holds. */
  const patch = async (token: string, title: string, inQuery: boolean | Record<string, string> = false) => {
    const carried = typeof inQuery === 'object' ? inQuery : inQuery ? {} : { authorization: `Bearer ${token}` };
    const res = await fetch(`${base}/render/${render}${inQuery === true ? `?access_token=${token}` : ''}`, {
      method: 'PATCH', headers: { ...carried, 'content-type': 'application/json' }, body: JSON.stringify({ title }),
    });
    expect(res.headers.get('x-gateway-answered-by')).toBe('legacy');
    await res.text();
    await gw.app.comparisonsIdle();
    return (await gw.get(`/renders/${render}?fields=title`, bob)).body.data.title as string;
  };
  return { gw, bobId, patch };
}

describe('shadow mode: whose translated side', () => {
  it('a legacy user holding another gateway user\'s email is not run as that user (N5)', async () => {
    const { bobId, patch } = await shadowed();
    // the legacy side's Mallory now has the email Bob has on the gateway; no gateway user has Mallory's legacy id
    people['tok-mallory'] = { id: '7d1c6a3e-0000-4000-8000-00000000beef', email: 'bob@example.com' };
    expect(await patch('tok-mallory', 'written by mallory')).not.toBe('written by mallory');
    // Bob, whose legacy email changed since the import, is still Bob: by the id both sides share
    people['tok-bob'] = { id: bobId, email: 'bob.renamed@example.com' };
    expect(await patch('tok-bob', 'written by bob')).toBe('written by bob');
    // a token in the query is who the legacy side knows too (the look-up of who it is went without it: attack pass 27, N-5)
    people['tok-bob-q'] = { id: bobId, email: 'bob@example.com' };
    expect(await patch('tok-bob-q', 'written with a query token', true)).toBe('written with a query token');
  }, 60_000);

  it('a shared Authorization header that is no Bearer token is not who the caller is: the session cookie is (attack pass 28, H-1)', async () => {
    const { bobId, patch } = await shadowed();
    // (a site-wide Basic login in front of the legacy system: every caller sends the same header; each signs in by cookie)
    const site = { authorization: 'Basic c2l0ZTpzaGFyZWQ=' };
    people['sess-bob'] = { id: bobId, email: 'bob@example.com' };
    people['sess-mallory'] = { id: '7d1c6a3e-0000-4000-8000-00000000c0de', email: 'mallory@example.com' };
    expect(await patch('', 'written by bob by cookie', { ...site, cookie: 'directus_session_token=sess-bob' })).toBe('written by bob by cookie');
    // Mallory, no gateway user, behind the same header: her write is not run as Bob's (it was, for 10 minutes)
    expect(await patch('', 'written by mallory by cookie', { ...site, cookie: 'directus_session_token=sess-mallory' })).toBe('written by bob by cookie');
  }, 60_000);

  it('COMPARE_MATCH_BY_EMAIL=true finds users added without the legacy id by their email', async () => {
    const { patch } = await shadowed({ COMPARE_MATCH_BY_EMAIL: 'true' });
    people['tok-bob-other-id'] = { id: '7d1c6a3e-0000-4000-8000-0000000000b0', email: 'BOB@example.com' };
    expect(await patch('tok-bob-other-id', 'matched by email')).toBe('matched by email');
  }, 60_000);
});
