import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openChangeBus, type ChangeBus } from '../../src/store/changes.js';
import { randomToken, safeEqual, SecretBox, sha256 } from '../../src/store/crypto.js';
import { openDb, type Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';
import { SessionStore } from '../../src/store/sessions.js';
import { DuplicateEmailError, UserStore, type NewUser } from '../../src/store/users.js';
import { databases } from '../helpers/databases.js';

/** Sessions, users and static tokens, and the crypto under them, checked against the rows they leave in the store. */
const [{ url }] = (await databases()) as unknown as [{ url: string }];
let db: Db;
let now = 1_800_000_000_000;
const clock = () => now;
const box = new SecretBox(Buffer.alloc(32, 9));
beforeAll(async () => {
  db = await openDb(url);
  await migrate(db.kysely);
});
afterAll(async () => db.close());

const hex = (s: string) => createHash('sha256').update(s).digest('hex');

describe('crypto', () => {
  it('SecretBox needs exactly 32 bytes', () => {
    expect(() => new SecretBox(Buffer.alloc(31))).toThrow(new TypeError('SecretBox needs a 32-byte key'));
    expect(() => new SecretBox(Buffer.alloc(33))).toThrow(TypeError);
    expect(() => new SecretBox(Buffer.alloc(32))).not.toThrow();
  });

  it('seals as v1:<base64 iv|tag|ciphertext>, with a fresh iv, and opens only with the key', () => {
    const plain = 'sk_live_Ünïcödé_0123456789';
    const a = box.seal(plain);
    const b = box.seal(plain);
    expect(a).toMatch(/^v1:[A-Za-z0-9+/]+=*$/);
    expect(a).not.toBe(b);
    const raw = Buffer.from(a.slice(3), 'base64');
    expect(raw.length).toBe(12 + 16 + Buffer.byteLength(plain, 'utf8'));
    expect(box.open(a)).toBe(plain);
    expect(box.open(b)).toBe(plain);
    expect(box.open(box.seal(''))).toBe('');
    expect(() => new SecretBox(Buffer.alloc(32, 8)).open(a)).toThrow();
    expect(() => box.open(`v2:${a.slice(3)}`)).toThrow('unknown sealed format');
    const tampered = Buffer.from(raw);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => box.open(`v1:${tampered.toString('base64')}`)).toThrow();
  });

  it('sha256 is the hex digest', () => {
    expect(sha256('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('safeEqual is true only for the same string', () => {
    expect(safeEqual('operator-token', 'operator-token')).toBe(true);
    expect(safeEqual('operator-token', 'operator-tokem')).toBe(false);
    expect(safeEqual('operator-token', 'operator-token-2')).toBe(false);
    expect(safeEqual('', '')).toBe(true);
    expect(safeEqual('', 'x')).toBe(false);
  });

  it('randomToken is 48 bytes by default', () => {
    expect(randomToken()).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{63}$/);
    expect(randomToken(3)).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{3}$/);
  });
});

