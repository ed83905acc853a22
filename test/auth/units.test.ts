import { SessionStore } from '../../src/store/sessions.js';
import { generateKeyPairSync } from 'node:crypto';
import Fastify, { type FastifyRequest } from 'fastify';
import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate, authenticateHeld } from '../../src/auth/authenticate.js';
import type { Principal } from '../../src/auth/authenticate.js';
import { isOperator, operatorRoutes, requireOperator, requirePrincipal } from '../../src/auth/guards.js';
import { JwtService } from '../../src/auth/jwt.js';
import { LoginLimiter, limitKey } from '../../src/auth/login-limiter.js';
import { decoyHash, hashPassword, verifyPassword } from '../../src/auth/passwords.js';
import { GatewayError } from '../../src/errors/catalog.js';
import { ManualClock } from '../../src/lib/clock.js';
import { SecretBox } from '../../src/store/crypto.js';
import { openDb, type Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';
import { UserStore } from '../../src/store/users.js';
import { databases } from '../helpers/databases.js';

const SECRET = 'unit-secret-unit-secret-unit-secret-0123';
const claims = { id: 'u1', role: 'r1', app_access: true, admin_access: false };
const T0 = Date.UTC(2001, 0, 1); // far from the real clock: a code path falling back to it is seen at once

/** The error a promise rejects with (or fails the test when it resolves). */
async function failure(p: Promise<unknown>): Promise<GatewayError> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(GatewayError);
  return e as GatewayError;
}

const hs256 = (clock?: ManualClock, ttlMs = 60_000) => JwtService.create({ issuer: 'directus', ttlMs, alg: 'HS256', secret: SECRET, ...(clock ? { clock } : {}) });
/** A token signed with our secret and issuer but with any payload. */
const forge = (payload: Record<string, unknown>, iat: number, exp: number) =>
  new SignJWT(payload).setProtectedHeader({ alg: 'HS256' }).setIssuer('directus').setIssuedAt(iat).setExpirationTime(exp).sign(new TextEncoder().encode(SECRET));

