/**
 * The data the gateway sent for renders it created is the client's own (up to MAX_PAYLOAD_BYTES a render): no record
 * holds it — neither the replica's views nor the live path's records. A read reads it from the store for the renders it
 * evaluates, one evaluation at a time (`ReplicaSource.settle`, `RecordMap.settle` on the live path): the evaluation runs
 * with a hand of data; a render whose data is not in it reads a stand-in and is noted; the noted renders' data is weighed,
 * read (`readMissed`) and the evaluation runs again, until nothing is missing. The hand is dropped with the evaluation:
 * nothing of it stays in memory past the answer that read it.
 */
export class DataAtHand {
  private readonly had = new Map<string, unknown>();
  private readonly missedIds = new Set<string>();
  /** Reads of data not in hand, since the hand was made (an item made while this moved read a stand-in). */
  misses = 0;
  /** The stored size of the data in hand (its JSON text's characters). */
  bytes = 0;
  /** What gives back the room the data in hand took (`RenderDataReader.room`). */
  private readonly rooms: (() => void)[] = [];

  /** A hand that holds nothing and notes nothing: every render reads the stand-in (tests of a json field: null or not). */
  static standIn(): DataAtHand {
    const h = new DataAtHand();
    h.noting = false;
    return h;
  }

  private noting = true;

  /** The data of a render, or the stand-in `{}` (noted: the evaluation is run again once it is read). */
  get(v1Id: string): unknown {
    if (!this.noting) return {};
    if (this.had.has(v1Id)) return this.had.get(v1Id);
    this.missedIds.add(v1Id);
    this.misses++;
    return {};
  }

  /** How many renders were read and not in hand, since the last `takeMissed`. */
  get missed(): number {
    return this.missedIds.size;
  }

  /** The renders read and not in hand, emptied. */
  takeMissed(): string[] {
    const out = [...this.missedIds];
    this.missedIds.clear();
    return out;
  }

  /** Keeps the release of room taken for data in hand (given back by `drop`). */
  took(release: () => void): void {
    this.rooms.push(release);
  }

  /** The evaluation ended: the room its data took is given back. */
  drop(): void {
    for (const r of this.rooms.splice(0)) r();
  }

  /**
   * Data read from the store (a render absent from `found` has none: `{}`, as the translator answers it), `bytes` its
   * stored size.
   */
  fill(ids: readonly string[], found: ReadonlyMap<string, unknown>, bytes: number): void {
    for (const id of ids) this.had.set(id, found.has(id) ? found.get(id) : {});
    this.bytes += bytes;
  }
}

/**
 * The hand tests and comparisons read render data from: a stand-in for every render, nothing read. `data` is a json
 * field, which a filter tests only for null (`_null`, `_nnull`) and a sort compares as equal, and stored data is never
 * null: the stand-in `{}` answers both exactly as the data would.
 */
export const STAND_IN_HAND = DataAtHand.standIn();

let current: DataAtHand | null = null;

/** Runs `evaluate` with `hand` as the data at hand (evaluations are synchronous: one hand at a time). */
export function withDataAtHand<T>(hand: DataAtHand, evaluate: () => T): T {
  const prev = current;
  current = hand;
  try {
    return evaluate();
  } finally {
    current = prev;
  }
}

/** The hand of the evaluation running, if any. */
export function dataAtHand(): DataAtHand | null {
  return current;
}

/**
 * A render's data as a record reads it. Read outside an evaluation it is an error of the caller (the replica holds no
 * data): it answers the stand-in and is counted, so a test finds the caller (`readsOutsideHand`).
 */
export function renderDataOf(v1Id: string): unknown {
  if (current) return current.get(v1Id);
  outside++;
  return {};
}

let outside = 0;

/** Reads of render data made outside any evaluation since the process started (a test holds it at 0). */
export function readsOutsideHand(): number {
  return outside;
}

/**
 * An evaluation would hold more render data than it may (`most` bytes, the data's stored size): none of it was read. The
 * executor evaluates fewer items at a time; one item alone past its bound is refused (MAX_ITEM_MB).
 */
export class HandFull extends Error {
  constructor(readonly bytes: number, readonly most: number) {
    super(`an evaluation would hold ${bytes} bytes of render data, more than ${most}`);
  }
}

/**
 * Where render data is read from: its stored sizes first, then the data (the store, `RenderDataStore`). `room`: room for
 * data being built, waited for before it is read (`holding`: the evaluation holds some already), given back when the
 * evaluation ends (src/read/data-room.ts).
 */
export interface RenderDataReader {
  sizes(v1Ids: readonly string[]): Promise<ReadonlyMap<string, number>>;
  many(v1Ids: readonly string[]): Promise<ReadonlyMap<string, unknown>>;
  room?(bytes: number, holding: boolean): Promise<() => void>;
}

/**
 * The data `hand` missed, weighed and read into it; past `most` bytes in hand (stored size), nothing is read: HandFull.
 * False when nothing was missed.
 */
export async function readMissed(hand: DataAtHand, from: RenderDataReader, most = Number.POSITIVE_INFINITY): Promise<boolean> {
  const missed = hand.takeMissed();
  if (missed.length === 0) return false;
  const sizes = await from.sizes(missed);
  let bytes = 0;
  for (const n of sizes.values()) bytes += n;
  if (hand.bytes + bytes > most) throw new HandFull(hand.bytes + bytes, most);
  if (from.room && bytes > 0) hand.took(await from.room(bytes, hand.bytes > 0));
  hand.fill(missed, await readInSlices(missed, sizes, from), bytes);
  return true;
}

/**
 * Stored data read per query — its rows turned into text and parsed in one turn of the event loop: a slice of about this
 * many characters (one row at least), the next read on the next turn (attack pass 10, M: 16 MB of data read and parsed
 * at once held every other request 0.6–0.75 s).
 */
export const READ_SLICE_CHARS = 1_048_576;

/** The data of `ids`, read a slice at a time (`READ_SLICE_CHARS` by their stored sizes), a turn of the event loop between. */
async function readInSlices(ids: readonly string[], sizes: ReadonlyMap<string, number>, from: RenderDataReader): Promise<ReadonlyMap<string, unknown>> {
  let total = 0;
  for (const n of sizes.values()) total += n;
  if (total <= READ_SLICE_CHARS) return from.many(ids);
  const out = new Map<string, unknown>();
  let slice: string[] = [];
  let chars = 0;
  let reads = 0;
  const read = async () => {
    if (reads++ > 0) await new Promise<void>((turn) => setImmediate(turn));
    for (const [id, v] of await from.many(slice)) out.set(id, v);
    slice = [];
    chars = 0;
  };
  for (const id of ids) {
    const n = sizes.get(id) ?? 0;
    if (slice.length > 0 && chars + n > READ_SLICE_CHARS) await read();
    slice.push(id);
    chars += n;
  }
  if (slice.length > 0) await read();
  return out;
}

/** A record whose `data` is read from the hand of the evaluation reading it (render `v1Id`'s): the record holds none. */
export function dataFromHand<T extends object>(rec: T, v1Id: string): T {
  Object.defineProperty(rec, 'data', { get: () => renderDataOf(v1Id), enumerable: true, configurable: true });
  return rec;
}
