import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords.js';
import { DEFAULT_ROLE } from '../../src/store/users.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * A refused login answers INVALID_CREDENTIALS whatever the reason (nothing for a client to probe), and logs the reason
 * for the operator: a user imported without a v1 key is told apart from a wrong password — never logging the password.
 */
let gw: TestGateway;
let unboundId: string;
const PASSWORD = 'imported-password-1234';
beforeAll(async () => {
  gw = await startGateway();
  await gw.addUser(0, 'bound@example.com');
  // as `users import` writes a row without a v1 key
  const u = await gw.deps.users.create({
    email: 'imported@example.com', passwordHash: await hashPassword(PASSWORD), role: DEFAULT_ROLE, v1Key: '', v1UserId: '', status: 'unbound',
  });
  unboundId = u.id;
});
afterAll(async () => gw.close());

const login = (email: string, password: string) => gw.app.inject({ method: 'POST', url: '/auth/login', payload: { email, password } });
const refusals = () => gw.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => String(l.msg).startsWith('login refused'));

describe('POST /auth/login refusals', () => {
  it('a user imported without a v1 key: 401 INVALID_CREDENTIALS, and the log says why (no password, no key in it)', async () => {
    const res = await login('imported@example.com', PASSWORD);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ errors: [{ message: 'Invalid user credentials.', extensions: { code: 'INVALID_CREDENTIALS' } }] });
    const line = refusals().find((l) => l.reason === 'no_v1_key');
    expect(line).toMatchObject({ level: 40, user: unboundId, reason: 'no_v1_key' });
    expect(String(line!.msg)).toContain('legacy-gateway users rebind');
    expect(gw.logs.join('')).not.toContain(PASSWORD);
  });

  it('tells a wrong password, an unknown email and a suspended user apart in the log, never logging the password', async () => {
    expect((await login('bound@example.com', 'not-the-password-9876')).statusCode).toBe(401);
    expect((await login('nobody@example.com', 'not-the-password-9876')).statusCode).toBe(401);
    const bound = (await gw.deps.users.byEmail('bound@example.com'))!;
    await gw.deps.users.setStatus(bound.id, 'suspended');
    expect((await login('bound@example.com', 'correct horse battery')).statusCode).toBe(401);
    const reasons = refusals().map((l) => [l.reason, l.user ?? null]);
    expect(reasons).toEqual(expect.arrayContaining([['wrong_password', bound.id], ['unknown_email', null], ['suspended', bound.id]]));
    const all = gw.logs.join('');
    expect(all).not.toContain('not-the-password-9876');
    expect(all).not.toContain('correct horse battery');
    expect(all).not.toContain('nobody@example.com');
  });
});
