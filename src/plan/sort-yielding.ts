/** Elements sorted or merged between two turns of the event loop, at most. */
const SLICE = 8_192;
/** The time one turn of sorting or merging aims at: a slice sorted past it makes the next ones smaller. */
const TURN_MS = 8;
/** The fewest elements a turn sorts or merges (a costly comparison still moves the sort on). */
const LEAST = 64;
/** Arrays up to this many are sorted at once (a request's page: its sort keys are read once each, `compileSort`). */
const AT_ONCE = 2_048;
/** Merged elements between two looks at the clock. */
const CHECK_EVERY = 256;

const turn = () => new Promise<void>((r) => setImmediate(r));

/**
 * A stable sort of a large array that gives the event loop a turn every few thousand elements (`slice`) — fewer when
 * its comparisons are costly: runs sorted one at a time (each next run sized by how long the last took, aiming at
 * TURN_MS), then merged pairwise, a turn ending at `slice` elements or TURN_MS. A count alone held the loop a second a
 * slice when each comparison walked 38 tied keys over relations (attack pass 17, F3). Up to AT_ONCE, a plain sort.
 * `around` wraps each slice's work (e.g. a cache of derived keys held while it runs).
 */
export async function sortYielding<T>(
  items: T[], cmp: (a: T, b: T) => number, slice = SLICE, around: <R>(f: () => R) => R = (f) => f(),
): Promise<T[]> {
  if (items.length <= Math.min(AT_ONCE, slice)) return around(() => items.sort(cmp));
  let runs: T[][] = [];
  // the first run is small: what a comparison costs is not known yet
  let size = LEAST;
  for (let i = 0; i < items.length;) {
    const n = Math.min(size, items.length - i);
    const start = performance.now();
    runs.push(around(() => items.slice(i, i + n).sort(cmp)));
    i += n;
    const took = performance.now() - start;
    // (a sort of n makes about n·log2 n comparisons: the next run makes as many as fit in TURN_MS at this one's pace)
    const comparisons = (n * Math.log2(Math.max(2, n)) * TURN_MS) / Math.max(took, 0.05);
    size = Math.max(LEAST, Math.min(slice, Math.floor(comparisons / Math.log2(Math.max(2, comparisons / Math.log2(Math.max(2, n)))))));
    if (i < items.length) await turn();
  }
  // merged a turn at a time: the clock read across merges (a level of many short runs is merged in few turns, not one)
  const clock = { since: performance.now() };
  while (runs.length > 1) {
    const next: T[][] = [];
    for (let i = 0; i < runs.length; i += 2) next.push(runs[i + 1] ? await merge(runs[i]!, runs[i + 1]!, cmp, slice, around, clock) : runs[i]!);
    runs = next;
  }
  return runs[0]!;
}

/** A turn of the event loop once TURN_MS have passed since the last one. */
async function paced(clock: { since: number }): Promise<void> {
  if (performance.now() - clock.since < TURN_MS) return;
  await turn();
  clock.since = performance.now();
}

async function merge<T>(
  a: T[], b: T[], cmp: (x: T, y: T) => number, slice: number, around: <R>(f: () => R) => R, clock: { since: number },
): Promise<T[]> {
  const out = new Array<T>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length || j < b.length) {
    const end = k + slice;
    around(() => {
      while (k < end && (i < a.length || j < b.length)) {
        const stop = Math.min(end, k + CHECK_EVERY);
        for (; k < stop && (i < a.length || j < b.length); k++) out[k] = j >= b.length || (i < a.length && cmp(a[i]!, b[j]!) <= 0) ? a[i++]! : b[j++]!;
        if (performance.now() - clock.since >= TURN_MS) break;
      }
    });
    if (k >= end) {
      await turn(); // a whole slice merged: a turn whatever the clock
      clock.since = performance.now();
    } else await paced(clock);
  }
  return out;
}
