import { afterAll, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';
import { SecretBox } from '../../src/store/crypto.js';
import { verifyEncryptionKey, WrongEncryptionKeyError } from '../../src/store/key-check.js';
import { UserStore } from '../../src/store/users.js';
import { LoginLimiter } from '../../src/auth/login-limiter.js';
import { ManualClock } from '../../src/lib/clock.js';
import { databases } from '../helpers/databases.js';

const dbs = await databases();
const opened: Db[] = [];
const open = async (url: string) => { const db = await openDb(url); opened.push(db); return db; };
afterAll(async () => { for (const db of opened) await db.close().catch(() => undefined); });

describe.each(dbs)('store hardening on $name', ({ url }) => {
  it('0006 adds the idempotency lease columns and keeps earlier claims', async () => {
    const db = await open(url);
    await migrate(db.kysely, '0005_id_map_one_tree');
    await db.kysely.insertInto('idempotency').values({ user_id: 'u', key: 'k', request_hash: 'h', state: 'done', status: 200, response: '{}', created_at: 1 } as never).execute();
    expect(await migrate(db.kysely, '0006_hardening')).toEqual(['0006_hardening']);
    const row = await db.kysely.selectFrom('idempotency').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({ user_id: 'u', key: 'k', state: 'done', lease_until: null, render_v1_id: null });
  });

  it('refuses a wrong ENCRYPTION_KEY at start-up, naming it; the right one passes', async () => {
    const db = await open(url);
    await migrate(db.kysely);
    const right = new SecretBox(Buffer.alloc(32, 1));
    const wrong = new SecretBox(Buffer.alloc(32, 2));
    await new UserStore(db.kysely, right).create({ email: `k${Date.now()}@x.io`, passwordHash: null, role: 'r', v1Key: 'sk_x', v1UserId: 'user_1' });
    // a store written before the check: a stored v1 key is tried
    await expect(verifyEncryptionKey(db.kysely, wrong)).rejects.toThrow(WrongEncryptionKeyError);
    await verifyEncryptionKey(db.kysely, right);
    // from now on the sealed check decides
    await verifyEncryptionKey(db.kysely, right);
    const err = await verifyEncryptionKey(db.kysely, wrong).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(WrongEncryptionKeyError);
    expect(err!.message).toMatch(/^ENCRYPTION_KEY does not open the data in this store/);
  });

  it('limits logins atomically across instances, and the count survives a restart', async () => {
    const db = await open(url);
    await migrate(db.kysely);
    const other = await open(url); // a second instance on the same store
    const clock = new ManualClock();
    const now = () => clock.now();
    const a = new LoginLimiter(db.kysely, 25, 100, 900_000, now);
    const b = new LoginLimiter(other.kysely, 25, 100, 900_000, now);
    const account = `victim-${Math.random()}`;
    // 150 parallel attempts, spread over both instances and many addresses: exactly 25 may be checked
    const waits = await Promise.all(Array.from({ length: 150 }, (_, i) => (i % 2 ? a : b).attempt(account, `10.0.${i % 50}.1`)));
    expect(waits.filter((w) => w === 0)).toHaveLength(25);
    expect(Math.max(...waits)).toBe(900);
    // a restart (a new limiter on the same store) keeps the count
    const restarted = new LoginLimiter(db.kysely, 25, 100, 900_000, now);
    expect(await restarted.attempt(account, '10.9.9.9')).toBeGreaterThan(0);
    // the window ends by the clock
    clock.advance(900_001);
    expect(await restarted.attempt(account, '10.9.9.9')).toBe(0);
  });

  it('counts per address too, and a success gives the address its attempt back', async () => {
    const db = await open(url);
    await migrate(db.kysely);
    const clock = new ManualClock();
    const l = new LoginLimiter(db.kysely, 1000, 3, 60_000, () => clock.now());
    const ip = `192.0.2.${Math.floor(Math.random() * 200)}`;
    for (let i = 0; i < 3; i++) expect(await l.attempt(`user${i}@x.io`, ip)).toBe(0);
    await l.succeed('user2@x.io', ip);
    expect(await l.attempt('user3@x.io', ip)).toBe(0);
    expect(await l.attempt('user4@x.io', ip)).toBe(60);
  });
});
