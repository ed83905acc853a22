import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { WorldWrite } from './world.js';

/**
 * Which simulated v1 a world is: a random id drawn when the world was first generated, with the seed, scale and origin
 * it was generated from. Two simulators with the same seed are still two worlds (each hands out the same "new" ids), so
 * a store filled from one must never be used with the other (`src/store/sim-world.ts`).
 */
export interface WorldIdentity {
  readonly world: string;
  readonly seed: number;
  readonly scale: string;
  /** The instant the seeded data was generated around (ms). */
  readonly origin: number;
}

/** The journal does not hold a world, or holds another seed or scale than the one asked for (a configuration problem). */
export class WorldJournalError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorldJournalError';
  }
}

/**
 * A simulator world kept across restarts as JSON lines: its identity first, then every write made to it, appended as it
 * is made (synchronously: a write the simulator answered is in the file). The world is generated again from the
 * identity and the writes are replayed (`World.replay`).
 */
export class WorldJournal {
  private constructor(readonly file: string, readonly identity: WorldIdentity, readonly writes: readonly WorldWrite[], readonly created: boolean) {}

  /**
   * Opens the journal at `file`, or starts one for a new world (`newIdentity()`) when there is none. A journal of another
   * seed or scale is refused: its world is not the one asked for.
   */
  static open(file: string, want: { seed: number; scale: string }, newIdentity: () => WorldIdentity): WorldJournal {
    if (!existsSync(file)) {
      const identity = newIdentity();
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, `${JSON.stringify({ ...identity, created_at: new Date().toISOString() })}\n`, { flag: 'wx' });
      return new WorldJournal(file, identity, [], true);
    }
    const lines = readFileSync(file, 'utf8').split('\n');
    // a crash in the middle of an append leaves a partial last line (never answered: the write did not happen)
    if (lines.at(-1) !== '') lines.pop();
    const parse = (line: string, n: number): unknown => {
      try {
        return JSON.parse(line);
      } catch {
        throw new WorldJournalError(`${file} line ${n}: not JSON; the simulator world cannot be restored from it`);
      }
    };
    const head = parse(lines[0] ?? '', 1) as Partial<WorldIdentity>;
    if (typeof head?.world !== 'string' || typeof head.seed !== 'number' || typeof head.scale !== 'string' || typeof head.origin !== 'number') {
      throw new WorldJournalError(`${file} does not start with a simulator world (world, seed, scale, origin)`);
    }
    const identity: WorldIdentity = { world: head.world, seed: head.seed, scale: head.scale, origin: head.origin };
    if (identity.seed !== want.seed || identity.scale !== want.scale) {
      throw new WorldJournalError(
        `${file} keeps the simulator world of SIM_SEED=${identity.seed} SIM_SCALE=${identity.scale}, not SIM_SEED=${want.seed} ` +
          `SIM_SCALE=${want.scale}: set those back, or use another DATABASE_URL (the world is kept beside its store)`,
      );
    }
    const writes = lines.slice(1).filter((l) => l.trim() !== '').map((l, i) => parse(l, i + 2) as WorldWrite);
    return new WorldJournal(file, identity, writes, false);
  }

  /** Appends one write (before the simulator answers the request that made it). */
  append(w: WorldWrite): void {
    appendFileSync(this.file, `${JSON.stringify(w)}\n`);
  }
}
