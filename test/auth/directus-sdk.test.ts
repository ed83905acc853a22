import { authentication, createDirectus, readMe, rest } from '@directus/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

describe('a real client: the Directus JavaScript SDK', () => {
  let gw: TestGateway;
  let base = '';
  beforeAll(async () => {
    gw = await startGateway({ ACCESS_TOKEN_TTL: '1s' });
    await gw.addUser(0, 'sdk@example.com', 'sdk-password-123');
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => gw.close());

  it('logs in, refreshes automatically when the token expires, reads /users/me and logs out', async () => {
    const rotate = vi.spyOn(gw.deps.sessions, 'rotate');
    const client = createDirectus(base).with(authentication('json', { autoRefresh: true })).with(rest());
    const auth = await client.login('sdk@example.com', 'sdk-password-123');
    expect(auth.expires).toBe(1000);
    const first = await client.request(readMe({ fields: ['id', 'email'] }));
    expect(first).toMatchObject({ email: 'sdk@example.com' });
    await new Promise((r) => setTimeout(r, 1500)); // the access token has expired now
    const me = await client.request(readMe());
    expect(me.email).toBe('sdk@example.com');
    expect(rotate).toHaveBeenCalled();
    expect((await rotate.mock.results[0]!.value).ok).toBe(true);
    const token = await client.getToken();
    expect(token).toBeTruthy();
    await client.logout();
    expect(await client.getToken()).toBeNull();
  });
});
