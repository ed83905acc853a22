import type { TestTurn } from '../query/test-turn.js';
import { pace } from '../lib/pace.js';
import { errors } from '../errors/catalog.js';

/**
 * Runs a batch's filter tests (`evaluate`) round after round until no relational walk stops short, the event loop given a
 * turn between rounds (`pace`): a costly relational filter is slow for its own client, never a stall for the others.
 * `settle` runs one round to its end (the live source fetches what the round missed) and says if it was whole. `gone`:
 * the answer's end — once its client has left, no further round is run (abandoned filters held an instance's CPU for
 * minutes: attack pass 14, H2).
 */
export async function testInRounds<T>(
  turn: TestTurn, evaluate: () => T, settle: (round: () => T) => Promise<T> = async (round) => round(), gone?: AbortSignal,
): Promise<T> {
  for (;;) {
    let whole = true;
    const out = await settle(() => {
      const r = turn.round(evaluate);
      whole = r.whole;
      return r.out;
    });
    if (whole) return out;
    await nextRound(gone);
  }
}

/**
 * Between two rounds: always a turn of the event loop (the paced one when other long reads wait, else the next), then
 * the 503 of a gone client. Shared by the test rounds here and the replica's settle (its projections' rounds).
 */
export async function nextRound(gone: AbortSignal | undefined): Promise<void> {
  await (pace() ?? new Promise<void>((resolve) => setImmediate(resolve)));
  stopIfGone(gone);
}

/** Throws the 503 a gone client's read ends with (nobody reads it: the work stops). */
export function stopIfGone(gone: AbortSignal | undefined): void {
  if (gone?.aborted) throw errors.serviceUnavailable('The client has gone.', 'gateway');
}
