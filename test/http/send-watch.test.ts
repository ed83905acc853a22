import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { SendWatch } from '../../src/http/send-watch.js';

/** A socket as the watch reads it: bytes handed down, bytes buffered, the kernel-bound queue, destroyed or not. */
class FakeSocket extends EventEmitter {
  bytesWritten = 0;
  writableLength = 0;
  destroyed = false;
  _handle = { writeQueueSize: 0 };
  destroy(): void { this.destroyed = true; this.emit('close'); }
}

describe('SendWatch', () => {
  it('closes a connection whose bytes wait and none moved for the bound; leaves one that moves, one with nothing to write, one whose answer was written', () => {
    let now = 0;
    const closed: number[] = [];
    const watch = new SendWatch(1_000, () => now, () => closed.push(now));
    const stalled = new FakeSocket();
    const moving = new FakeSocket();
    const idle = new FakeSocket();
    const finished = new FakeSocket();
    for (const s of [stalled, moving, finished]) { s.bytesWritten = 8_000_000; s.writableLength = 8_000_000; s._handle.writeQueueSize = 5_000_000; }
    for (const s of [stalled, moving, idle, finished]) watch.watch(s as unknown as Socket);
    expect(watch.size).toBe(4);
    for (let t = 250; t <= 1_500; t += 250) {
      now = t;
      moving._handle.writeQueueSize -= 1_000; // (the kernel took a little of its queue)
      if (t === 500) { finished.writableLength = 0; finished._handle.writeQueueSize = 0; } // (its reader took the rest)
      watch.check();
    }
    expect(stalled.destroyed).toBe(true);
    expect(closed).toEqual([1_000]);
    expect([moving.destroyed, idle.destroyed, finished.destroyed]).toEqual([false, false, false]);
    // (a closed connection is no longer watched; the others are until they close)
    expect(watch.size).toBe(3);
    idle.destroy();
    expect(watch.size).toBe(2);
    // (watched once: one close listener a socket, however often it is handed in)
    const kept = new FakeSocket();
    for (let i = 0; i < 20; i++) watch.watch(kept as unknown as Socket);
    expect(kept.listenerCount('close')).toBe(1);
    // (the bound 0: nothing watched)
    const off = new SendWatch(0, () => now);
    off.watch(new FakeSocket() as unknown as Socket);
    expect(off.size).toBe(0);
    watch.stop();
  });
});
