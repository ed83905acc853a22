/**
 * The simulator's clock. `manual` starts at a fixed instant and moves only when told (tests);
 * `real` follows the wall clock plus any offset added through POST /_sim/clock (demo mode).
 */
export class SimClock {
  private offsetMs = 0;
  private readonly base: number;
  constructor(readonly mode: "real" | "manual", start = Math.floor(Date.now() / 1000) * 1000) {
    this.base = start;
  }
  now(): number {
    return (this.mode === 'manual' ? this.base : Date.now()) + this.offsetMs;
  }
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('advance needs a non-negative number of milliseconds');
    this.offsetMs += ms;
  }
}
