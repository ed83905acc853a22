import { describe, expect, it } from 'vitest';
import { DATA_WAITERS, DATA_WAITERS_PER_KEY, DataRoom } from '../../src/read/data-room.js';

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('the data room: render data being built, bounded per key and per instance', () => {
  it("a key's evaluations past its bound wait, in order, and go in as room is given back; other keys are not held by them", async () => {
    const room = new DataRoom(10, 25);
    const a1 = await room.take('a', 6);
    const order: string[] = [];
    const a2 = room.take('a', 6).then((r) => { order.push('a2'); return r; });
    const a3 = room.take('a', 1).then((r) => { order.push('a3'); return r; });
    // (a3 would fit beside a1, but does not pass a2, the earlier of its key)
    const b1 = await room.take('b', 8);
    await tick();
    expect(order).toEqual([]);
    expect({ a: room.held('a'), b: room.held('b'), all: room.held(), queued: room.queued }).toEqual({ a: 6, b: 8, all: 14, queued: 2 });
    a1();
    a1(); // (idempotent)
    const r2 = await a2;
    const r3 = await a3;
    expect(order).toEqual(['a2', 'a3']);
    expect(room.held('a')).toBe(7);
    // the instance's bound: 7 + 8 + 12 > 25 — c waits until enough is given back
    let c = false;
    const c1 = room.take('c', 12).then((r) => { c = true; return r; });
    await tick();
    expect(c).toBe(false);
    b1();
    (await c1)();
    expect(c).toBe(true);
    r2();
    r3();
    expect({ all: room.held(), queued: room.queued }).toEqual({ all: 0, queued: 0 });
  });

  it('an evaluation holding room never waits for more (no deadlock), and one larger than a bound goes in alone', async () => {
    const room = new DataRoom(10, 100);
    const a = await room.take('k', 9);
    const more = await room.take('k', 9, true); // it holds room: it grows past the bound rather than wait
    expect(room.held('k')).toBe(18);
    let big = false;
    const large = room.take('k', 30).then((r) => { big = true; return r; });
    await tick();
    expect(big).toBe(false);
    a();
    await tick();
    expect(big).toBe(false);
    more();
    (await large)();
    expect(big).toBe(true);
    expect(room.held()).toBe(0);
  });

  it('bounds the line: past DATA_WAITERS_PER_KEY waiters of a key, or DATA_WAITERS in all, a 503 at once; thousands leaving together leave it empty and working', async () => {
    // (attack pass 23, N1: one user's 6 000 pipelined reads waited, and their waits ending together — each rescanning
    // the line — held every request of the instance for up to 3 minutes)
    const room = new DataRoom(10, 1_000_000, { over: () => false }, 50);
    const held = await room.take('a', 10);
    const waits = Array.from({ length: DATA_WAITERS_PER_KEY }, () => room.take('a', 10).then((r) => r, (e: Error) => e));
    expect(room.queued).toBe(DATA_WAITERS_PER_KEY);
    const past = await room.take('a', 10).then(() => undefined, (e: { status?: number; headers?: Record<string, string> }) => e);
    expect(past?.status).toBe(503);
    expect(past?.headers?.['retry-after']).toBe('5');
    expect(room.queued).toBe(DATA_WAITERS_PER_KEY);
    // (but the answer of a write already made is never refused: it waits in the line, then goes in past the bound)
    const written = room.take('a', 10, false, undefined, true);
    expect(room.queued).toBe(DATA_WAITERS_PER_KEY + 1);
    // (other keys still wait, up to the instance's bound)
    const keys = Math.ceil((DATA_WAITERS - DATA_WAITERS_PER_KEY) / DATA_WAITERS_PER_KEY);
    const others: Promise<unknown>[] = [];
    const holds: (() => void)[] = [];
    for (let k = 0; k < keys; k++) {
      holds.push(await room.take(`k${k}`, 10));
      for (let i = 0; i < DATA_WAITERS_PER_KEY && room.queued < DATA_WAITERS; i++) others.push(room.take(`k${k}`, 10).then((r) => r, (e: Error) => e));
    }
    expect(room.queued).toBe(DATA_WAITERS);
    // (a read that fits goes in whatever the line; one that would wait is refused)
    const z = await room.take('z', 10);
    const full = await room.take('z', 10).then(() => undefined, (e: { status?: number }) => e);
    expect(full?.status).toBe(503);
    z();
    // every wait runs out together (50 ms): each a 503, the line empty, no room taken by them
    (await written)();
    const ended = await Promise.all([...waits, ...others]);
    expect(ended.every((x) => (x as { status?: number }).status === 503)).toBe(true);
    expect(room.queued).toBe(0);
    held();
    for (const h of holds) h();
    expect(room.held()).toBe(0);
    (await room.take('a', 10))();
  });

  it('a waiter whose client left is dropped from the line (a 503, no room taken), and the next of its key goes in', async () => {
    const room = new DataRoom(10, 100);
    const a = await room.take('k', 8);
    const gone = new AbortController();
    const left = room.take('k', 8, false, gone.signal);
    let next = false;
    const after = room.take('k', 2).then((r) => { next = true; return r; });
    await tick();
    expect({ queued: room.queued, next }).toEqual({ queued: 2, next: false });
    gone.abort();
    await expect(left).rejects.toMatchObject({ status: 503 });
    // the waiter behind it (2 bytes fit beside the 8 held) no longer waits behind one that will never read
    (await after)();
    expect(next).toBe(true);
    expect(room.queued).toBe(0);
    a();
    expect(room.held()).toBe(0);
    // one already gone waits for nothing
    await expect(room.take('k', 1, false, gone.signal)).rejects.toMatchObject({ status: 503 });
  });

  it('while the answers of a key not yet sent are past their bound, its evaluations wait; another key\'s do not', async () => {
    const over = new Set<string>(['k']);
    const room = new DataRoom(10, 100, { over: (key) => over.has(key) });
    let k = false;
    const waiting = room.take('k', 1).then((r) => { k = true; return r; });
    (await room.take('other', 1))();
    await tick();
    expect(k).toBe(false);
    over.delete('k');
    room.recheck();
    (await waiting)();
    expect(k).toBe(true);
  });

  it('a wait longer than its bound ends in a 503 with Retry-After, no room taken; the next of its key goes in (attack pass 10: a client\'s own answers waited for each other 300 s)', async () => {
    const over = new Set<string>(['k']);
    const room = new DataRoom(10, 100, { over: (key) => over.has(key) }, 40);
    const started = Date.now();
    const waited = room.take('k', 1);
    await expect(waited).rejects.toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', headers: { 'retry-after': '5' } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(35);
    expect({ queued: room.queued, held: room.held() }).toEqual({ queued: 0, held: 0 });
    // one let in before its bound keeps its room (the timer is gone with the wait)
    const later = room.take('k', 3);
    over.delete('k');
    room.recheck();
    const release = await later;
    await new Promise((r) => setTimeout(r, 60));
    expect(room.held('k')).toBe(3);
    release();
    // no bound: a wait lasts as long as the room is held
    over.add('k');
    const unbounded = new DataRoom(10, 100, { over: (key) => over.has(key) }, 0);
    let settled = false;
    const w = unbounded.take('k', 1).then((r) => { settled = true; return r; }, () => { settled = true; });
    await new Promise((r) => setTimeout(r, 60));
    expect(settled).toBe(false);
    over.delete('k');
    unbounded.recheck();
    await w;
    expect(unbounded.held('k')).toBe(1);
  });

  it('the answer of a write already made goes in past the bound once its wait ran out, never refused (attack pass 11, M)', async () => {
    const over = new Set<string>(['k']);
    const room = new DataRoom(10, 100, { over: (key) => over.has(key) }, 40);
    let inAt = 0;
    const started = Date.now();
    const release = await room.take('k', 7, false, undefined, true).then((r) => { inAt = Date.now(); return r; });
    expect(inAt - started).toBeGreaterThanOrEqual(35);
    expect({ held: room.held('k'), queued: room.queued }).toEqual({ held: 7, queued: 0 });
    release();
    expect(room.held()).toBe(0);
  });
});
