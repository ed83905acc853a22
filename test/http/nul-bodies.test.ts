import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases } from '../helpers/databases.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * A write body holding a NUL character (U+0000) is refused with a 400 before anything is done, on either store:
 * PostgreSQL keeps no NUL in a text, and answered 500 — for POST /renders after v1 had made the render, its data lost
 * (attack pass 17, F4).
 */
const stores = await databases();

describe.each(stores)('write bodies holding a NUL character ($name)', ({ url }) => {
  let gw: TestGateway;
  let token: string;
  beforeAll(async () => {
    gw = await startGateway({ DATABASE_URL: url, INDEX_ENABLED: 'false' });
    await gw.addUser(0, 'nul@example.com', 'nul-password-123');
    token = await gw.login('nul@example.com', 'nul-password-123');
  }, 60_000);
  afterAll(async () => gw?.close());

  const send = (method: 'POST' | 'PATCH' | 'SEARCH', path: string, payload: unknown) => gw.app.inject({
    method, url: path, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify(payload),
  });

  it('is a 400 naming it, and nothing is made on v1 nor kept', async () => {
    const project = (await gw.get('/projects?limit=1&fields=id,account', token)).body.data[0] as { id: string; account: string };
    const renders = () => gw.s.sim.world.renders.size;
    const before = renders();
    for (const [method, path, body] of [
      ['PATCH', '/users/me', { first_name: 'a\u0000b' }],
      ['POST', '/renders', { title: 't\u0000', project: project.id, account: project.account, data: { a: 'b' } }],
      ['POST', '/renders', { title: 't', project: project.id, account: project.account, data: { 'a\u0000': 'b' } }],
      ['POST', '/renders', [{ title: 't', project: project.id, account: project.account, data: { deep: ['x', { y: '\u0000' }] } }]],
    ] as const) {
      const res = await send(method, path, body);
      expect(res.statusCode, `${method} ${path} ${res.body}`).toBe(400);
      const reason = 'The body holds a NUL character (U+0000), which no stored text can keep';
      expect(res.json()).toEqual({ errors: [{ message: `Invalid payload. ${reason}.`, extensions: { code: 'INVALID_PAYLOAD', reason } }] });
    }
    expect(renders()).toBe(before);
    expect((await gw.get('/users/me?fields=first_name', token)).body.data.first_name).toBe('First0');
    // the same writes without it are made
    expect((await send('PATCH', '/users/me', { first_name: 'ab' })).statusCode).toBe(200);
    const made = await send('POST', '/renders', { title: 't', project: project.id, account: project.account, data: { a: 'b' } });
    expect(made.statusCode, made.body).toBe(200);
    expect(renders()).toBe(before + 1);
    // a question may look for one (a read keeps nothing)
    expect((await send('SEARCH', '/renders', { query: { filter: { title: { _eq: 'x\u0000' } }, limit: 1 } })).statusCode).toBe(200);
  });
});
