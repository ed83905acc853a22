/**
 * Long reads share the event loop in slices. An export, a `limit=-1` answer, a whole-scope scan or a sync's pages call
 * `pace()` between small steps: while the current slice lasts (SLICE_MS of the loop since a long read last resumed) any
 * of them goes straight on (`undefined`: nothing to await); past it, it waits its turn — one waiting long read resumes
 * per turn of the event loop, after the I/O callbacks waiting (new requests, socket writes), in the order they began to
 * wait, and has the next slice. However many long reads run, together they take one slice a turn, and a short read
 * waits for about one slice per step of its own.
 *
 * The turns are `setImmediate` callbacks: a test that fakes `setImmediate` must not leave long reads waiting when it
 * restores the real timers.
 */
export const SLICE_MS = 1;

const waiting: (() => void)[] = [];
let scheduled = false;
let sliceStart = 0;

function wake(): void {
  scheduled = false;
  sliceStart = performance.now();
  const next = waiting.shift();
  if (waiting.length > 0) schedule();
  next?.();
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(wake);
}

/** Undefined while the slice lasts (go on), else a promise that resolves at this long read's next turn. */
export function pace(): Promise<void> | undefined {
  if (performance.now() - sliceStart < SLICE_MS) return undefined;
  return new Promise<void>((resolve) => {
    waiting.push(resolve);
    schedule();
  });
}

/** Long reads waiting for their turn (tests). */
export function pacedWaiting(): number {
  return waiting.length;
}