describe('JwtService', () => {
  it('refuses HS256 without a secret, and the asymmetric algorithms without a private key', async () => {
    await expect(JwtService.create({ issuer: 'directus', ttlMs: 1000, alg: 'HS256' })).rejects.toThrow(new TypeError('JWT secret required for HS256'));
    await expect(JwtService.create({ issuer: 'directus', ttlMs: 1000, alg: 'HS256', secret: '' })).rejects.toThrow(TypeError);
    await expect(JwtService.create({ issuer: 'directus', ttlMs: 1000, alg: 'RS256', secret: SECRET })).rejects.toThrow(new TypeError('a private key is required for RS256'));
    await expect(JwtService.create({ issuer: 'directus', ttlMs: 1000, alg: 'EdDSA' })).rejects.toThrow(new TypeError('a private key is required for EdDSA'));
  });

  it('signs iat from the injected clock (whole seconds), exp = iat + ttl, our issuer, and a JWT header', async () => {
    const clock = new ManualClock(T0 + 999);
    const jwt = await hs256(clock, 90_500);
    expect(jwt.ttlMs).toBe(90_500);
    const token = await jwt.sign(claims);
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'HS256', typ: 'JWT' });
    const c = decodeJwt(token);
    expect(c).toEqual({ ...claims, iat: T0 / 1000, exp: T0 / 1000 + 90, iss: 'directus' });
    // an explicit time wins over the clock
    expect(decodeJwt(await jwt.sign(claims, T0 + 5_000)).iat).toBe(T0 / 1000 + 5);
  });

  it('uses the system clock when none is injected', async () => {
    const jwt = await hs256();
    const before = Math.floor(Date.now() / 1000);
    const token = await jwt.sign(claims);
    const iat = decodeJwt(token).iat!;
    expect(iat).toBeGreaterThanOrEqual(before);
    expect(iat).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(await jwt.verify(token)).toEqual(claims);
  });

  it('verifies by the injected clock, not the system one', async () => {
    const clock = new ManualClock(T0);
    const jwt = await hs256(clock);
    const token = await jwt.sign(claims);
    expect(await jwt.verify(token)).toEqual(claims); // by the real clock this token expired 25 years ago
    const fresh = await hs256(clock); // nothing remembered: jose decides by the clock too
    expect(await fresh.verify(token)).toEqual(claims);
    clock.advance(60_000);
    expect((await failure(fresh.verify(token))).code).toBe('TOKEN_EXPIRED');
  });

  it('tells our tokens from anything else', async () => {
    const jwt = await hs256();
    expect(jwt.claimsOurIssuer(await jwt.sign(claims))).toBe(true);
    expect(jwt.claimsOurIssuer('not-a-jwt')).toBe(false);
    expect(jwt.claimsOurIssuer('')).toBe(false);
    const other = await JwtService.create({ issuer: 'someone-else', ttlMs: 60_000, alg: 'HS256', secret: SECRET });
    expect(jwt.claimsOurIssuer(await other.sign(claims))).toBe(false);
    // a token of another issuer signed with our own key is still refused when verified
    expect((await failure(jwt.verify(await other.sign(claims)))).code).toBe('INVALID_TOKEN');
  });

  it('remembers a verified token: the same claims object is answered again', async () => {
    const clock = new ManualClock(T0);
    const jwt = await hs256(clock);
    const token = await jwt.sign(claims);
    const first = await jwt.verify(token);
    clock.advance(1_000);
    expect(await jwt.verify(token)).toBe(first);
    clock.advance(58_999);
    expect(await jwt.verify(token)).toBe(first);
    clock.advance(1);
    expect((await failure(jwt.verify(token))).code).toBe('TOKEN_EXPIRED');
  });

  it('answers an expired token TOKEN_EXPIRED with Directus\'s message', async () => {
    const jwt = await hs256(new ManualClock(T0));
    const e = await failure(jwt.verify(await forge(claims, T0 / 1000 - 100, T0 / 1000)));
    expect([e.code, e.message]).toEqual(['TOKEN_EXPIRED', 'Token expired.']);
  });

  it.each([
    ['no id', { role: 'r', app_access: true, admin_access: false }],
    ['a numeric id', { id: 7, role: 'r', app_access: true, admin_access: false }],
    ['no role', { id: 'u', app_access: true, admin_access: false }],
    ['a numeric role', { id: 'u', role: 3, app_access: true, admin_access: false }],
    ['no app_access', { id: 'u', role: 'r', admin_access: false }],
    ['no admin_access', { id: 'u', role: 'r', app_access: false }],
  ])('refuses a payload with %s: INVALID_TOKEN "Invalid token payload."', async (_name, payload) => {
    const jwt = await hs256(new ManualClock(T0));
    const e = await failure(jwt.verify(await forge(payload, T0 / 1000, T0 / 1000 + 60)));
    expect([e.code, e.message]).toEqual(['INVALID_TOKEN', 'Invalid token payload.']);
  });

  it('refuses malformed tokens and a token without exp with "Invalid token."', async () => {
    const jwt = await hs256(new ManualClock(T0));
    const e = await failure(jwt.verify('a.b.c'));
    expect([e.code, e.message]).toEqual(['INVALID_TOKEN', 'Invalid token.']);
    const noExp = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuer('directus').setIssuedAt(T0 / 1000).sign(new TextEncoder().encode(SECRET));
    const e2 = await failure(jwt.verify(noExp));
    expect([e2.code, e2.message]).toEqual(['INVALID_TOKEN', 'Invalid token.']);
  });

  it.each([
    [true, false, true, false],
    [1, 1, true, true],
    [0, true, false, true],
    ['true', 'yes', false, false],
    [false, 0, false, false],
  ])('reads app_access %j and admin_access %j as %j and %j', async (app, admin, appWant, adminWant) => {
    const jwt = await hs256(new ManualClock(T0));
    const got = await jwt.verify(await forge({ id: 'u', role: 'r', app_access: app, admin_access: admin }, T0 / 1000, T0 / 1000 + 60));
    expect(got).toEqual({ id: 'u', role: 'r', app_access: appWant, admin_access: adminWant });
  });

  const pem = (type: 'rsa' | 'ec' | 'ed25519') => {
    const { privateKey } = type === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : type === 'ec' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('ed25519');
    return privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  };

  it.each([['RS256', 'rsa'], ['ES256', 'ec'], ['EdDSA', 'ed25519']] as const)('signs and verifies with %s from a PKCS#8 key', async (alg, type) => {
    const clock = new ManualClock(T0);
    const key = pem(type);
    const jwt = await JwtService.create({ issuer: 'directus', ttlMs: 60_000, alg, privateKeyPem: key, clock });
    const token = await jwt.sign(claims);
    expect(decodeProtectedHeader(token).alg).toBe(alg);
    expect(await jwt.verify(token)).toEqual(claims);
    // another key of the same algorithm does not verify it
    const other = await JwtService.create({ issuer: 'directus', ttlMs: 60_000, alg, privateKeyPem: pem(type), clock });
    expect((await failure(other.verify(token))).code).toBe('INVALID_TOKEN');
  });

  it('refuses a token of another algorithm even with a key that could check it', async () => {
    const clock = new ManualClock(T0);
    const hs = await hs256(clock);
    const key = pem('ec');
    const es = await JwtService.create({ issuer: 'directus', ttlMs: 60_000, alg: 'ES256', privateKeyPem: key, clock });
    expect((await failure(es.verify(await hs.sign(claims)))).code).toBe('INVALID_TOKEN');
    expect((await failure(hs.verify(await es.sign(claims)))).code).toBe('INVALID_TOKEN');
  });
});