describe('SessionStore', () => {
  const TTL = 60_000;
  let userId: string;
  const sessions = () => new SessionStore(db.kysely, TTL, clock);
  const tokenRow = (token: string) => db.kysely.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', hex(token)).executeTakeFirst();
  const sessionRow = (id: string) => db.kysely.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  beforeAll(async () => {
    userId = (await new UserStore(db.kysely, box, clock).create({ email: 'sessions@x.io', passwordHash: null, role: 'r', v1Key: 'k', v1UserId: 'v1_s' })).id;
  });

  it('create stores the session and the hashed token, expiring a TTL later', async () => {
    const t = now;
    const { sessionId, refreshToken } = await sessions().create(userId);
    expect(refreshToken).toMatch(/^[A-Za-z0-9_-]{64}$/);
    expect(await sessionRow(sessionId)).toMatchObject({ id: sessionId, user_id: userId, created_at: t, revoked_at: null, revoke_reason: null });
    expect(await tokenRow(refreshToken)).toMatchObject({ session_id: sessionId, status: 'active', expires_at: t + TTL, created_at: t });
    expect(await db.kysely.selectFrom('refresh_tokens').select('token_hash').where('token_hash', '=', refreshToken).executeTakeFirst()).toBeUndefined();
  });

  it('rotate answers the user and session and a new token; the old one is marked rotated', async () => {
    const s = sessions();
    const { sessionId, refreshToken } = await s.create(userId);
    now += 1_000;
    const r = await s.rotate(refreshToken);
    expect(r).toMatchObject({ ok: true, userId, sessionId });
    const next = (r as { refreshToken: string }).refreshToken;
    expect(next).toMatch(/^[A-Za-z0-9_-]{64}$/);
    expect(next).not.toBe(refreshToken);
    expect((await tokenRow(refreshToken))!.status).toBe('rotated');
    expect(await tokenRow(next)).toMatchObject({ session_id: sessionId, status: 'active', expires_at: now + TTL, created_at: now });
    expect((await sessionRow(sessionId)).revoked_at).toBeNull();
  });

  it('a token is good until the last millisecond before it expires, and an expired one is left as it was', async () => {
    const s = sessions();
    const a = await s.create(userId);
    const b = await s.create(userId);
    now += TTL - 1;
    expect((await s.rotate(a.refreshToken)).ok).toBe(true);
    now += 1;
    expect(await s.rotate(b.refreshToken)).toEqual({ ok: false, reason: 'expired' });
    expect((await tokenRow(b.refreshToken))!.status).toBe('active');
    expect((await sessionRow(b.sessionId)).revoked_at).toBeNull();
  });

  it('reuse revokes that session (reason, time, every token) and no other', async () => {
    const s = sessions();
    const a = await s.create(userId);
    const b = await s.create(userId);
    const a2 = (await s.rotate(a.refreshToken)) as { refreshToken: string };
    now += 5;
    // reuse is told before expiry
    now += TTL;
    expect(await s.rotate(a.refreshToken)).toEqual({ ok: false, reason: 'reused' });
    expect(await sessionRow(a.sessionId)).toMatchObject({ revoked_at: now, revoke_reason: 'refresh_token_reuse' });
    expect((await tokenRow(a.refreshToken))!.status).toBe('revoked');
    expect((await tokenRow(a2.refreshToken))!.status).toBe('revoked');
    expect(await s.rotate(a2.refreshToken)).toEqual({ ok: false, reason: 'revoked' });
    // the other session is untouched
    expect((await sessionRow(b.sessionId)).revoked_at).toBeNull();
    expect((await tokenRow(b.refreshToken))!.status).toBe('active');
  });

  it('session mode: a rotated token stays good for the grace period — live, and refreshed again into another current token', async () => {
    const GRACE = 10_000;
    const s = new SessionStore(db.kysely, TTL, clock, GRACE);
    const a = await s.create(userId);
    const a2 = (await s.rotate(a.refreshToken, { grace: true })) as { ok: true; refreshToken: string; sessionId: string };
    expect(a2).toMatchObject({ ok: true, sessionId: a.sessionId });
    expect(await tokenRow(a.refreshToken)).toMatchObject({ status: 'rotated', rotated_at: now });
    now += GRACE - 1;
    expect(await s.live(a.refreshToken, { grace: true })).toBe(true);
    expect(await s.live(a.refreshToken)).toBe(false); // json and cookie modes: dead at once
    const again = (await s.rotate(a.refreshToken, { grace: true })) as { ok: true; refreshToken: string; sessionId: string };
    expect(again).toMatchObject({ ok: true, sessionId: a.sessionId });
    expect(again.refreshToken).toBe(a2.refreshToken); // Directus 10.10: the same successor, not another chain
    expect((await tokenRow(a2.refreshToken))!.status).toBe('active'); // the first refresh's token is still good
    expect((await sessionRow(a.sessionId)).revoked_at).toBeNull();
    now += 1;
    expect(await s.live(a.refreshToken, { grace: true })).toBe(false);
    // past the grace period it is reuse, as in any mode
    expect(await s.rotate(a.refreshToken, { grace: true })).toEqual({ ok: false, reason: 'reused' });
    expect(await sessionRow(a.sessionId)).toMatchObject({ revoked_at: now, revoke_reason: 'refresh_token_reuse' });
    // without the grace option a second refresh is reuse at once
    const b = await s.create(userId);
    expect((await s.rotate(b.refreshToken)).ok).toBe(true);
    expect(await s.rotate(b.refreshToken)).toEqual({ ok: false, reason: 'reused' });
  });

  it('session mode: refreshes of one token within the grace period all answer its one successor; after it, reuse ends them all', async () => {
    const GRACE = 10_000;
    const s = new SessionStore(db.kysely, TTL, clock, GRACE);
    const a = await s.create(userId);
    const tokens: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await s.rotate(a.refreshToken, { grace: true });
      expect(r).toMatchObject({ ok: true, sessionId: a.sessionId });
      tokens.push((r as { refreshToken: string }).refreshToken);
      now += 1_000;
    }
    expect(new Set(tokens).size).toBe(1); // one chain, not three
    const live = await db.kysely.selectFrom('refresh_tokens').select('token_hash').where('session_id', '=', a.sessionId).where('status', '=', 'active').execute();
    expect(live).toHaveLength(1);
    // the successor rotates on as usual; then, past the grace period, the first token is reuse and the chain ends
    const c3 = (await s.rotate(tokens[0]!, { grace: true })) as { ok: true; refreshToken: string };
    expect(c3.ok).toBe(true);
    now += GRACE;
    expect(await s.rotate(a.refreshToken, { grace: true })).toEqual({ ok: false, reason: 'reused' });
    for (const t of [tokens[0]!, c3.refreshToken]) expect(await s.rotate(t, { grace: true })).toEqual({ ok: false, reason: 'revoked' });
    // another session's first refresh gives another successor (nothing shared between sessions)
    const b = await s.create(userId);
    const b2 = (await s.rotate(b.refreshToken, { grace: true })) as { refreshToken: string };
    expect(b2.refreshToken).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{63}$/);
    expect(b2.refreshToken).not.toBe(tokens[0]);
  });

  it('session mode: two refreshes of one token at once both succeed, in one session (SQLite and PostgreSQL)', async () => {
    for (const { name, url: u } of await databases()) {
      const d = await openDb(u);
      try {
        await migrate(d.kysely);
        const user = (await new UserStore(d.kysely, box, clock).create({ email: `race-${name}@x.io`, passwordHash: null, role: 'r', v1Key: 'k', v1UserId: `v1_r_${name}` })).id;
        const s = new SessionStore(d.kysely, TTL, clock, 10_000);
        const a = await s.create(user);
        const both = await Promise.all([s.rotate(a.refreshToken, { grace: true }), s.rotate(a.refreshToken, { grace: true })]);
        expect(both.map((r) => r.ok), name).toEqual([true, true]);
        expect(both.map((r) => (r as { sessionId: string }).sessionId), name).toEqual([a.sessionId, a.sessionId]);
        expect(new Set(both.map((r) => (r as { refreshToken: string }).refreshToken)).size, name).toBe(1);
        const session = await d.kysely.selectFrom('sessions').select('revoked_at').where('id', '=', a.sessionId).executeTakeFirstOrThrow();
        expect(session.revoked_at, name).toBeNull();
        // without the grace option the loser of the race is reuse, and the session ends
        const b = await s.create(user);
        const race = await Promise.all([s.rotate(b.refreshToken), s.rotate(b.refreshToken)]);
        expect(race.filter((r) => r.ok), name).toHaveLength(1);
        expect(race.find((r) => !r.ok), name).toEqual({ ok: false, reason: 'reused' });
      } finally {
        await d.close();
      }
    }
  });

  it('rotating one token leaves the other sessions\' tokens active', async () => {
    const s = sessions();
    const a = await s.create(userId);
    const b = await s.create(userId);
    expect((await s.rotate(a.refreshToken)).ok).toBe(true);
    expect((await tokenRow(b.refreshToken))!.status).toBe('active');
    expect(await s.rotate(b.refreshToken)).toMatchObject({ ok: true, sessionId: b.sessionId });
  });

  it('logout revokes the session once (reason logout) and every token of it; unknown tokens change nothing', async () => {
    const s = sessions();
    const a = await s.create(userId);
    const other = await s.create(userId);
    const a2 = (await s.rotate(a.refreshToken)) as { refreshToken: string };
    const at = now;
    await s.logout(a2.refreshToken);
    expect(await sessionRow(a.sessionId)).toMatchObject({ revoked_at: at, revoke_reason: 'logout' });
    expect((await tokenRow(a.refreshToken))!.status).toBe('revoked');
    expect((await tokenRow(a2.refreshToken))!.status).toBe('revoked');
    now += 10;
    await s.logout(a.refreshToken); // already ended: its time and reason stay
    expect(await sessionRow(a.sessionId)).toMatchObject({ revoked_at: at, revoke_reason: 'logout' });
    await s.logout('never-issued');
    expect((await sessionRow(other.sessionId)).revoked_at).toBeNull();
    expect((await tokenRow(other.refreshToken))!.status).toBe('active');
  });
});

