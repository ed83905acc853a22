import { describe, expect, it } from 'vitest';
import { LoadQueue } from '../../src/replica/holding/load-queue.js';

/** A promise released by hand. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => { open = r; });
  return { wait, open };
}

describe('LoadQueue', () => {
  it('runs at most `atOnce` loads, starts the others in the order asked, and hands a place on when one ends or fails', async () => {
    const q = new LoadQueue(2);
    const gates = [gate(), gate(), gate(), gate()];
    const started: number[] = [];
    const runs = gates.map((g, i) => q.run(async () => {
      started.push(i);
      await g.wait;
      if (i === 0) throw new Error('load 0 failed');
      return i;
    }));
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    expect(q.load).toEqual({ running: 2, waiting: 2 });
    gates[0]!.open();
    await expect(runs[0]).rejects.toThrow('load 0 failed');
    expect(started).toEqual([0, 1, 2]);
    gates[2]!.open();
    expect(await runs[2]).toBe(2);
    expect(started).toEqual([0, 1, 2, 3]);
    expect(q.load).toEqual({ running: 2, waiting: 0 });
    gates[1]!.open();
    gates[3]!.open();
    expect(await Promise.all([runs[1], runs[3]])).toEqual([1, 3]);
    expect(q.load).toEqual({ running: 0, waiting: 0 });
  });
});
