import { authentication, createDirectus, readMe, rest } from '@directus/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

describe('a real client: the Directus JavaScript SDK', () => {
  let gw: TestGateway;
  let base = '';
  // the gateway's time moves only when told: token expiry is decided by it, not by a sleep
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    gw = await startGateway({ ACCESS_TOKEN_TTL: '1s' }, {}, { clock });
    await gw.addUser(0, 'sdk@example.com', 'sdk-password-123');
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => gw.close());

  it('logs in, refreshes automatically once the token has expired, reads /users/me and logs out', async () => {
    const rotate = vi.spyOn(gw.deps.sessions, 'rotate');
    const client = createDirectus(base).with(authentication('json', { autoRefresh: true })).with(rest());
    const auth = await client.login('sdk@example.com', 'sdk-password-123');
    expect(auth.expires).toBe(1000);
    const firstToken = (await client.getToken())!;
    expect(await client.request(readMe({ fields: ['id', 'email'] }))).toMatchObject({ email: 'sdk@example.com' });
    clock.advance(2_000);
    // the first access token is expired now, by the gateway's clock
    const raw = await fetch(`${base}/users/me`, { headers: { authorization: `Bearer ${firstToken}` } });
    expect(raw.status).toBe(401);
    expect(((await raw.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('TOKEN_EXPIRED');
    // the SDK refreshes (a token of 1 s is always within its refresh margin) and reads on
    const me = await client.request(readMe());
    expect(me.email).toBe('sdk@example.com');
    expect(rotate).toHaveBeenCalled();
    expect((await rotate.mock.results.at(-1)!.value).ok).toBe(true);
    expect(await client.getToken()).not.toBe(firstToken);
    await client.logout();
    expect(await client.getToken()).toBeNull();
  });
});
