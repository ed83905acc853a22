/**
 * How many tests a relational filter's walks may make in one round of an evaluation before the event loop gets a turn.
 * A walk (`filter[project][renders][…]`: every render of a holder project, against every term of the filter under it)
 * counts its tests here as it goes; once the round's allowance is spent it stops where it is, keeps how far it got, and
 * answers provisionally; the round is thrown away and run again after a turn of the event loop, and the walks go on
 * from where they stopped. A filter's answer is never changed by this, only spread over turns (attack pass 13,
 * residual: the first batch of a scan walked every project it reached — renders × terms — in one turn).
 *
 * Each level of a walk spends at most its filter's terms (2 000, `LIST_CAPS.filterTerms`) for an item before it descends,
 * and relations nest at most `MAX_RELATIONAL_DEPTH` (100) deep: a round's allowance, above their product, always
 * lets the deepest walk test one more item — every round moves on.
 */
export class TestTurn {
  private left = 0;
  private active = false;
  private stopped = false;

  /** `perRound`: the tests a round may make (see TESTS_A_ROUND). */
  constructor(readonly perRound = TESTS_A_ROUND) {}

  /**
   * Counts `n` tests; false once this round's allowance is spent (the walk stops, to go on in the next round). A spend
   * that takes the allowance past zero is made (the round moves on), and the round stops at the next.
   */
  spend(n: number): boolean {
    if (!this.active) return true;
    if (this.left <= 0 || this.stopped) {
      this.stopped = true;
      return false;
    }
    this.left -= n;
    return true;
  }

  /** This round's allowance is spent (or it stopped): every walk returns at once, reading nothing. Outside a round: false. */
  get short(): boolean {
    return this.active && this.stopped;
  }

  /**
   * Runs `evaluate` as one round with a fresh allowance: `whole` false when a walk stopped short (run it again after a
   * turn). Outside a round (a projection's `deep` filter, a proof) walks are not counted and never stop.
   */
  round<T>(evaluate: () => T): { readonly out: T; readonly whole: boolean } {
    if (this.active) return { out: evaluate(), whole: true }; // (a round within a round is part of it)
    this.active = true;
    this.left = this.perRound;
    this.stopped = false;
    try {
      const out = evaluate();
      return { out, whole: !this.stopped };
    } finally {
      this.active = false;
    }
  }
}

/**
 * Tests (an item against a term, or an item of a list read) one round may make: above the most a walk's levels can spend
 * before descending (100 × 2 000). About 40–140 ms of case-insensitive tests on replica views, measured on a loaded machine.
 */
export const TESTS_A_ROUND = 250_000;
