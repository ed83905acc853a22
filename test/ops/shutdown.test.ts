import { describe, expect, it } from 'vitest';
import { shutdown } from '../../src/ops/shutdown.js';

/** A timer the test fires by hand. */
function manualTimer() {
  const pending: { fn: () => void; ms: number; cancelled: boolean }[] = [];
  return {
    pending,
    setTimer: (fn: () => void, ms: number) => { const t = { fn, ms, cancelled: false }; pending.push(t); return { cancel: () => { t.cancelled = true; } }; },
    fire: () => { for (const t of pending) if (!t.cancelled) t.fn(); },
  };
}

describe('graceful shutdown', () => {
  it('drains first, then exits 0 when everything closes before the deadline', async () => {
    const order: string[] = [];
    const timer = manualTimer();
    await shutdown({
      drain: () => order.push('drain'), close: async () => { order.push('close'); }, graceMs: 10_000,
      exit: (c) => order.push(`exit ${c}`), log: () => {}, setTimer: timer.setTimer,
    }, 'SIGTERM');
    expect(order).toEqual(['drain', 'close', 'exit 0']);
    expect(timer.pending[0]).toMatchObject({ ms: 10_000, cancelled: true });
  });
  it('exits 1 at the deadline when in-flight work does not finish, and only once', async () => {
    const exits: number[] = [];
    const timer = manualTimer();
    let finish!: () => void;
    const done = shutdown({
      drain: () => {}, close: () => new Promise<void>((r) => { finish = r; }), graceMs: 2_500,
      exit: (c) => exits.push(c), log: () => {}, setTimer: timer.setTimer,
    }, 'SIGINT');
    await Promise.resolve();
    expect(exits).toEqual([]);
    timer.fire();
    expect(exits).toEqual([1]);
    finish();
    await done;
    expect(exits).toEqual([1]);
  });
});
