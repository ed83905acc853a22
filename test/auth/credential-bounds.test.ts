import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmailTooLongError } from '../../src/store/users.js';
import { databases } from '../helpers/databases.js';
import { startSim, type RunningSim } from '../helpers/sim.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Issue 38: an address longer than RFC 5321 allows (254 characters, 64 before the @) is refused as Directus's Joi
 * refuses it (400 INVALID_PAYLOAD), before anything is written, on both stores; the login limiter's keys are digests
 * (a fixed size whatever the address); a password is bounded in bytes before argon2 sees it.
 */
const dbs = await databases();
let sim: RunningSim;
const gateways: TestGateway[] = [];
beforeAll(async () => { sim = await startSim(); });
afterAll(async () => {
  for (const gw of gateways) await gw.close();
  await sim?.sim.close();
});

/** Directus ≥ 10.4's wording: `Invalid payload. <reason>.`, the bare reason in extensions. */
const invalid = (reason: string) => ({ errors: [{ message: `Invalid payload. ${reason}.`, extensions: { code: 'INVALID_PAYLOAD', reason } }] });
const INVALID_EMAIL = invalid('"email" must be a valid email');
/** An address of exactly `total` characters with a local part of `local` characters. */
const address = (local: number, total: number) => `${'l'.repeat(local)}@${'d'.repeat(total - local - 5)}.com`;

describe.each(dbs)('credential bounds on $name', ({ url }) => {
  let gw: TestGateway;
  let token: string;
  beforeAll(async () => {
    gw = await startGateway({ DATABASE_URL: url }, {}, { sim });
    gateways.push(gw);
    await gw.addUser(0, 'ann@example.com');
    token = await gw.login('ann@example.com');
  });
  const login = (payload: unknown) => gw.app.inject({ method: 'POST', url: '/auth/login', payload: payload as Record<string, unknown> });
  const limiterRows = () => gw.deps.db.kysely.selectFrom('login_limits').select(['key']).execute();

  it('refuses an email over 254 characters or with a local part over 64 as 400 INVALID_PAYLOAD, writing nothing', async () => {
    await gw.deps.db.kysely.deleteFrom('login_limits').execute();
    for (const email of [address(60, 255), address(65, 100)]) {
      const res = await login({ email, password: 'whatever-password' });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(INVALID_EMAIL);
    }
    // (a body past the authentication routes' bound is not read at all: attack pass 17, F7)
    const huge = await login({ email: `${'x'.repeat(900_000)}@example.com`, password: 'whatever-password' });
    expect(huge.statusCode).toBe(400);
    expect(huge.json().errors[0]).toMatchObject({ extensions: { code: 'INVALID_PAYLOAD' }, message: expect.stringMatching(/too large/) });
    expect(await limiterRows()).toEqual([]);
  });

  it('keys the limiter by digests of a fixed size: the longest address allowed is 401, not a 500, and is not stored', async () => {
    await gw.deps.db.kysely.deleteFrom('login_limits').execute();
    const email = address(64, 254);
    expect(email).toHaveLength(254);
    const res = await login({ email: email.toUpperCase(), password: 'whatever-password' });
    expect(res.statusCode).toBe(401);
    const keys = (await limiterRows()).map((r) => r.key).sort();
    expect(keys).toHaveLength(2);
    for (const k of keys) expect(k).toMatch(/^(a|ip):[0-9a-f]{64}$/);
    expect(keys.join('')).not.toContain('llll');
  });

  it('refuses a password over 1 024 bytes as 400 INVALID_PAYLOAD before counting or hashing it', async () => {
    await gw.deps.db.kysely.deleteFrom('login_limits').execute();
    const res = await login({ email: 'ann@example.com', password: 'é'.repeat(513) }); // 1 026 bytes, 513 characters
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(invalid('"password" length must be less than or equal to 1024 bytes'));
    expect(await limiterRows()).toEqual([]);
    expect((await login({ email: 'ann@example.com', password: 'correct horse battery' })).statusCode).toBe(200);
  });

  it('PATCH /users/me: an email over RFC 5321\'s bounds is 400 INVALID_PAYLOAD (was a 500 on PostgreSQL), 254 characters pass', async () => {
    const patch = (email: string) => gw.app.inject({ method: 'PATCH', url: '/users/me?fields=email', headers: { authorization: `Bearer ${token}` }, payload: { email } });
    for (const email of [address(60, 321), address(60, 400), address(65, 80)]) {
      const res = await patch(email);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(INVALID_EMAIL);
    }
    const longest = address(64, 254);
    const ok = await patch(longest);
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ data: { email: longest } });
    expect((await patch('ann@example.com')).statusCode).toBe(200);
  });

  it('the user store refuses such an email on every path (add, import, update) before writing, with its own error', async () => {
    const users = gw.deps.users;
    const user = { passwordHash: null, role: 'r', v1Key: 'k', v1UserId: 'v1_long' };
    for (const email of [address(60, 330), address(65, 80)]) {
      await expect(users.create({ ...user, email })).rejects.toBeInstanceOf(EmailTooLongError);
      await expect(users.createMany([{ ...user, id: '0b0b0b0b-0000-4000-8000-000000000001', email }])).rejects.toBeInstanceOf(EmailTooLongError);
      const ann = (await users.byEmail('ann@example.com'))!;
      await expect(users.update(ann.id, { email })).rejects.toBeInstanceOf(EmailTooLongError);
    }
    expect((await users.list()).map((u) => u.email)).toEqual(['ann@example.com']);
    expect((await users.create({ ...user, email: address(64, 254) })).email).toBe(address(64, 254));
  });
});
