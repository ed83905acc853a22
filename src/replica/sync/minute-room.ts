import type { Cadence } from './freshness.js';

/**
 * What a team's sync budget has left of a calendar minute, as the store counted it at the team's last reservation here
 * (`SyncBudget.room`): `left` calls until `minuteEnd`.
 */
export interface MinuteRoom {
  readonly left: number;
  readonly minuteEnd: number;
}

/** What the rest of a minute asks of a team's budget at its cadence. */
export interface MinuteNeed {
  /** How far apart its syncs would run (the tick's `dueAfter`). */
  readonly spacingMs: number;
  /** The calls of every sync whatever it checks: its project list, re-polls, active heads (every head: whole syncs). */
  readonly fixed: number;
  /** Calls due before the minute's end besides: the periodic full sync's, heads owed by their deadlines. */
  readonly extra: number;
  /** At most how many quiet checks fall due before the minute's end (0: whole syncs). */
  readonly quietMost: number;
  /** How many do (their due times, a project due twice counted twice): asked only when `quietMost` does not fit. */
  readonly quietDue: () => number;
}

/**
 * How much further apart than `spacingMs` a team's syncs run for the rest of a minute whose budget was partly spent
 * before its cadence held — a backfill, the whole sync that turned the team to a rotation, another instance's syncs
 * (issue 43, part 2). A cadence fits a whole minute's budget; in a minute already spent on something else its syncs
 * would be refused before the minute ends, and a reader would find the team past the bound it was told. Spread instead:
 * the syncs still due before `minuteEnd` (one every `spacingMs` from the last, `syncedAt`) of `fixed` calls each, the
 * quiet checks and the `extra` calls due meanwhile must fit `left`; when they do not, as many syncs as fit are spread
 * evenly up to the minute's end. 0: they fit.
 *
 * The scheduler adds it to the interval and to both bounds (`spread`): what the team states is what it does.
 */
export function roomSpacing(room: MinuteRoom, syncedAt: number, need: MinuteNeed): number {
  const span = room.minuteEnd - syncedAt;
  if (span <= need.spacingMs || need.fixed <= 0) return 0;
  // syncs at syncedAt + k × spacing before the minute's end
  const syncs = Math.ceil(span / need.spacingMs) - 1;
  const left = room.left - need.extra;
  if (syncs * need.fixed + need.quietMost <= left) return 0;
  const due = need.quietMost > 0 ? need.quietDue() : 0;
  if (syncs * need.fixed + due <= left) return 0;
  const fit = Math.max(0, Math.floor((left - due) / need.fixed));
  return Math.max(0, Math.ceil(span / (fit + 1)) - need.spacingMs);
}

/** The cadence with its syncs `extraMs` further apart: its interval and both bounds longer by as much. */
export function spread(cadence: Cadence, extraMs: number): Cadence {
  if (extraMs <= 0) return cadence;
  return {
    intervalMs: cadence.intervalMs + extraMs,
    cycleMs: cadence.cycleMs,
    activeBoundMs: cadence.activeBoundMs + extraMs,
    boundMs: cadence.boundMs + extraMs,
  };
}
