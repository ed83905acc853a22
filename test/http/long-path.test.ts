import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * A path segment past the router's length — a collection or an id of thousands of characters — names nothing the key
 * may read: 403 FORBIDDEN as Directus answers an unknown collection or item, without the URL in it (attack pass 23, L2:
 * a 400 INVALID_PAYLOAD echoing the whole 7 000-character path).
 */
let gw: TestGateway;
let token: string;
beforeAll(async () => {
  gw = await startGateway({ INDEX_ENABLED: 'false' }, { scale: 'tiny' });
  await gw.addUser(0, 'long@example.com', 'long-password-123');
  token = await gw.login('long@example.com', 'long-password-123');
}, 60_000);
afterAll(async () => { await gw?.close(); });

describe('a path segment of thousands of characters', () => {
  it('is a 403 FORBIDDEN in the Directus envelope, whatever the route, and the answer does not echo it', async () => {
    const long = 'a'.repeat(7_000);
    for (const url of [`/items/${long}`, `/items/${long}/1`, `/renders/${long}`, `/items/renders/${long}`]) {
      for (const auth of [{ authorization: `Bearer ${token}` }, {}]) {
        const res = await gw.app.inject({ method: 'GET', url, headers: auth });
        expect(res.statusCode, url.slice(0, 30)).toBe(403);
        expect(res.json()).toEqual({ errors: [{ message: "You don't have permission to access this.", extensions: { code: 'FORBIDDEN' } }] });
      }
    }
    // (a short unknown collection: the same answer, as before)
    const short = await gw.app.inject({ method: 'GET', url: '/items/nope', headers: { authorization: `Bearer ${token}` } });
    expect(short.statusCode).toBe(403);
  });
});
