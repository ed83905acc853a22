import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

const WORLD_KEY = 'v1_simulator_world';

/** What the store records of the simulated v1 it was filled from (`WorldIdentity` of `src/sim/journal.ts`). */
export interface StoredWorld {
  readonly world: string;
  readonly seed: number;
  readonly scale: string;
}

/**
 * The store was filled from another simulator world than the one running now: its id pairs, render data and index name
 * objects the running world does not have, and the running world hands out new ids that may be the stored ones.
 */
export class SimWorldMismatchError extends Error {
  constructor(readonly stored: StoredWorld | undefined, readonly running: StoredWorld, advice: string) {
    const was = stored
      ? `was filled from the v1 simulator world ${stored.world} (seed ${stored.seed}, scale ${stored.scale})`
      : 'holds v1 data but records no simulator world (it was filled before worlds were recorded)';
    super(`this store ${was}; the simulator now runs world ${running.world} (seed ${running.seed}, scale ${running.scale}), whose new ids ` +
      `would collide with the stored ones. ${advice}`);
    this.name = 'SimWorldMismatchError';
  }
}

/** The simulator world the store records, if any. */
export async function storedWorld(db: Kysely<Database>): Promise<StoredWorld | undefined> {
  const row = await db.selectFrom('gateway_meta').select('value').where('key', '=', WORLD_KEY).executeTakeFirst();
  return row ? (JSON.parse(row.value) as StoredWorld) : undefined;
}

/** True when the store holds anything that names v1 objects (beyond users, whose keys belong to the seed). */
async function holdsV1Data(db: Kysely<Database>): Promise<boolean> {
  const any = async (q: Promise<unknown>) => (await q) !== undefined;
  return (
    (await any(db.selectFrom('id_map').select('uuid').where('type', '<>', 'user').limit(1).executeTakeFirst())) ||
    (await any(db.selectFrom('render_data').select('v1_id').limit(1).executeTakeFirst())) ||
    (await any(db.selectFrom('overlays').select('v1_id').limit(1).executeTakeFirst())) ||
    (await any(db.selectFrom('index_teams').select('team_id').limit(1).executeTakeFirst()))
  );
}

/**
 * Binds the store to the running simulator world: recorded on first use (an empty store), then checked on every start.
 * A store filled from another world — or filled before worlds were recorded — is refused (`advice` says what to do).
 */
export async function bindSimWorld(db: Kysely<Database>, running: StoredWorld, advice: string): Promise<'recorded' | 'same'> {
  const world: StoredWorld = { world: running.world, seed: running.seed, scale: running.scale };
  let stored = await storedWorld(db);
  if (!stored) {
    if (await holdsV1Data(db)) throw new SimWorldMismatchError(undefined, world, advice);
    await db.insertInto('gateway_meta').values({ key: WORLD_KEY, value: JSON.stringify(world) }).onConflict((oc) => oc.column('key').doNothing()).execute();
    stored = await storedWorld(db); // another process may have recorded its world first
    if (stored?.world === world.world) return 'recorded';
  }
  if (stored?.world !== world.world) throw new SimWorldMismatchError(stored, world, advice);
  return 'same';
}
