import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';
import { ReplicaStore } from '../../src/store/replica-store.js';
import { SyncCallStore } from '../../src/store/sync-calls.js';
import { SyncLeases } from '../../src/replica/sync/lease.js';
import type { V1Team } from '../../src/v1/schemas.js';
import { databases } from '../helpers/databases.js';

/**
 * The sync budget's counts in the store (one row per scope and minute) and the sync lease's heartbeat, on an SQLite file
 * and on PostgreSQL, with two connections standing for two instances.
 */
describe.each(await databases())('the shared sync budget and leases on $name', ({ url }) => {
  let one: Db;
  let two: Db;
  let now = 2_000_000_000_000;
  beforeAll(async () => {
    one = await openDb(url);
    await migrate(one.kysely);
    two = await openDb(url);
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
  });

  it('reservations from two connections never pass the limit; a refused scope gives back what the others took', async () => {
    const a = new SyncCallStore(one.kysely);
    const b = new SyncCallStore(two.kysely);
    const team = { scope: 'team:t1', limit: 30 };
    // 20 reservations of 3 calls at once, half on each connection: exactly 10 fit
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).reserve([team], 3, 7)));
    expect(results.filter((r) => r !== null)).toHaveLength(10);
    expect((await a.used(7)).get('team:t1')).toBe(30);
    // each reservation says what its scope's row then held: every count from 3 to 30 once
    expect(results.flatMap((r) => (r ? [r.get('team:t1')] : [])).sort((x, y) => x! - y!)).toEqual(Array.from({ length: 10 }, (_, i) => 3 * (i + 1)));
    // the next minute is a new budget
    expect(await b.reserve([team], 30, 8)).toEqual(new Map([['team:t1', 30]]));
    // a key's budget spent: the team's reservation is given back
    expect(await a.reserve([{ scope: 'key:k1', limit: 5 }], 5, 9)).toEqual(new Map([['key:k1', 5]]));
    expect(await a.reserve([{ scope: 'team:t2', limit: 100 }, { scope: 'key:k1', limit: 5 }], 2, 9)).toBeNull();
    expect((await a.used(9)).get('team:t2')).toBe(0);
    // settling: calls made beyond a reservation are added, calls not made given back (never below zero)
    await a.add(['team:t2'], 4, 9);
    await a.add(['team:t2'], -10, 9);
    expect((await a.used(9)).get('team:t2')).toBe(0);
  });

  it('a live holder\'s heartbeat keeps its lease past 2 × heartbeat; a dead one\'s is taken over after it ran out, not before', async () => {
    const clock = () => now;
    const storeA = new ReplicaStore(one.kysely, clock);
    const storeB = new ReplicaStore(two.kysely, clock);
    await storeA.putTeam({ id: 'lease_team', name: 'L' } as unknown as V1Team, []);
    const a = new SyncLeases(storeA, 'holder-a', 40);
    const b = new SyncLeases(storeB, 'holder-b', 40);
    expect(a.leaseMs).toBe(80);
    const held = (await a.take('lease_team', { sync: true }))!;
    expect(held).toBeDefined();
    expect((await storeB.team('lease_team'))!.syncStartedAt).toBe(now);
    const until = async () => Number((await one.kysely.selectFrom('index_teams').select('lease_until').where('team_id', '=', 'lease_team').executeTakeFirstOrThrow()).lease_until);
    const first = await until();
    now += 70; // near the end of the lease: the heartbeat renews it
    while ((await until()) === first) await new Promise((r) => setTimeout(r, 10));
    now += 70; // past the first lease's end, within the renewed one
    expect(await b.take('lease_team')).toBeUndefined();
    held.check(); // still the holder
    // the holder dies (its heartbeat stops, the lease is not given back)
    await held.release();
    await storeA.lease('lease_team', 'holder-a', a.leaseMs); // as if it had died holding it: until now + 80
    now += 79;
    expect(await b.take('lease_team')).toBeUndefined(); // not before the lease ran out
    now += 2;
    const taken = await b.take('lease_team');
    expect(taken).toBeDefined(); // within 2 × heartbeat of the holder's last renewal
    await taken!.release();
  });
});
