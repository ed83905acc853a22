import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HeavyReadGate } from '../../src/read/heavy.js';
import { partitionOf } from '../../src/v1/client.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/** No key starves another: per key, at most HEAVY_READS_PER_KEY heavy reads at once; the rest wait in order. */
describe('the heavy-read gate', () => {
  it('lets `perKey` in at once per key, queues the rest in order, and refuses past the queue with a 503 and Retry-After', async () => {
    const gate = new HeavyReadGate(2, 2);
    const order: string[] = [];
    const a1 = await gate.enter('a');
    const a2 = await gate.enter('a');
    const a3 = gate.enter('a').then((r) => { order.push('a3'); return r; });
    const a4 = gate.enter('a').then((r) => { order.push('a4'); return r; });
    await expect(gate.enter('a')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', headers: { 'retry-after': '5' } });
    const b1 = await gate.enter('b'); // another key never waits for a's
    expect(gate.load('a')).toEqual({ running: 2, waiting: 2 });
    a1();
    a1(); // giving back twice counts once
    const r3 = await a3;
    expect(order).toEqual(['a3']);
    expect(gate.load('a')).toEqual({ running: 2, waiting: 1 });
    a2();
    const r4 = await a4;
    expect(order).toEqual(['a3', 'a4']);
    r3(); r4(); b1();
    expect(gate.load('a')).toEqual({ running: 0, waiting: 0 });
    expect(gate.peak).toBe(2);
  });

  it('hands a place straight to the next in line (no newcomer slips in), and drops a waiter whose client has gone', async () => {
    const gate = new HeavyReadGate(1, 5);
    const first = await gate.enter('k');
    const gone = new AbortController();
    const leaving = gate.enter('k', gone.signal);
    const second = gate.enter('k');
    expect(gate.load('k')).toEqual({ running: 1, waiting: 2 });
    gone.abort();
    await expect(leaving).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(gate.load('k')).toEqual({ running: 1, waiting: 1 });
    first();
    const newcomer = gate.enter('k'); // in the same turn as the hand-off: it must wait its turn
    const r2 = await second;
    expect(gate.load('k')).toEqual({ running: 1, waiting: 1 });
    r2();
    (await newcomer)();
    expect(gate.load('k')).toEqual({ running: 0, waiting: 0 });
    expect(gate.peak).toBe(1);
  });
});

describe('heavy reads through the gateway', () => {
  let gw: TestGateway;
  let heavyToken: string;
  let lightToken: string;
  beforeAll(async () => {
    gw = await startGateway({ HEAVY_READS_PER_KEY: '1', INDEX_ENABLED: 'false', ANSWER_CACHE_MB: '0' });
    await gw.addUser(0, 'exports@example.com');
    await gw.addUser(1, 'reader@example.com');
    heavyToken = await gw.login('exports@example.com');
    lightToken = await gw.login('reader@example.com');
    await fetch(`${gw.s.url}/_sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ latency_ms: 15 }) });
  });
  afterAll(async () => gw.close());

  it('one key\'s parallel exports run one at a time (the rest wait, all answered); another key\'s reads never wait', async () => {
    const heavyKey = partitionOf(gw.s.keys[0]!.api_key);
    const lightKey = partitionOf(gw.s.keys[1]!.api_key);
    const expected = (await gw.get('/renders?aggregate[count]=*', heavyToken)).body.data[0].count;
    let maxWaiting = 0;
    let lightLoad = 0;
    let watching = true;
    const watch = (async () => {
      while (watching) {
        maxWaiting = Math.max(maxWaiting, gw.deps.heavyReads.load(heavyKey).waiting);
        lightLoad = Math.max(lightLoad, gw.deps.heavyReads.load(lightKey).running + gw.deps.heavyReads.load(lightKey).waiting);
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    const heavy = ['limit=-1&fields=id', 'limit=-1&fields=id&export=csv', 'limit=-1&fields=id,title', 'fields=id&export=json&limit=-1']
      .map((q) => gw.app.inject({ method: 'GET', url: `/renders?${q}`, headers: { authorization: `Bearer ${heavyToken}` } }));
    const light = gw.get('/renders?limit=2&fields=id&filter[status][_eq]=complete', lightToken);
    const answers = await Promise.all(heavy);
    expect((await light).status).toBe(200);
    watching = false;
    await watch;
    for (const a of answers) expect(a.statusCode).toBe(200);
    expect(answers[0]!.json().data.length).toBe(Number(expected));
    expect(gw.deps.heavyReads.peak).toBe(1);
    expect(maxWaiting).toBeGreaterThan(0);
    expect(lightLoad).toBe(0);
    expect(gw.deps.heavyReads.load(heavyKey)).toEqual({ running: 0, waiting: 0 }); // every streamed answer gave its place back
  });

  it('a client gone before its first byte gives its place back (the next export of the key is answered)', async () => {
    const heavyKey = partitionOf(gw.s.keys[0]!.api_key);
    const base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    for (let i = 0; i < 3; i++) {
      const gone = new AbortController();
      const pending = fetch(`${base}/renders?limit=-1&fields=id&export=csv&n=${i}`, { headers: { authorization: `Bearer ${heavyToken}` }, signal: gone.signal })
        .catch(() => undefined);
      await new Promise((r) => setTimeout(r, 5));
      gone.abort();
      await pending;
    }
    for (let i = 0; i < 200 && gw.deps.heavyReads.load(heavyKey).running > 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(gw.deps.heavyReads.load(heavyKey)).toEqual({ running: 0, waiting: 0 });
    const next = await gw.app.inject({ method: 'GET', url: '/renders?limit=-1&fields=id', headers: { authorization: `Bearer ${heavyToken}` } });
    expect(next.statusCode).toBe(200);
  });
});