describe('passwords', () => {
  it('hashes with argon2id and verifies only the right password', async () => {
    const phc = await hashPassword('pw-1');
    expect(phc.startsWith('$argon2id$')).toBe(true);
    expect(await verifyPassword(phc, 'pw-1')).toBe(true);
    expect(await verifyPassword(phc, 'pw-2')).toBe(false);
  });

  it('answers false for no hash, a hash of another scheme, and a broken argon2 string', async () => {
    expect(await verifyPassword(null, '')).toBe(false);
    expect(await verifyPassword('', '')).toBe(false);
    expect(await verifyPassword('$2b$10$abcdefghijklmnopqrstuv', 'x')).toBe(false);
    expect(await verifyPassword('$argon2id$broken', 'x')).toBe(false);
  });

  it('has one decoy hash, made once, that no simple password opens', async () => {
    const a = decoyHash();
    expect(decoyHash()).toBe(a);
    const phc = await a;
    expect(phc.startsWith('$argon2id$')).toBe(true);
    expect(await verifyPassword(phc, '')).toBe(false);
    expect(await verifyPassword(phc, 'decoy-')).toBe(false);
  });
});

describe('guards', () => {
  const req = (headers: Record<string, string>, principal: Principal | null = null) => ({ headers, principal }) as unknown as FastifyRequest;

  it('requirePrincipal answers the principal, or 403 FORBIDDEN', () => {
    const p = { user: { id: 'u' }, via: 'static', tokenId: 't' } as unknown as Principal;
    expect(requirePrincipal(req({}, p))).toBe(p);
    let e: unknown;
    try { requirePrincipal(req({})); } catch (err) { e = err; }
    expect(e).toBeInstanceOf(GatewayError);
    expect((e as GatewayError).code).toBe('FORBIDDEN');
  });

  it('isOperator: only the exact operator token, and never without one configured', () => {
    expect(isOperator(req({ authorization: 'Bearer op-token-1' }), 'op-token-1')).toBe(true);
    expect(isOperator(req({ authorization: 'Bearer op-token-2' }), 'op-token-1')).toBe(false);
    expect(isOperator(req({ authorization: 'Bearer op-token-1x' }), 'op-token-1')).toBe(false);
    expect(isOperator(req({}), 'op-token-1')).toBe(false);
    expect(isOperator(req({ authorization: 'Bearer op-token-1' }), undefined)).toBe(false);
    expect(isOperator(req({ authorization: 'Bearer x' }), '')).toBe(false);
  });

  it('requireOperator throws 403 FORBIDDEN for anyone else', () => {
    expect(() => requireOperator(req({ authorization: 'Bearer op' }), 'op')).not.toThrow();
    for (const [headers, admin] of [[{}, 'op'], [{ authorization: 'Bearer op' }, undefined], [{ authorization: 'Bearer no' }, 'op']] as const) {
      let e: unknown;
      try { requireOperator(req(headers), admin); } catch (err) { e = err; }
      expect(e).toBeInstanceOf(GatewayError);
      expect((e as GatewayError).code).toBe('FORBIDDEN');
    }
  });

  it('operatorRoutes guards exactly its routes, marks them operator and keeps their own config', async () => {
    const app = Fastify();
    app.setErrorHandler((e, _req, reply) => { void reply.status(e instanceof GatewayError ? 403 : 500).send({ code: (e as GatewayError).code ?? 'OTHER' }); });
    operatorRoutes(app, 'op-secret', (op) => {
      op.get('/op/a', async (request) => ({ config: request.routeOptions.config }));
      op.get('/op/b', { config: { quietLog: true } }, async (request) => ({ config: request.routeOptions.config }));
    });
    app.get('/open', async (request) => ({ config: request.routeOptions.config }));
    try {
      await app.ready();
      const get = async (url: string, token?: string) => {
        const r = await app.inject({ method: 'GET', url, headers: token ? { authorization: `Bearer ${token}` } : {} });
        return { status: r.statusCode, body: r.json() };
      };
      expect(await get('/op/a')).toEqual({ status: 403, body: { code: 'FORBIDDEN' } });
      expect(await get('/op/a', 'wrong')).toEqual({ status: 403, body: { code: 'FORBIDDEN' } });
      const a = await get('/op/a', 'op-secret');
      expect(a.status).toBe(200);
      expect(a.body.config.access).toBe('operator');
      const b = await get('/op/b', 'op-secret');
      expect(b.body.config).toMatchObject({ access: 'operator', quietLog: true });
      const open = await get('/open');
      expect(open.status).toBe(200);
      expect(open.body.config.access).toBeUndefined();
    } finally {
      await app.close();
    }
  });
});

