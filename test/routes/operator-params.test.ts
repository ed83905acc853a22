import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases } from '../helpers/databases.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';

/**
 * The `?client=` of the operator's reports reaches the store: a control character or a value longer than any client is
 * a 400 on either store (attack pass 19, F8: a NUL was PostgreSQL's 500), and a client the report names still answers.
 */
const dbs = await databases();
const gws: TestGateway[] = [];
beforeAll(async () => {
  for (const db of dbs) gws.push(await startGateway({ DATABASE_URL: db.url }));
}, 60_000);
afterAll(async () => { for (const g of gws) await g.close(); });

describe.each(dbs.map((db, i) => [db.name, i] as const))('operator reports on %s', (_name, i) => {
  it('a NUL, another control character or 401 characters in ?client= is a 400; a plain one answers', async () => {
    const gw = gws[i]!;
    const op = { authorization: `Bearer ${TEST_ENV.GATEWAY_ADMIN_TOKEN}` };
    for (const path of ['/_gateway/migrate?prove=false&client=', '/_gateway/deprecations/progress?client=']) {
      for (const bad of ['a%00b', 'user%3Ax%0Ay', 'x'.repeat(401)]) {
        const r = await gw.app.inject({ method: 'GET', url: path + bad, headers: op });
        expect(r.statusCode, path + bad.slice(0, 20)).toBe(400);
        expect(r.json().errors[0].extensions.code).toBe('INVALID_QUERY');
      }
      const ok = await gw.app.inject({ method: 'GET', url: `${path}user%3A00000000-0000-4000-8000-000000000000~curl`, headers: op });
      expect(ok.statusCode, path).toBe(200);
    }
  }, 60_000);
});
