import type { Cadence } from './freshness.js';

/**
 * What a team's sync budget has left of a calendar minute, as the store counted it at the team's last reservation here
 * (every instance's calls, `SyncBudget.room`): `left` calls until `minuteEnd`.
 */
export interface MinuteRoom {
  readonly left: number;
  readonly minuteEnd: number;
}

/**
 * How much further apart than its cadence's interval a team's syncs run for the rest of a minute whose budget was partly
 * spent before its cadence held — a backfill, the whole sync that turned the team to a rotation, another instance's
 * syncs (issue 43, part 2). A cadence fits a whole minute's budget; in a minute already spent on something else its
 * syncs would be refused before the minute ends, and a reader would find the team past the bound it was told. Spread
 * instead: the syncs still due before `minuteEnd` (one every interval from the last, `syncedAt`) of `fixed` calls each,
 * plus the quiet projects' checks due in the rest of the minute (`quietDue`: asked only when `quiet`, their number, does
 * not fit), must fit `left`; when they do not, as many as fit are spread evenly up to the minute's end. 0: they fit.
 *
 * The scheduler adds it to the interval and to both bounds (`spread`): what the team states is what it does.
 */
export function roomSpacing(cadence: Cadence, room: MinuteRoom, syncedAt: number, fixed: number, quiet: number, quietDue: () => number): number {
  const span = room.minuteEnd - syncedAt;
  if (span <= cadence.intervalMs || fixed <= 0) return 0;
  // syncs at syncedAt + k × interval before the minute's end
  const syncs = Math.ceil(span / cadence.intervalMs) - 1;
  const rotating = cadence.cycleMs > 0;
  if (syncs * fixed + (rotating ? quiet : 0) <= room.left) return 0;
  const due = rotating ? quietDue() : 0;
  if (syncs * fixed + due <= room.left) return 0;
  const fit = Math.max(0, Math.floor((room.left - due) / fixed));
  return Math.max(0, Math.ceil(span / (fit + 1)) - cadence.intervalMs);
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
