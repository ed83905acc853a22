import { describe, expect, it } from 'vitest';
import { bar, progressText, startProgress, type Sample } from '../../src/cli/progress.js';

/** The progress of long command-line work, ticked by hand with a manual clock. */
function harness(isTTY: boolean) {
  const writes: string[] = [];
  let now = 0;
  let tick: (() => void) | undefined;
  let every = 0;
  let stopped = false;
  let at: Sample = { done: 0, total: 10_000 };
  const p = startProgress({
    label: 'users import', unit: 'rows', sample: () => at, now: () => now,
    sink: { write: (s: string) => writes.push(s), isTTY, columns: 200 },
    schedule: (fn, ms) => { tick = fn; every = ms; return () => { stopped = true; }; },
  });
  return {
    writes, p, every: () => every, stopped: () => stopped, tick: () => tick!(),
    set(s: Sample, ms: number) { at = s; now += ms; },
  };
}

describe('progress', () => {
  it('not a terminal: a line every 5 s with the counts, the rate since the start and what is left', async () => {
    const h = harness(false);
    expect(h.every()).toBe(5000);
    h.set({ done: 1_500, total: 10_000, phase: 'writing' }, 5_000);
    await h.p.tick();
    h.set({ done: 3_100, total: 10_000, phase: 'writing' }, 5_000);
    await h.p.tick();
    expect(h.writes).toEqual([
      'users import: writing 1 500/10 000 rows, 300 rows/s, 8 500 left (about 28 s)\n',
      'users import: writing 3 100/10 000 rows, 310 rows/s, 6 900 left (about 22 s)\n',
    ]);
    h.p.stop();
    expect(h.stopped()).toBe(true);
    expect(h.writes).toHaveLength(2); // no line of its own at the end
  });

  it('a terminal: one bar redrawn in place every second (carriage return), ended by a new line', async () => {
    const h = harness(true);
    expect(h.every()).toBe(1000);
    h.set({ done: 2_500, total: 10_000 }, 1_000);
    await h.p.tick();
    h.set({ done: 5_000, total: 10_000 }, 1_000);
    await h.p.tick();
    expect(h.writes).toEqual([
      `\r[######..................] users import: 2 500/10 000 rows, 2 500 rows/s, 7 500 left (about 3 s)\x1b[K`,
      `\r[############............] users import: 5 000/10 000 rows, 2 500 rows/s, 5 000 left (about 2 s)\x1b[K`,
    ]);
    h.p.stop();
    expect(h.writes.at(-1)).toBe('\n');
  });

  it('a terminal that does not say its width (0 columns) gets a whole line, not 20 characters', async () => {
    const writes: string[] = [];
    let tick: (() => void) | undefined;
    let now = 0;
    const p = startProgress({
      label: 'users import', unit: 'rows', sample: () => ({ done: 1, total: 2, phase: 'hashing passwords' }), now: () => now,
      sink: { write: (s: string) => writes.push(s), isTTY: true, columns: 0 }, schedule: (fn) => { tick = fn; return () => undefined; },
    });
    now = 1000;
    tick!();
    await new Promise((r) => setImmediate(r));
    p.stop();
    expect(writes[0]).toBe('\r[############............] users import: hashing passwords 1/2 rows, 1.0 rows/s, 1 left (about 1 s)\x1b[K');
  });

  it('a new step measures its rate from where it began; an unknown total says what is left in words', async () => {
    const h = harness(false);
    h.set({ done: 2, total: 2, phase: 'checking keys', unit: 'keys' }, 60_000);
    await h.p.tick();
    h.set({ done: 10, total: 100, phase: 'hashing passwords' }, 5_000);
    await h.p.tick();
    h.set({ done: 60, total: 100, phase: 'hashing passwords' }, 5_000);
    await h.p.tick();
    expect(h.writes).toEqual([
      'users import: checking keys 2/2 keys, 0.0 keys/s, 0 left\n',
      'users import: hashing passwords 10/100 rows, 90 left\n', // its first sight: no rate yet
      'users import: hashing passwords 60/100 rows, 10 rows/s, 40 left (about 4 s)\n',
    ]);
    expect(progressText('index sync', 'renders', { done: 40_000, left: '3 teams left' }, 1234.4)).toBe('index sync: 40 000 renders, 1 234 renders/s, 3 teams left');
    expect(progressText('users import', 'rows', { done: 1, total: 2, phase: 'checking keys', unit: 'keys' }, 0.5))
      .toBe('users import: checking keys 1/2 keys, 0.5 keys/s, 1 left (about 2 s)');
    expect(bar(0, 0, 4)).toBe('[....]');
    expect(bar(7, 4, 4)).toBe('[####]');
  });
});
