import { afterEach, describe, expect, it } from 'vitest';
import { jsonArrayEnvelope } from '../../src/http/json-stream.js';
import { OWN_BYTES, OWN_ITEMS, pace, pacedWaiting, pacer, SLICE_MS } from '../../src/lib/pace.js';

/** Busy work of `ms` of wall time (as a long read's step: records built, JSON written). */
const spin = (ms: number) => { const end = performance.now() + ms; while (performance.now() < end); };
const STEP_MS = SLICE_MS / 4;

/** A long read of `steps` steps, pacing between them; its step numbers go to `log` as `name`. */
async function longRead(name: string, steps: number, log: string[]): Promise<void> {
  for (let i = 0; i < steps; i++) {
    const turn = pace();
    if (turn) await turn;
    spin(STEP_MS);
    log.push(name);
  }
}

/** Counts the turns of the event loop (an I/O-like callback run between long reads' slices) until stopped. */
function probe() {
  const seen: number[] = []; // how many steps had run at each turn
  let on = true;
  let steps = () => 0;
  const tick = () => { if (!on) return; seen.push(steps()); setImmediate(tick); };
  setImmediate(tick);
  return { seen, count: (f: () => number) => { steps = f; }, stop: () => { on = false; } };
}

afterEach(async () => {
  // nothing left waiting for a turn between tests
  for (let i = 0; i < 100 && pacedWaiting() > 0; i++) await new Promise((r) => setImmediate(r));
});

describe('pace', () => {
  it('lets a long read go on while its slice lasts (nothing to await)', async () => {
    // (a read descheduled for a whole slice right after its turn began must wait again: tried a few turns)
    let went = false;
    for (let i = 0; i < 20 && !went; i++) {
      const turn = pace();
      if (turn) await turn; // (the slice began at this read's turn)
      went = pace() === undefined;
    }
    expect(went).toBe(true);
  });

  it('with others waiting, lets a resumed read take a step and go back in line: the loop turns between steps', async () => {
    let turns = 0;
    let on = true;
    const tick = () => { if (on) { turns++; setImmediate(tick); } };
    setImmediate(tick);
    const read = async () => {
      for (let i = 0; i < 400; i++) {
        const turn = pace();
        if (turn) await turn;
        spin(STEP_MS / 5);
      }
    };
    await Promise.all([read(), read()]);
    on = false;
    // 800 steps of a twentieth of a slice: a turn between steps once both run (the first slice's steps aside), where a
    // slice a turn would be ~40 turns (a short read needs several turns: under contention it waits a step, not a slice)
    expect(turns).toBeGreaterThanOrEqual(800 - 2 * (SLICE_MS / (STEP_MS / 5)) - 10);
  });

  it('gives the event loop a turn at least every slice, however many long reads run, and takes turns between them', async () => {
    const log: string[] = [];
    const p = probe();
    p.count(() => log.length);
    await Promise.all([longRead('a', 60, log), longRead('b', 60, log), longRead('c', 60, log)]);
    p.stop();
    const between = p.seen.slice(1).map((n, i) => n - (p.seen[i] as number));
    // one slice a turn for all of them together: at most slice/step steps (+1, the step that crossed the slice's end)
    expect(Math.max(...between)).toBeLessThanOrEqual(SLICE_MS / STEP_MS + 1);
    expect(p.seen.length).toBeGreaterThanOrEqual(180 / (SLICE_MS / STEP_MS + 1));
    // round robin: no read runs to its end before the others have begun, each resumes in turn
    const firstEnd = Math.min(...['a', 'b', 'c'].map((x) => log.lastIndexOf(x)));
    for (const x of ['a', 'b', 'c']) expect(log.indexOf(x)).toBeLessThan(firstEnd);
  });

  it('a streamed answer over items already in memory lets other work in while it is written', async () => {
    const items = (async function* () { for (let i = 0; i < 4000; i++) { spin(STEP_MS / 10); yield { i, title: `render ${i}` }; } })();
    const log = { error: () => undefined } as never;
    let turns = 0;
    let on = true;
    const tick = () => { if (on) { turns++; setImmediate(tick); } };
    setImmediate(tick);
    let bytes = 0;
    for await (const b of jsonArrayEnvelope(items, log, { filter_count: 4000 })) bytes += b.length;
    on = false;
    expect(bytes).toBeGreaterThan(4000 * 20);
    // 4 000 items of a fortieth of a slice each: the loop turned at least every slice (≥ ~100 times, not once at the end)
    expect(turns).toBeGreaterThanOrEqual(50);
  });
});

describe('pacer', () => {
  it('a short sequence goes straight on while another read waits in line; past its items or its bytes it is paced', async () => {
    // another long read holds the line (its slice spent): a plain pace() would wait
    const other = (async () => { for (let i = 0; i < 50; i++) { const turn = pace(); if (turn) await turn; spin(SLICE_MS); } })();
    spin(SLICE_MS);
    expect(pace()).toBeInstanceOf(Promise);
    const page = pacer();
    for (let i = 0; i < OWN_ITEMS; i++) expect(page(300)).toBeUndefined(); // (a default page of small items: never in line)
    const past = page(300);
    expect(past).toBeInstanceOf(Promise);
    const large = pacer();
    expect(large()).toBeUndefined();
    expect(large(OWN_BYTES + 1)).toBeInstanceOf(Promise); // (one large item: paced at the next step)
    await Promise.all([past, large(), other]);
  });

  it('16 readers of 20-item pages each answer in one go: no turn of the loop between their items', async () => {
    let turns = 0;
    let on = true;
    const tick = () => { if (on) { turns++; setImmediate(tick); } };
    setImmediate(tick);
    spin(SLICE_MS); // (the slice spent: a plain pace() would put each in line)
    const page = async () => {
      const step = pacer();
      for (let i = 0; i < 20; i++) {
        const turn = step(400);
        if (turn) await turn;
        spin(STEP_MS / 20);
      }
    };
    await Promise.all(Array.from({ length: 16 }, page));
    on = false;
    expect(turns).toBe(0);
  });
});

