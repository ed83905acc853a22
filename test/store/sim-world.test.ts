import { afterAll, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';
import { bindSimWorld, SimWorldMismatchError, storedWorld } from '../../src/store/sim-world.js';
import { databases } from '../helpers/databases.js';

const dbs = await databases();
const opened: Db[] = [];
const open = async (url: string) => { const db = await openDb(url); opened.push(db); await migrate(db.kysely); return db; };
afterAll(async () => { for (const db of opened) await db.close().catch(() => undefined); });

const A = { world: '00000000-0000-4000-8000-00000000000a', seed: 1, scale: 'demo' };
const B = { world: '00000000-0000-4000-8000-00000000000b', seed: 1, scale: 'demo' };

describe.each(dbs)('the simulator world a store was filled from, on $name', ({ url }) => {
  it('is recorded on first use, accepted again, and another world of the same seed is refused, naming both', async () => {
    const db = await open(url);
    expect(await bindSimWorld(db.kysely, A, 'advice')).toBe('recorded');
    expect(await storedWorld(db.kysely)).toEqual(A);
    expect(await bindSimWorld(db.kysely, A, 'advice')).toBe('same');
    const e = await bindSimWorld(db.kysely, B, 'Start afresh.').then(() => undefined, (x: unknown) => x as Error);
    expect(e).toBeInstanceOf(SimWorldMismatchError);
    expect(e!.message).toBe(`this store was filled from the v1 simulator world ${A.world} (seed 1, scale demo); the simulator now runs world ` +
      `${B.world} (seed 1, scale demo), whose new ids would collide with the stored ones. Start afresh.`);
    expect(await storedWorld(db.kysely)).toEqual(A); // nothing recorded over it
  });

  it('refuses a store that holds v1 data but records no world (filled before worlds were recorded); users alone do not count', async () => {
    const db = await open(url);
    await db.kysely.deleteFrom('gateway_meta').where('key', '=', 'v1_simulator_world').execute(); // as before worlds were recorded
    await db.kysely.insertInto('id_map').values({ type: 'user', uuid: '00000000-0000-4000-8000-000000000001', v1_id: 'user_1', source: 'imported', created_at: 1 }).execute();
    await db.kysely.insertInto('id_map').values({ type: 'render', uuid: '00000000-0000-4000-8000-000000000002', v1_id: 'rend_1', source: 'derived', created_at: 1 }).execute();
    const e = await bindSimWorld(db.kysely, A, 'advice').then(() => undefined, (x: unknown) => x as Error);
    expect(e).toBeInstanceOf(SimWorldMismatchError);
    expect(e!.message).toMatch(/^this store holds v1 data but records no simulator world/);
    expect(await storedWorld(db.kysely)).toBeUndefined();
    await db.kysely.deleteFrom('id_map').where('type', '=', 'render').execute();
    expect(await bindSimWorld(db.kysely, A, 'advice')).toBe('recorded');
  });
});
