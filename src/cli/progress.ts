/**
 * Progress of long command-line work on stderr: a line every few seconds with the counts, the rate and what is left —
 * a live bar redrawn in place (carriage return) when stderr is a terminal. The work says where it is through a sample
 * read at each tick; the clock and the ticking are injectable (tests tick by hand, never by sleeping).
 */

/** Where the work is: `done` of `total` (total unknown: undefined) in `phase`, and what else to say (`left`, `note`). */
export interface Sample {
  readonly done: number;
  readonly total?: number | undefined;
  /** A step of the work; the rate is measured from the step's start. */
  readonly phase?: string | undefined;
  /** What `done` counts in this step, when not the progress's own unit (`keys`). */
  readonly unit?: string | undefined;
  /** What is left when `total` does not say it (`3 teams left`). */
  readonly left?: string | undefined;
  readonly note?: string | undefined;
}

export interface ProgressSink { write(s: string): unknown; readonly isTTY?: boolean | undefined; readonly columns?: number | undefined }

export interface ProgressOptions {
  readonly label: string;
  /** What `done` counts (`rows`, `renders`). */
  readonly unit: string;
  readonly sample: () => Sample | Promise<Sample>;
  readonly sink?: ProgressSink;
  readonly now?: () => number;
  /** Calls `tick` every `ms`; returns how to stop. Default: an unref'd setInterval. */
  readonly schedule?: (tick: () => void, ms: number) => () => void;
  /** Between two lines when stderr is not a terminal (default 5 s); a terminal's bar is redrawn every second. */
  readonly lineEveryMs?: number;
}

const group = (n: number) => Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
const duration = (s: number) => (s < 90 ? `${Math.max(1, Math.round(s))} s` : s < 5400 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`);

/** The words of one progress report (no bar): `users import: writing 1 500/10 000 rows, 320 rows/s, 8 500 left (about 27 s)`. */
export function progressText(label: string, defaultUnit: string, s: Sample, ratePerS: number | undefined): string {
  const unit = s.unit ?? defaultUnit;
  const counts = s.total === undefined ? `${group(s.done)} ${unit}` : `${group(s.done)}/${group(s.total)} ${unit}`;
  const parts = [`${label}: ${s.phase ? `${s.phase} ` : ''}${counts}`];
  if (ratePerS !== undefined) parts.push(`${ratePerS >= 10 ? group(ratePerS) : ratePerS.toFixed(1)} ${unit}/s`);
  if (s.total !== undefined) {
    const left = Math.max(0, s.total - s.done);
    parts.push(`${group(left)} left${ratePerS && left > 0 ? ` (about ${duration(left / ratePerS)})` : ''}`);
  }
  if (s.left) parts.push(s.left);
  if (s.note) parts.push(s.note);
  return parts.join(', ');
}

/** A bar of `width` cells for done/total. */
export const bar = (done: number, total: number, width = 24): string => {
  const full = total > 0 ? Math.min(width, Math.floor((done / total) * width)) : 0;
  return `[${'#'.repeat(full)}${'.'.repeat(width - full)}]`;
};

/** Starts reporting; `stop()` ends the bar's line (a terminal) and reports no more. */
export function startProgress(o: ProgressOptions): { tick(): Promise<void>; stop(): void } {
  const sink = o.sink ?? process.stderr;
  const now = o.now ?? Date.now;
  const tty = sink.isTTY === true;
  const startedAt = now();
  let from: { phase: string | undefined; at: number; done: number } | undefined;
  let drawn = false;
  let busy = false;
  let stopped = false;
  const tick = async () => {
    if (busy || stopped) return;
    busy = true;
    try {
      const s = await o.sample();
      if (stopped) return;
      const at = now();
      // the rate of a step from its start: the first from the start of the work, a later one from the tick that saw it begin
      if (!from) from = { phase: s.phase, at: startedAt, done: 0 };
      else if (from.phase !== s.phase || s.done < from.done) from = { phase: s.phase, at, done: s.done };
      const seconds = (at - from.at) / 1000;
      const rate = seconds > 0 ? (s.done - from.done) / seconds : undefined;
      const text = progressText(o.label, o.unit, s, rate);
      if (tty) {
        const line = `${s.total !== undefined ? `${bar(s.done, s.total)} ` : ''}${text}`;
        // (a terminal that does not say its width reports 0 columns)
        const width = Math.max(20, (sink.columns || 120) - 1);
        sink.write(`\r${line.length > width ? `${line.slice(0, width - 1)}…` : line}\x1b[K`);
        drawn = true;
      } else sink.write(`${text}\n`);
    } catch {
      // a sample that failed says nothing this time (the work reports its own failure)
    } finally {
      busy = false;
    }
  };
  const schedule = o.schedule ?? ((fn: () => void, ms: number) => {
    const t = setInterval(fn, ms);
    t.unref();
    return () => clearInterval(t);
  });
  const cancel = schedule(() => void tick(), tty ? 1000 : (o.lineEveryMs ?? 5000));
  return {
    tick,
    stop() {
      if (stopped) return;
      stopped = true;
      cancel();
      if (drawn) sink.write('\n');
    },
  };
}
