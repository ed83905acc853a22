/** Elements sorted or merged between two turns of the event loop. */
const SLICE = 8_192;

const turn = () => new Promise<void>((r) => setImmediate(r));

/**
 * A stable sort of a large array that gives the event loop a turn every few thousand elements (`slice`): runs sorted
 * one at a time, then merged pairwise, a slice at a time. For small arrays, a plain sort. `around` wraps each
 * slice's work (e.g. a cache of derived keys held while it runs).
 */
export async function sortYielding<T>(
  items: T[], cmp: (a: T, b: T) => number, slice = SLICE, around: <R>(f: () => R) => R = (f) => f(),
): Promise<T[]> {
  if (items.length <= slice) return around(() => items.sort(cmp));
  let runs: T[][] = [];
  for (let i = 0; i < items.length; i += slice) {
    runs.push(around(() => items.slice(i, i + slice).sort(cmp)));
    await turn();
  }
  while (runs.length > 1) {
    const next: T[][] = [];
    for (let i = 0; i < runs.length; i += 2) next.push(runs[i + 1] ? await merge(runs[i]!, runs[i + 1]!, cmp, slice, around) : runs[i]!);
    runs = next;
  }
  return runs[0]!;
}

async function merge<T>(a: T[], b: T[], cmp: (x: T, y: T) => number, slice: number, around: <R>(f: () => R) => R): Promise<T[]> {
  const out = new Array<T>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length || j < b.length) {
    const end = k + slice;
    around(() => {
      for (; k < end && (i < a.length || j < b.length); k++) out[k] = j >= b.length || (i < a.length && cmp(a[i]!, b[j]!) <= 0) ? a[i++]! : b[j++]!;
    });
    await turn();
  }
  return out;
}