describe('store-backed auth', async () => {
  const { url } = (await databases())[0]!;
  let db: Db;
  let users: UserStore;
  let sessions: SessionStore;
  const clock = new ManualClock(T0);
  beforeAll(async () => {
    db = await openDb(url!);
    await migrate(db.kysely);
    users = new UserStore(db.kysely, new SecretBox(Buffer.alloc(32, 3)), () => clock.now());
    sessions = new SessionStore(db.kysely, 7 * 86_400_000, () => clock.now());
  });
  afterAll(async () => db.close());

  describe('authenticate', () => {
    it('a JWT of ours names an active user: via jwt, without a token id', async () => {
      const jwt = await hs256(clock);
      const u = await users.create({ email: 'jwt@x.io', passwordHash: null, role: 'r', v1Key: 'k', v1UserId: 'v1_a' });
      const p = await authenticate(await jwt.sign({ ...claims, id: u.id }), jwt, users, sessions);
      expect(p).toEqual({ user: u, via: 'jwt' });
      expect('tokenId' in p).toBe(false);
    });

    it('a JWT of an unknown or suspended user: 401 INVALID_CREDENTIALS; an expired one: TOKEN_EXPIRED', async () => {
      const jwt = await hs256(clock);
      const e1 = await failure(authenticate(await jwt.sign({ ...claims, id: 'nobody' }), jwt, users, sessions));
      expect(e1.code).toBe('INVALID_CREDENTIALS');
      const u = await users.create({ email: 'susp@x.io', passwordHash: null, role: 'r', v1Key: 'k', v1UserId: 'v1_b' });
      const t = await jwt.sign({ ...claims, id: u.id });
      await users.setStatus(u.id, 'suspended');
      expect((await failure(authenticate(t, jwt, users, sessions))).code).toBe('INVALID_CREDENTIALS');
      const old = await jwt.sign({ ...claims, id: u.id }, clock.now() - 3_600_000);
      await users.setStatus(u.id, 'active');
      expect((await failure(authenticate(old, jwt, users, sessions))).code).toBe('TOKEN_EXPIRED');
    });

    it('without waiting: only a token verified before, not expired, of a held active user', async () => {
      const jwt = await hs256(clock);
      const u = await users.create({ email: 'held@x.io', passwordHash: null, role: 'r', v1Key: 'k', v1UserId: 'v1_h' });
      const t = await jwt.sign({ ...claims, id: u.id });
      expect(authenticateHeld(t, jwt, users)).toBeUndefined(); // never verified
      expect(await authenticate(t, jwt, users, sessions)).toEqual({ user: u, via: 'jwt' });
      expect(authenticateHeld(t, jwt, users)).toEqual({ user: u, via: 'jwt' });
      await users.setStatus(u.id, 'suspended');
      expect(authenticateHeld(t, jwt, users)).toBeUndefined(); // (authenticate then refuses it)
      await users.setStatus(u.id, 'active');
      await authenticate(t, jwt, users, sessions);
      expect(authenticateHeld(t, jwt, users)).toEqual({ user: u, via: 'jwt' });
      clock.advance(60_000);
      expect(authenticateHeld(t, jwt, users)).toBeUndefined(); // expired: authenticate says TOKEN_EXPIRED
      expect((await failure(authenticate(t, jwt, users, sessions))).code).toBe('TOKEN_EXPIRED');
      expect(authenticateHeld('not-a-jwt', jwt, users)).toBeUndefined();
    });

    it('anything else is a static token: via static with its id; unknown → INVALID_CREDENTIALS', async () => {
      const jwt = await hs256(clock);
      const u = await users.create({ email: 'static@x.io', passwordHash: null, role: 'r', v1Key: 'k', v1UserId: 'v1_c' });
      const { id, token } = await users.createStaticToken(u.id, 'ci');
      expect(await authenticate(token, jwt, users, sessions)).toEqual({ user: u, via: 'static', tokenId: id });
      expect((await failure(authenticate('unknown-token', jwt, users, sessions))).code).toBe('INVALID_CREDENTIALS');
      // a JWT of another issuer is looked up as a static token (and is unknown), not verified
      const other = await JwtService.create({ issuer: 'elsewhere', ttlMs: 1, alg: 'HS256', secret: SECRET, clock: new ManualClock(0) });
      const e = await failure(authenticate(await other.sign(claims), jwt, users, sessions));
      expect(e.code).toBe('INVALID_CREDENTIALS');
    });
  });

  describe('LoginLimiter', () => {
    // rows by readable key: the store holds digests (limitKey), told back to the names the tests used
    const named = new Map<string, string>();
    const rows = async () => Object.fromEntries((await db.kysely.selectFrom('login_limits').select(['key', 'count', 'window_start']).execute())
      .map((r) => [named.get(r.key) ?? r.key, [Number(r.count), Number(r.window_start)]]));
    const fresh = async () => { await db.kysely.deleteFrom('login_limits').execute(); };
    for (const n of ['acc', 'other', 'old', 'newer', 'stale', 'busy', 'busy2']) named.set(limitKey('a', n), `a:${n}`);
    for (const n of ['ip1', 'ip', 'ip2', 'ip-old', 'ip-new', 'ip-stale', 'ip-busy', 'ip-busy2']) named.set(limitKey('ip', n), `ip:${n}`);

    it('counts per key in fixed windows and answers the seconds left in the window', async () => {
      await fresh();
      const c = new ManualClock(T0);
      const l = new LoginLimiter(db.kysely, 2, 100, 60_000, () => c.now());
      expect(await l.attempt('acc', 'ip1')).toBe(0);
      c.advance(1);
      expect(await l.attempt('acc', 'ip1')).toBe(0);
      expect(await l.attempt('acc', 'ip1')).toBe(60); // ceil(59.999)
      c.advance(59_000);
      expect(await l.attempt('acc', 'ip1')).toBe(1); // 0.999 s left
      expect(await rows()).toEqual({ 'a:acc': [4, T0], 'ip:ip1': [4, T0] });
      c.advance(998);
      expect(await l.attempt('acc', 'ip1')).toBe(1); // 1 ms left
      c.advance(1); // exactly one window after its start: a new window
      expect(await l.attempt('acc', 'ip1')).toBe(0);
      expect(await rows()).toEqual({ 'a:acc': [1, T0 + 60_000], 'ip:ip1': [1, T0 + 60_000] });
    });

    it('answers the longer of the account and the address waits', async () => {
      await fresh();
      const c = new ManualClock(T0);
      const l = new LoginLimiter(db.kysely, 1, 1, 60_000, () => c.now());
      expect(await l.attempt('acc1', 'ip')).toBe(0); // the address's window starts at T0
      c.advance(30_000);
      expect(await l.attempt('acc2', 'ip')).toBe(30); // address: 30 s left; acc2: first attempt
      expect(await l.attempt('acc2', 'other-ip')).toBe(60); // acc2's window started now: 60 s; other-ip: first attempt
      c.advance(20_000);
      expect(await l.attempt('acc2', 'ip')).toBe(40); // acc2: 40 s, ip: 10 s
      expect(await l.attempt('acc1', 'ip')).toBe(10); // acc1: 10 s, ip: 10 s
    });

    it('a success clears the account and gives the address one attempt back, never below zero', async () => {
      await fresh();
      const c = new ManualClock(T0);
      const l = new LoginLimiter(db.kysely, 5, 5, 60_000, () => c.now());
      await l.attempt('acc', 'ip');
      await l.attempt('acc', 'ip');
      await l.attempt('other', 'ip2');
      await l.succeed('acc', 'ip');
      expect(await rows()).toEqual({ 'ip:ip': [1, T0], 'a:other': [1, T0], 'ip:ip2': [1, T0] });
      await l.succeed('acc', 'ip');
      await l.succeed('acc', 'ip');
      expect(await rows()).toEqual({ 'ip:ip': [0, T0], 'a:other': [1, T0], 'ip:ip2': [1, T0] });
    });

    it('prune drops only windows that ended before now − window', async () => {
      await fresh();
      const c = new ManualClock(T0);
      const l = new LoginLimiter(db.kysely, 5, 5, 60_000, () => c.now());
      await l.attempt('old', 'ip-old');
      c.advance(1);
      await l.attempt('newer', 'ip-new');
      c.advance(59_999); // now − window = T0: the T0 window is not older than that
      await l.prune();
      expect(Object.keys(await rows()).sort()).toEqual(['a:newer', 'a:old', 'ip:ip-new', 'ip:ip-old']);
      c.advance(1);
      await l.prune();
      expect(Object.keys(await rows()).sort()).toEqual(['a:newer', 'ip:ip-new']);
    });

    it('prunes by itself every 500 attempts', async () => {
      await fresh();
      const c = new ManualClock(T0);
      const l = new LoginLimiter(db.kysely, 10_000, 10_000, 60_000, () => c.now());
      await l.attempt('stale', 'ip-stale');
      c.advance(120_000);
      for (let i = 2; i < 500; i++) await l.attempt('busy', 'ip-busy');
      expect(Object.keys(await rows()).sort()).toEqual(['a:busy', 'a:stale', 'ip:ip-busy', 'ip:ip-stale']);
      await l.attempt('busy', 'ip-busy'); // the 500th
      expect(Object.keys(await rows()).sort()).toEqual(['a:busy', 'ip:ip-busy']);
      await l.attempt('stale', 'ip-stale');
      c.advance(120_000);
      for (let i = 502; i < 1000; i++) await l.attempt('busy2', 'ip-busy2');
      expect(Object.keys(await rows())).toContain('a:stale');
      await l.attempt('busy2', 'ip-busy2'); // the 1000th
      expect(Object.keys(await rows()).sort()).toEqual(['a:busy2', 'ip:ip-busy2']);
    });
  });
});
