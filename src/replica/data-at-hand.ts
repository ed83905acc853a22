/**
 * The data the gateway sent for renders it created is the client's own (up to MAX_PAYLOAD_BYTES a render): the replica
 * does not hold it. A read reads it from the store for the renders it evaluates, one evaluation at a time
 * (`ReplicaSource.settle`): the evaluation runs with a hand of data; a render whose data is not in it reads a stand-in
 * and is noted; the noted renders' data is read and the evaluation runs again, until nothing is missing. The hand is
 * dropped with the evaluation: nothing of it stays in memory past the answer that read it.
 */
export class DataAtHand {
  private readonly had = new Map<string, unknown>();
  private readonly missed = new Set<string>();
  /** Reads of data not in hand, since the hand was made (an item made while this moved read a stand-in). */
  misses = 0;
  /** The stored size of the data in hand (its JSON text's characters). */
  bytes = 0;

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
    this.missed.add(v1Id);
    this.misses++;
    return {};
  }

  /** The renders read and not in hand, emptied. */
  takeMissed(): string[] {
    const out = [...this.missed];
    this.missed.clear();
    return out;
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
