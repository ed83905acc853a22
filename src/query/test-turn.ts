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
  private started = 0;
  /** When this round's walks first tested an item whole (undefined: not yet). */
  private firstMove: number | undefined;
  /** Rounds that ended whole: what a round kept for the next one is not needed past one (`expandInRounds`). */
  wholeRounds = 0;

  /**
   * `perRound`: the tests a round may make (see TESTS_A_ROUND). `time`: a round also ends `ms` after it began (its tests
   * cost more on long strings or a busy machine), but only once it has moved on — some item tested whole — for at least as
   * long as it took to get there (re-evaluating what earlier rounds answered), so that every round moves on and at least
   * half of each is new work. Without it, rounds are counted, never timed (the tests' own turns).
   */
  constructor(readonly perRound = TESTS_A_ROUND, private readonly time?: { readonly ms: number; readonly now: () => number }) {}

  /**
   * Counts `n` tests; false once this round's allowance (or time) is spent (the walk stops, to go on in the next round). A
   * spend that takes the allowance past zero is made (the round moves on), and the round stops at the next.
   */
  spend(n: number): boolean {
    if (!this.active) return true;
    if (this.left <= 0 || this.stopped || this.late()) {
      this.stopped = true;
      return false;
    }
    this.left -= n;
    return true;
  }

  /** A walk tested an item whole this round (what `time` waits for before it may end a round). */
  moved(): void {
    if (this.active && this.time && this.firstMove === undefined) this.firstMove = this.time.now();
  }

  private late(): boolean {
    if (!this.time || this.firstMove === undefined) return false;
    const t = this.time.now();
    return t - this.started >= this.time.ms && t - this.firstMove >= this.firstMove - this.started;
  }

  /** A round is being run (outside one, nothing is counted and nothing stops). */
  get inRound(): boolean {
    return this.active;
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
    this.firstMove = undefined;
    if (this.time) this.started = this.time.now();
    try {
      const out = evaluate();
      if (!this.stopped) this.wholeRounds++;
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

/**
 * The time a round of a request's tests may take (once it has moved on): tests of long strings, or on a loaded machine,
 * cost many times the measure TESTS_A_ROUND was set by, and another user's read — several turns of the event loop —
 * waits up to a round at each (the second re-check of attack pass 15: four 400-term two-step relational filters held
 * other users' one-item reads up to 7–8.5 s; rounds of 5 ms: at most 0.1 s, the filters 10–25 % slower).
 */
export const ROUND_MS = 5;
