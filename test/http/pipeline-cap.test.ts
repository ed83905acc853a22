import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { PipelineCap } from '../../src/http/pipeline-cap.js';
import { trustedPeer } from '../../src/http/connection-cap.js';

/** A connection as the cap sees it: its peer's address, paused and resumed, destroyed (then closed). */
class FakeSocket extends EventEmitter {
  destroyed = false;
  constructor(readonly remoteAddress: string) { super(); }
  pause() { return this; }
  resume() { return this; }
  destroy() { if (!this.destroyed) { this.destroyed = true; this.emit('close'); } return this; }
}

/** `n` pipelined requests on each of `sockets`, the first of each started and not ended: how many of all were refused. */
function pile(cap: PipelineCap, sockets: FakeSocket[], n: number): number {
  let refused = 0;
  for (const s of sockets) for (let i = 0; i < n; i++) cap.enter(s as unknown as Socket, () => {}, () => { refused++; });
  return refused;
}

describe('PipelineCap per address', () => {
  it('counts the addresses of one IPv6 /64 together (one host rotating through its addresses)', () => {
    const cap = new PipelineCap({ addressWaiting: 10, connectionWaiting: 100 });
    const sockets = [1, 2, 3, 4].map((i) => new FakeSocket(`2001:db8:0:1::${i}`));
    // 4 connections × (1 worked on + 4 waiting) = 16 waiting wanted, 10 allowed: the connection past it closed
    const refused = pile(cap, sockets, 5);
    expect(cap.waitingNow).toBeLessThanOrEqual(10);
    expect(refused).toBeGreaterThan(0);
    expect(sockets.some((s) => s.destroyed)).toBe(true);
    // another /64 still has its own
    const other = new FakeSocket('2001:db8:0:2::1');
    expect(pile(cap, [other], 5)).toBe(0);
  });

  it('does not count a trusted proxy per address (its connections carry many clients); the other bounds hold', () => {
    const cap = new PipelineCap({ addressWaiting: 10, connectionWaiting: 100, exempt: trustedPeer(['10.0.0.0/8']) });
    const proxied = [1, 2, 3, 4].map(() => new FakeSocket('::ffff:10.1.2.3'));
    expect(pile(cap, proxied, 5)).toBe(0);
    expect(cap.waitingNow).toBe(16);
    expect(proxied.every((s) => !s.destroyed)).toBe(true);
    // a client not in the list is counted
    const direct = [1, 2, 3, 4].map(() => new FakeSocket('198.51.100.4'));
    expect(pile(cap, direct, 5)).toBeGreaterThan(0);
    // the per-connection bound holds for the proxy too: the 102nd closes the connection, and its 100 waiting are let go
    const one = new FakeSocket('10.1.2.3');
    expect(pile(cap, [one], 102)).toBe(101);
    expect(one.destroyed).toBe(true);
  });

  it('trustedPeer: every peer for true or a hop count, none for false, the list otherwise', () => {
    expect(trustedPeer(true)('198.51.100.4')).toBe(true);
    expect(trustedPeer(1)('198.51.100.4')).toBe(true);
    expect(trustedPeer(false)('127.0.0.1')).toBe(false);
    const list = trustedPeer(['loopback', '2001:db8::/32']);
    expect(list('127.0.0.1')).toBe(true);
    expect(list('::ffff:127.0.0.1')).toBe(true);
    expect(list('2001:db8:9::1')).toBe(true);
    expect(list('198.51.100.4')).toBe(false);
    expect(list('not an address')).toBe(false);
  });
});

describe('PipelineCap turns', () => {
  it('starts a connection\'s next request in a later turn of the event loop, its place kept meanwhile (attack pass 27, N-1)', async () => {
    // (each next one started as the last ended ran 6 144 pipelined requests as one block of 6.5 s: others' reads waited)
    const cap = new PipelineCap();
    const s = new FakeSocket('198.51.100.9');
    const started: string[] = [];
    const leaves: Record<string, () => void> = {};
    const enter = (name: string) => cap.enter(s as unknown as Socket, (leave) => { started.push(name); leaves[name] = leave; }, () => started.push(`${name} refused`));
    enter('r1');
    enter('r2');
    expect(started).toEqual(['r1']);
    leaves.r1!();
    // not in the same turn …
    expect(started).toEqual(['r1']);
    // … and a request read in between waits behind it
    enter('r3');
    expect(started).toEqual(['r1']);
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['r1', 'r2']);
    leaves.r2!();
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['r1', 'r2', 'r3']);
    // a connection closed before the turn comes lets its next one go unstarted
    enter('r4');
    leaves.r3!();
    s.destroy();
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['r1', 'r2', 'r3', 'r4 refused']);
  });

  it('starts as many a turn as fit in TURN_MS: many connections\' next requests are spread over turns', async () => {
    const cap = new PipelineCap();
    const sockets = Array.from({ length: 10 }, (_, i) => new FakeSocket(`198.51.100.${i + 20}`));
    const leaves: (() => void)[] = [];
    let second = 0;
    for (const s of sockets) {
      cap.enter(s as unknown as Socket, (leave) => leaves.push(leave), () => {});
      // (each one's start costs 3 ms of CPU, as a large query's parse may)
      cap.enter(s as unknown as Socket, () => { second++; const end = performance.now() + 3; while (performance.now() < end); }, () => {});
    }
    for (const leave of leaves) leave();
    await new Promise((r) => setImmediate(r));
    expect(second).toBeGreaterThan(0);
    expect(second).toBeLessThan(10);
    for (let i = 0; i < 20 && second < 10; i++) await new Promise((r) => setImmediate(r));
    expect(second).toBe(10);
  });
});