describe('UserStore', () => {
  let bus: ChangeBus;
  let heard: string[];
  let users: UserStore;
  const base = (over: Partial<NewUser> = {}): NewUser => ({ email: `u${Math.random()}@x.io`, passwordHash: null, role: 'r', v1Key: 'sk_k', v1UserId: 'v1_u', ...over });
  const row = (id: string) => db.kysely.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  beforeAll(async () => {
    bus = await openChangeBus(db, url, 0);
    heard = [];
    bus.on('users', (k) => heard.push(`users ${k}`));
    bus.on('tokens', (k) => heard.push(`tokens ${k}`));
    users = new UserStore(db.kysely, box, clock, bus);
  });
  afterAll(async () => bus.close());
  beforeEach(() => { heard.length = 0; });

  it('create trims the email, keeps its lower case for lookups, and fills the defaults', async () => {
    const u = await users.create({ email: '  Mixed.Case@X.io ', passwordHash: '$argon2id$h', role: 'role-1', v1Key: 'sk_secret', v1UserId: 'v1_1' });
    expect(u).toEqual({ id: u.id, email: 'Mixed.Case@X.io', firstName: null, lastName: null, role: 'role-1', v1UserId: 'v1_1', status: 'active' });
    expect(u.id).toMatch(/^[0-9a-f-]{36}$/);
    const r = await row(u.id);
    expect(r).toMatchObject({ email: 'Mixed.Case@X.io', email_lower: 'mixed.case@x.io', password_hash: '$argon2id$h', created_at: now, updated_at: null, status: 'active' });
    expect(box.open(r.v1_key_enc)).toBe('sk_secret');
    expect(heard).toEqual([`users ${u.id}`]);
    await expect(users.create(base({ email: ' MIXED.case@x.IO' }))).rejects.toThrow('A user with email  MIXED.case@x.IO already exists.');
    const named = await users.create(base({ id: '11111111-2222-4333-8444-555555555555', firstName: 'F', lastName: 'L', status: 'unbound' }));
    expect(named).toMatchObject({ id: '11111111-2222-4333-8444-555555555555', firstName: 'F', lastName: 'L', status: 'unbound' });
    expect(await users.byEmail(' Mixed.CASE@x.io ')).toEqual({ ...u, passwordHash: '$argon2id$h' });
    expect(await users.byEmail('nobody@x.io')).toBeUndefined();
  });

  it('createMany writes every user of a long list, then tells the bus once', async () => {
    const list = Array.from({ length: 523 }, (_, i) => ({ ...base({ email: ` Many${i}@X.io`, firstName: i === 7 ? 'Seven' : undefined,
      lastName: i === 8 ? 'Eight' : undefined, status: i === 9 ? 'unbound' : undefined }), id: `many-${String(i).padStart(4, '0')}` }));
    const s = new UserStore(db.kysely, box, clock, bus);
    expect(await s.byId('many-0010')).toBeUndefined(); // a miss, kept
    await s.createMany(list);
    expect((await s.byId('many-0010'))!.email).toBe('Many10@X.io'); // every kept user was dropped
    expect(heard).toEqual(['users *']);
    const n = await db.kysely.selectFrom('users').select((e) => e.fn.countAll<number>().as('n')).where('id', 'like', 'many-%').executeTakeFirstOrThrow();
    expect(Number(n.n)).toBe(523);
    expect(await row('many-0522')).toMatchObject({ email: 'Many522@X.io', email_lower: 'many522@x.io', status: 'active', first_name: null, created_at: now, updated_at: null });
    expect((await row('many-0007')).first_name).toBe('Seven');
    expect(await row('many-0008')).toMatchObject({ first_name: null, last_name: 'Eight', status: 'active' });
    expect((await row('many-0009')).status).toBe('unbound');
    expect(await users.v1Key('many-0300')).toBe('sk_k');
    const ids = await users.identities();
    expect(ids.ids.has('many-0001')).toBe(true);
    expect(ids.emails.get('many1@x.io')).toBe('many-0001');
    expect(ids.ids.size).toBe(ids.emails.size);
  });

  it('createMany drops every kept user even without a bus', async () => {
    const alone = new UserStore(db.kysely, box, clock);
    expect(await alone.byId('solo-0001')).toBeUndefined(); // a miss, kept
    await alone.createMany([{ ...base({ email: 'solo1@x.io' }), id: 'solo-0001' }]);
    expect((await alone.byId('solo-0001'))!.email).toBe('solo1@x.io');
  });

  it('replaceImported replaces hash, names and role, and the key only when one is given', async () => {
    const u = await users.create(base({ status: 'unbound', firstName: 'Old', lastName: 'Name', v1Key: 'sk_old', v1UserId: 'v1_old' }));
    heard.length = 0;
    now += 1;
    await users.replaceImported(u.id, base({ passwordHash: '$argon2id$new', role: 'r2', v1Key: '', v1UserId: 'ignored' }));
    expect(await row(u.id)).toMatchObject({ password_hash: '$argon2id$new', first_name: null, last_name: null, role: 'r2', updated_at: now, v1_user_id: 'v1_old', status: 'unbound' });
    expect(await users.v1Key(u.id)).toBe('sk_old');
    expect(heard).toEqual([`users ${u.id}`]);
    now += 1;
    await users.replaceImported(u.id, base({ passwordHash: null, firstName: 'New', lastName: 'Last', role: 'r3', v1Key: 'sk_new', v1UserId: 'v1_new' }));
    expect(await row(u.id)).toMatchObject({ password_hash: null, first_name: 'New', last_name: 'Last', role: 'r3', updated_at: now, v1_user_id: 'v1_new', status: 'active' });
    expect(await users.v1Key(u.id)).toBe('sk_new');
  });

  it('byId keeps users in memory until the bus, a write or a resync says otherwise', async () => {
    const users = new UserStore(db.kysely, box, clock, bus);
    const u = await users.create(base({ firstName: 'Kept' }));
    const v = await users.create(base({ firstName: 'Also kept' }));
    expect((await users.byId(u.id))!.firstName).toBe('Kept');
    expect((await users.byId(v.id))!.firstName).toBe('Also kept');
    await db.kysely.updateTable('users').set({ first_name: 'V behind' }).where('id', '=', v.id).execute();
    await db.kysely.updateTable('users').set({ first_name: 'Behind' }).where('id', '=', u.id).execute();
    expect((await users.byId(u.id))!.firstName).toBe('Kept'); // from memory
    expect((await users.byId(v.id))!.firstName).toBe('Also kept'); // both kept
    await users.update(u.id, {}); // a write drops that user only (and reads it again)
    expect((await users.byId(u.id))!.firstName).toBe('Behind');
    expect((await users.byId(v.id))!.firstName).toBe('Also kept');
    await db.kysely.updateTable('users').set({ first_name: 'Behind 2' }).where('id', '=', u.id).execute();
    await bus.publish('users', 'some-other-id');
    expect((await users.byId(u.id))!.firstName).toBe('Behind');
    await bus.publish('users', u.id);
    expect((await users.byId(u.id))!.firstName).toBe('Behind 2');
    expect((await users.byId(v.id))!.firstName).toBe('Also kept');
    await db.kysely.updateTable('users').set({ first_name: 'Again' }).where('id', '=', u.id).execute();
    await bus.publish('users', '*');
    expect((await users.byId(u.id))!.firstName).toBe('Again');
    expect((await users.byId(v.id))!.firstName).toBe('V behind');
    // a miss is kept too, until a write of that id
    expect(await users.byId('late-id')).toBeUndefined();
    await db.kysely.insertInto('users').values({ ...(await row(u.id)), id: 'late-id', email: 'late@x.io', email_lower: 'late@x.io' }).execute();
    expect(await users.byId('late-id')).toBeUndefined();
    await users.setPasswordHash('late-id', '$argon2id$late'); // no bus message: the miss stays
    expect(await users.byId('late-id')).toBeUndefined();
    expect((await row('late-id')).password_hash).toBe('$argon2id$late');
    await users.rebind('late-id', 'sk_late', 'v1_late');
    expect((await users.byId('late-id'))!.v1UserId).toBe('v1_late');
  });

  it('keeps at most 20 000 users (misses included) in memory, then starts afresh', async () => {
    const users = new UserStore(db.kysely, box, clock, bus);
    const u = await users.create(base({ firstName: 'First' }));
    await users.byId(u.id);
    await db.kysely.updateTable('users').set({ first_name: 'Changed' }).where('id', '=', u.id).execute();
    for (let i = 1; i < 20_000; i++) await users.byId(`absent-${i}`);
    expect((await users.byId(u.id))!.firstName).toBe('First'); // 20 000 kept
    await users.byId('absent-20000');
    expect((await users.byId(u.id))!.firstName).toBe('Changed');
  });

  it('byId follows another process\'s writes after a resync', async () => {
    const users = new UserStore(db.kysely, box, clock, bus);
    const u = await users.create(base({ firstName: 'Before' }));
    expect((await users.byId(u.id))!.firstName).toBe('Before');
    const other = await openDb(url);
    try {
      await other.kysely.updateTable('users').set({ first_name: 'Elsewhere' }).where('id', '=', u.id).execute();
    } finally {
      await other.close();
    }
    expect((await users.byId(u.id))!.firstName).toBe('Before');
    await bus.sync();
    expect((await users.byId(u.id))!.firstName).toBe('Elsewhere');
  });

  it('list is ordered by lower-cased email; boundUsers lists active users by creation', async () => {
    const fresh = await openDb(url.replace(/store\.db$/, 'list.db'));
    try {
      await migrate(fresh.kysely);
      const s = new UserStore(fresh.kysely, box, clock);
      now += 1; const c = await s.create(base({ email: 'c@x.io', v1UserId: 'v1_c' }));
      now += 1; const a = await s.create(base({ email: 'B@x.io', v1UserId: 'v1_b', status: 'unbound' }));
      now += 1; const b = await s.create(base({ email: 'a@x.io', v1UserId: 'v1_a' }));
      now += 1; const d = await s.create(base({ email: 'd@x.io', v1UserId: 'v1_d' }));
      await s.setStatus(d.id, 'suspended');
      expect((await s.list()).map((u) => u.email)).toEqual(['a@x.io', 'B@x.io', 'c@x.io', 'd@x.io']);
      expect(await s.boundUsers()).toEqual([{ id: c.id, v1UserId: 'v1_c' }, { id: b.id, v1UserId: 'v1_a' }]);
      expect(a.status).toBe('unbound');
    } finally {
      await fresh.close();
    }
  });

  it('remove, rebind and setStatus answer whether a user was there, and stamp updated_at', async () => {
    const u = await users.create(base({ status: 'unbound' }));
    heard.length = 0;
    now += 7;
    expect(await users.rebind(u.id, 'sk_rebound', 'v1_rebound')).toBe(true);
    expect(await row(u.id)).toMatchObject({ status: 'active', v1_user_id: 'v1_rebound', updated_at: now });
    expect(await users.v1Key(u.id)).toBe('sk_rebound');
    expect(heard).toEqual([`users ${u.id}`]);
    expect(await users.rebind('missing', 'k', 'v')).toBe(false);
    heard.length = 0;
    now += 7;
    expect(await users.setStatus(u.id, 'suspended')).toBe(true);
    expect(await row(u.id)).toMatchObject({ status: 'suspended', updated_at: now });
    expect(heard).toEqual([`users ${u.id}`, 'tokens *']);
    expect((await users.byId(u.id))!.status).toBe('suspended');
    expect(await users.setStatus('missing', 'active')).toBe(false);
    now += 7;
    await users.setPasswordHash(u.id, '$argon2id$p');
    expect(await row(u.id)).toMatchObject({ password_hash: '$argon2id$p', updated_at: now });
    heard.length = 0;
    expect(await users.remove(u.id)).toBe(true);
    expect(heard).toEqual([`users ${u.id}`, 'tokens *']);
    expect(await users.byId(u.id)).toBeUndefined();
    expect(await users.v1Key(u.id)).toBeUndefined();
    expect(await users.remove(u.id)).toBe(false);
  });

  it('update changes only the given fields, keeps emails unique, and answers the fresh user', async () => {
    const u = await users.create(base({ email: 'upd@x.io', firstName: 'A', lastName: 'B' }));
    const other = await users.create(base({ email: 'taken@x.io' }));
    await users.byId(u.id);
    heard.length = 0;
    now += 3;
    expect(await users.update(u.id, { lastName: null })).toMatchObject({ email: 'upd@x.io', firstName: 'A', lastName: null });
    expect((await row(u.id)).updated_at).toBe(now);
    expect(heard).toEqual([`users ${u.id}`]);
    expect(await users.update(u.id, { firstName: 'Z' })).toMatchObject({ firstName: 'Z', lastName: null });
    // its own email, in another case, is no conflict
    expect(await users.update(u.id, { email: ' UPD@x.io ' })).toMatchObject({ email: 'UPD@x.io' });
    expect((await row(u.id)).email_lower).toBe('upd@x.io');
    await expect(users.update(u.id, { email: 'TAKEN@x.io' })).rejects.toBeInstanceOf(DuplicateEmailError);
    expect((await row(other.id)).email).toBe('taken@x.io');
    expect(await users.update(u.id, {})).toMatchObject({ email: 'UPD@x.io', firstName: 'Z' });
  });

  describe('static tokens', () => {
    it('are stored hashed with their name and time, answered once, and listed per user by creation', async () => {
      const u = await users.create(base());
      const v = await users.create(base());
      now += 1; const t1 = await users.createStaticToken(u.id, 'first');
      now += 1; const t2 = await users.createStaticToken(v.id, 'other');
      now += 1; const t3 = await users.createStaticToken(u.id, 'second');
      expect(t1.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const r = await db.kysely.selectFrom('static_tokens').selectAll().where('id', '=', t1.id).executeTakeFirstOrThrow();
      expect(r).toMatchObject({ user_id: u.id, token_hash: hex(t1.token), name: 'first', created_at: now - 2, revoked_at: null, last_used_at: null });
      expect(await users.listStaticTokens(u.id)).toEqual([
        { id: t1.id, user_id: u.id, name: 'first', created_at: now - 2, revoked_at: null },
        { id: t3.id, user_id: u.id, name: 'second', created_at: now, revoked_at: null },
      ]);
      const all = (await users.listStaticTokens()).map((x) => x.id);
      expect(all).toEqual(expect.arrayContaining([t1.id, t2.id, t3.id]));
      expect(all.indexOf(t1.id)).toBeLessThan(all.indexOf(t2.id));
      expect(all.indexOf(t2.id)).toBeLessThan(all.indexOf(t3.id));
    });

    it('resolve to their active user and token id; revoked, unknown and suspended do not', async () => {
      const users = new UserStore(db.kysely, box, clock, bus);
      const u = await users.create(base());
      const { id, token } = await users.createStaticToken(u.id, 'ci');
      expect(await users.userForStaticToken(token)).toEqual({ user: u, tokenId: id });
      expect(await users.userForStaticToken(token)).toEqual({ user: u, tokenId: id }); // from memory
      expect(await users.setStatus(u.id, 'suspended')).toBe(true);
      expect(await users.userForStaticToken(token)).toBeUndefined();
      await users.setStatus(u.id, 'active');
      expect(await users.userForStaticToken(token)).toMatchObject({ tokenId: id });
      // kept in memory: a suspension written behind the store's back is still seen through the kept user
      await users.byId(u.id);
      await db.kysely.updateTable('users').set({ status: 'suspended' }).where('id', '=', u.id).execute();
      await bus.publish('users', u.id);
      expect(await users.userForStaticToken(token)).toBeUndefined();
      await db.kysely.updateTable('users').set({ status: 'active' }).where('id', '=', u.id).execute();
      await bus.publish('users', u.id);
      now += 4;
      expect(await users.revokeStaticToken(id)).toBe(true);
      expect((await users.listStaticTokens(u.id))[0]!.revoked_at).toBe(now);
      expect(await users.userForStaticToken(token)).toBeUndefined();
      now += 4;
      expect(await users.revokeStaticToken(id)).toBe(false);
      expect((await users.listStaticTokens(u.id))[0]!.revoked_at).toBe(now - 4);
      expect(await users.userForStaticToken('unknown')).toBeUndefined();
    });

    it('a kept token follows the bus: a revocation written elsewhere counts once tokens are dropped', async () => {
      const users = new UserStore(db.kysely, box, clock, bus);
      const u = await users.create(base());
      const { id, token } = await users.createStaticToken(u.id, 'kept');
      expect((await users.userForStaticToken(token))?.tokenId).toBe(id);
      await db.kysely.updateTable('static_tokens').set({ revoked_at: now }).where('id', '=', id).execute();
      expect((await users.userForStaticToken(token))?.tokenId).toBe(id); // from memory
      await bus.publish('tokens');
      expect(await users.userForStaticToken(token)).toBeUndefined();
    });

    it('a token of a suspended user is not found in the store either', async () => {
      const u = await users.create(base());
      const { token } = await users.createStaticToken(u.id, 's');
      await db.kysely.updateTable('users').set({ status: 'suspended' }).where('id', '=', u.id).execute();
      expect(await users.userForStaticToken(token)).toBeUndefined();
    });

    it('imports legacy tokens by their hash, once', async () => {
      const u = await users.create(base());
      heard.length = 0;
      now += 2;
      expect(await users.importStaticToken(u.id, 'legacy-static-token', 'legacy')).toBe(true);
      expect(heard).toEqual(['tokens *']);
      const r = await db.kysely.selectFrom('static_tokens').selectAll().where('user_id', '=', u.id).executeTakeFirstOrThrow();
      expect(r).toMatchObject({ token_hash: hex('legacy-static-token'), name: 'legacy', created_at: now, revoked_at: null });
      expect(r.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(await users.importStaticToken(u.id, 'legacy-static-token', 'again')).toBe(false);
      expect(await users.listStaticTokens(u.id)).toHaveLength(1);
      expect(await users.userForStaticToken('legacy-static-token')).toEqual({ user: u, tokenId: r.id });
    });
  });
});
