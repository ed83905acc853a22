/**
 * Long reads share the event loop in slices. An export, a `limit=-1` answer, a whole-scope scan or a sync's pages call
 * `pace()` between small steps: while the current slice lasts (SLICE_MS of the loop since a long read last resumed) and
 * no other long read waits, it goes straight on (`undefined`: nothing to await); otherwise it waits its turn — one
 * waiting long read resumes per turn of the event loop, after the I/O callbacks waiting (new requests, socket writes),
 * in the order they began to wait. Alone, a long read runs in 1 ms slices; with others waiting, a resumed one takes a
 * step and goes back in line, so the loop turns between steps and a short read — which needs several turns of its own
 * (its request, its token's check, its answer) — is answered within about a step a turn. Measured (1M world, 8
 * exports, docs/benchmarks.md): a light user's reads p50 0.3–0.4 ms, the exports 21–25 s; letting the resumed read
 * keep the whole slice instead put those reads at p50 8–10 ms (each of their turns then waits up to a slice).
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
  if (waiting.length === 0 && performance.now() - sliceStart < SLICE_MS) return undefined;
  return new Promise<void>((resolve) => {
    waiting.push(resolve);
    schedule();
  });
}

/** Long reads waiting for their turn (tests). */
export function pacedWaiting(): number {
  return waiting.length;
}

/** What a sequence of steps (`pacer`) does before it is paced: items, and bytes of them. */
export const OWN_ITEMS = 100;
export const OWN_BYTES = 256 * 1024;

/**
 * `pace` for one sequence of steps (a page's items measured, an answer's items written), each step told the bytes of the
 * item before it: its first OWN_ITEMS items within OWN_BYTES (a default page of small items: well within a slice) go
 * straight on whatever else waits — a short read is never put in line — and past them each step is paced. Put in line
 * from its first item, each of 16 readers of 20-item pages waited a turn of the loop an item: a sixth of the loop was
 * spent turning, idle (issue 40's measure of the distinct questions). Counted, not timed: a read's own time cannot be told
 * from the others' it waits behind.
 */
export function pacer(): (bytes?: number) => Promise<void> | undefined {
  let items = 0;
  let bytes = 0;
  return (last = 0) => {
    bytes += last;
    if (++items <= OWN_ITEMS && bytes <= OWN_BYTES) return undefined;
    return pace();
  };
}
