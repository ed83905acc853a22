/**
 * The one source of time. Everything that decides by time (leases, tolerance windows, limiter windows,
 * staleness bounds, shutdown deadlines) takes a Clock, so tests move time by hand instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that moves only when told (tests, the simulator's manual mode). */
export class ManualClock implements Clock {
  private t: number;
  constructor(start = Date.UTC(2026, 0, 1)) { this.t = start; }
  now(): number { return this.t; }
  advance(ms: number): void { this.t += ms; }
  set(ms: number): void { this.t = ms; }
}
