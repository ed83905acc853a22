import type { FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RawJson } from '../../src/exec/raw-json.js';
import { RequestContext } from '../../src/read/request-context.js';
import { planQuery } from '../../src/plan/plan.js';
import { parseQuery } from '../../src/query/parse-query.js';
import { searchQuery } from '../../src/query/search-body.js';
import { expectedItems } from '../../src/read/cost.js';
import { isHeavy } from '../../src/read/heavy.js';
import { AnswerMemory } from '../../src/read/in-flight.js';
import { ItemReads } from '../../src/read/items.js';
import { partitionOf } from '../../src/v1/client.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';
import { ctx, mappings, schemas } from '../query/fixtures.js';

/**
 * Issue 38: one cost model for big answers — a read is heavy by its answer's expected size (rows × related items),
 * whatever parameter asked; the heavy-read place is held until the answer has been sent; the bytes of answers built
 * whole and not yet sent are bounded per key and per instance (503 with Retry-After past them).
 */
const planning = { statusToV1: mappings.status.toV1, schemas };
const read = (raw: Record<string, unknown>, resource = 'render') => {
  const schema = schemas[resource]!;
  const q = parseQuery(raw, schema, ctx());
  const plan = planQuery(q, resource, planning);
  const expected = expectedItems(q, schema, schemas, 100, plan.ids);
  return { expected, heavy: isHeavy(q, plan, false, expected, 10_000) };
};

describe('the cost model', () => {
  it('counts rows times the related items each row brings, whatever parameter asked', () => {
    expect(read({ fields: 'id' })).toEqual({ expected: 100, heavy: false });
    expect(read({ fields: '*' })).toEqual({ expected: 100, heavy: false }); // many-to-one ids
    expect(read({}, 'project')).toEqual({ expected: 200, heavy: false }); // each project: its renders' ids, one list
    expect(read({ fields: '*.*' })).toEqual({ expected: 600, heavy: false });
    expect(read({ limit: '10000', fields: 'id' })).toEqual({ expected: 10_000, heavy: false });
    // the three reads of the finding
    expect(read({ limit: '100000', fields: 'id' })).toEqual({ expected: 100_000, heavy: true });
    expect(read(searchQuery({ query: { limit: 1e308, fields: ['id'] } }, {}).raw).heavy).toBe(true);
    expect(read({ fields: '*.*.*' })).toEqual({ expected: 40_600, heavy: true });
    expect(read({ limit: '100000', fields: '*,project.renders.*' }).expected).toBe(100_000 * 102);
    // deep: a one-to-many's own limit; -1 is every item
    expect(read({ fields: 'id,renders.id', deep: { renders: { _limit: 5 } } }, 'project').expected).toBe(100 * 6);
    expect(read({ fields: 'id,renders.id', deep: { renders: { _limit: -1 } } }, 'project')).toEqual({ expected: Number.POSITIVE_INFINITY, heavy: true });
    // a read of named ids holds at most those rows, whatever its limit
    const ids = ['cccccccc-0000-4000-8000-000000000001', 'cccccccc-0000-4000-8000-000000000002'];
    expect(read({ limit: '100000', filter: { id: { _in: ids } } })).toEqual({ expected: 2, heavy: false });
    expect(read({ limit: '-1', fields: 'id' }).heavy).toBe(true);
  });

  it('stars nested ten deep are reckoned a level at a time (no walk of every branch)', () => {
    expect(read({ fields: Array(10).fill('*').join('.') }, 'account').heavy).toBe(true);
  });
});

/** One answer of `key` holding `bytes` (as the senders hold them): its release, or undefined when there is no room. */
const hold = (m: AnswerMemory, key: string, bytes: number): (() => void) | undefined => {
  const h = m.reserve(key);
  return h.add(bytes) ? () => h.release() : undefined;
};

describe('the answer memory', () => {
  it('bounds the bytes held per key and per instance, and gives back once', () => {
    const m = new AnswerMemory(100, 250);
    const a1 = hold(m, 'a', 60)!;
    expect(hold(m, 'a', 50)).toBeUndefined(); // the key's bound: no room (the answer streams)
    const a2 = hold(m, 'a', 40)!; // exactly the bound
    const b1 = hold(m, 'b', 100)!;
    expect(hold(m, 'c', 60)).toBeUndefined(); // the instance's bound
    const c1 = hold(m, 'c', 50)!;
    expect([m.held('a'), m.held('b'), m.held('c'), m.held()]).toEqual([100, 100, 50, 250]);
    expect(hold(m, 'd', 1)).toBeUndefined();
    b1();
    b1(); // given back once
    expect(m.held()).toBe(150);
    a1(); a2(); c1();
    expect(m.held()).toBe(0);
  });

  it('counts an answer while it is built: past the room it has it is told so (never refused, never 503), holding at most that', () => {
    const m = new AnswerMemory(100, 250);
    const h = m.reserve('a');
    for (let i = 0; i < 9; i++) expect(h.add(10)).toBe(true);
    expect(h.add(11)).toBe(false); // would pass the key's bound: nothing added, the rest is streamed
    expect(h.add(10)).toBe(true); // exactly the bound
    expect(h.add(1)).toBe(false);
    expect([h.held, m.held('a'), m.held()]).toEqual([100, 100, 100]);
    // a slow reader of key a holds at most its bound: every other key's answers still fit
    for (const k of ['b', 'c']) hold(m, k, 70)!();
    h.release();
    h.release();
    expect(m.held()).toBe(0);
    expect(new AnswerMemory(500, 200).reserve('a').add(201)).toBe(false); // and never more than the instance holds
    // another answer of the key holding memory: the one being built gets the room left, then streams
    const other = hold(m, 'a', 50)!;
    const built = m.reserve('a');
    expect(built.add(30)).toBe(true);
    expect(built.add(30)).toBe(false);
    expect(m.held('a')).toBe(80);
    built.release();
    other();
    expect(m.held()).toBe(0);
  });

  it('what was built is carried past the bounds; a key is over past its own, or — holding something — past the instance\'s, never when it holds nothing', () => {
    const m = new AnswerMemory(100, 150);
    const freed: number[] = [];
    m.onFree(() => freed.push(m.held()));
    const a = m.reserve('a');
    a.carry(120); // an item sent whole, larger than the key's bound
    expect([m.held('a'), m.over('a'), m.over('b')]).toEqual([120, true, false]);
    const b = m.reserve('b');
    b.carry(40); // the instance is past its bound now (160 > 150)
    expect([m.over('b'), m.over('c')]).toEqual([true, false]); // b holds some, c nothing: c still builds an answer at a time
    a.settle(30); // the socket took 90 of it
    expect([m.held('a'), m.over('a'), m.over('b'), freed]).toEqual([30, false, false, [70]]);
    a.release();
    b.release();
    expect(m.held()).toBe(0);
  });
});

describe('through the gateway', () => {
  let gw: TestGateway;
  let token: string;
  let userId: string;
  let key: string;
  beforeAll(async () => {
    gw = await startGateway({ HEAVY_READS_PER_KEY: '1', INDEX_ENABLED: 'false', ANSWER_CACHE_MB: '0', ANSWER_MEMORY_MB_PER_KEY: '4' });
    userId = await gw.addUser(0, 'cost@example.com');
    token = await gw.login('cost@example.com');
    key = partitionOf(gw.s.keys[0]!.api_key);
  });
  afterAll(async () => gw.close());

  it('a heavy read keeps its place until its answer has closed, not until its last item was read', async () => {
    const reads = new ItemReads(gw.deps, 'render', schemas.render!, gw.deps.heavyReads);
    const request = { id: 'req-1', log: gw.app.log, principal: { user: (await gw.deps.users.byId(userId))!, via: 'jwt' } } as unknown as FastifyRequest;
    for (const raw of [{ limit: '100000', fields: 'id' }, { limit: '-1', fields: 'id' }, { fields: '*.*.*' }]) {
      const c = new RequestContext(gw.deps, request);
      let end: (() => void) | undefined;
      const gone = new AbortController();
      const q = parseQuery(raw, schemas.render!, ctx());
      const answered = await reads.list(c, q, false, { gone: gone.signal, onEnd: (fn) => { end = fn; } });
      if (answered.result.stream) for await (const _ of answered.result.stream) { /* every item read */ }
      expect(gw.deps.heavyReads.load(key), JSON.stringify(raw)).toEqual({ running: 1, waiting: 0 });
      expect(end).toBeTypeOf('function');
      end!(); // the reply has closed
      expect(gw.deps.heavyReads.load(key)).toEqual({ running: 0, waiting: 0 });
    }
  });

  it('with no room left in the answer memory (readers that never read), answers stream instead: the same items, never a 503', async () => {
    const whole = ['/renders?limit=5&fields=id', '/renders?limit=5&fields=id&export=csv', '/renders?limit=-1&fields=id,project.title&export=json'];
    const status = async (url: string) => (await gw.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } }));
    const free = await Promise.all(whole.map(status));
    expect(gw.deps.answerMemory.held()).toBe(0);
    // the key's whole bound held by its other answers not yet read (a slow reader: 503 before)
    const pinned = hold(gw.deps.answerMemory, key, 4 * 1_048_576)!;
    for (const [i, url] of whole.entries()) {
      const res = await status(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).toBe(free[i]!.body);
      expect(gw.deps.answerMemory.held(key), url).toBe(4 * 1_048_576); // streamed: nothing more held
    }
    pinned();
    expect(gw.deps.answerMemory.held()).toBe(0);
  });

  it('PATCH {query, data} answers through the answer memory: with no room, the same items stream (attack pass 5, H2: built and serialised whole)', async () => {
    const patch = () => gw.app.inject({
      method: 'PATCH', url: '/renders?fields=id,title', headers: { authorization: `Bearer ${token}` }, payload: { query: { limit: -1 }, data: {} },
    });
    const free = await patch();
    expect(free.statusCode).toBe(200);
    const items = free.json().data as { id: string; title: string }[];
    expect(items.length).toBeGreaterThan(5);
    expect(items.map((x) => x.id)).toEqual([...items.map((x) => x.id)].sort()); // in primary-key order
    expect(gw.deps.answerMemory.held()).toBe(0);
    const pinned = hold(gw.deps.answerMemory, key, 4 * 1_048_576)!;
    try {
      const res = await patch();
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(free.body);
      expect(res.headers['content-length']).toBeUndefined(); // streamed: not a body built whole
      expect(gw.deps.answerMemory.held(key)).toBe(4 * 1_048_576);
    } finally {
      pinned();
    }
    expect(gw.deps.answerMemory.held()).toBe(0);
  });

  it('over real HTTP with keep-alive, each sent answer gives its place and its memory back (one place: one after another)', async () => {
    const base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    for (const q of ['limit=-1&fields=id', 'limit=100000&fields=id', 'fields=*.*.*', 'limit=-1&fields=id,project.title']) {
      const res = await fetch(`${base}/renders?${q}`, { headers: { authorization: `Bearer ${token}`, connection: 'keep-alive' } });
      expect(res.status, q).toBe(200);
      expect(((await res.json()) as { data: unknown[] }).data.length, q).toBeGreaterThan(0);
    }
    for (let i = 0; i < 200 && gw.deps.heavyReads.load(key).running > 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(gw.deps.heavyReads.load(key)).toEqual({ running: 0, waiting: 0 });
    expect(gw.deps.answerMemory.held()).toBe(0);
  });

  it('an expanded streamed answer is measured, written from its measured bytes, and given back once sent', async () => {
    const plain = await gw.get('/renders?limit=-1&fields=id,project', token);
    const expanded = await gw.get('/renders?limit=-1&fields=id,project.id,project.title', token);
    expect(expanded.status).toBe(200);
    expect(expanded.body.data.map((r: { id: string }) => r.id)).toEqual(plain.body.data.map((r: { id: string }) => r.id));
    expect(expanded.body.data[0].project).toEqual({ id: plain.body.data[0].project, title: expect.any(String) });
    expect(gw.deps.answerMemory.held()).toBe(0);
  });
});

describe('an answer larger than one answer may hold (issue 38, M1: it was built whole, then refused)', () => {
  let gw: TestGateway;
  let token: string;
  let key: string;
  let peak = 0;
  beforeAll(async () => {
    gw = await startGateway({ INDEX_ENABLED: 'false', ANSWER_CACHE_MB: '0', ANSWER_MEMORY_MB_PER_KEY: '1', MAX_ITEM_MB: '0.2' });
    await gw.addUser(0, 'big@example.com');
    token = await gw.login('big@example.com');
    key = partitionOf(gw.s.keys[0]!.api_key);
    // 40 KB titles: ~26 items fill the key's 1 MB
    let n = 0;
    for (const r of gw.s.sim.world.renders.values()) r.name = `${String(n++).padStart(5, '0')} ${'é'.repeat(20_000)}`;
    const memory = gw.deps.answerMemory;
    const grow = memory.grow.bind(memory);
    memory.grow = (k, mine, bytes) => {
      const held = grow(k, mine, bytes);
      peak = Math.max(peak, memory.held(k));
      return held;
    };
  });
  afterAll(async () => gw.close());

  /** The pages of `size` walked in turn: the reference each answer is compared with. */
  const walked = async (q: string, size: number) => {
    const out: unknown[] = [];
    for (let page = 1; ; page++) {
      const res = await gw.get(`/renders?${q}&limit=${size}&page=${page}`, token);
      expect(res.status).toBe(200);
      out.push(...res.body.data);
      if (res.body.data.length < size) return out;
    }
  };

  it('is sent — what fits held, the rest streamed as it is read — and equals the pages walked; never more than the bound held', async () => {
    const fields = 'fields=id,title,status&sort=id';
    const all = await walked(fields, 10);
    expect(all.length).toBeGreaterThan(60); // more than twice what fits
    peak = 0;
    const page = await gw.get(`/renders?${fields}&limit=${all.length}`, token);
    expect(page.status).toBe(200);
    expect(page.body.data).toEqual(all);
    expect(peak).toBeGreaterThan(512 * 1024); // the part that fits was held…
    expect(peak).toBeLessThanOrEqual(1_048_576); // …and no more
    expect(gw.deps.answerMemory.held(key)).toBe(0);
    // with meta and explain, and the SEARCH form of the same question
    const meta = await gw.get(`/renders?${fields}&limit=${all.length}&meta=filter_count`, token, { 'x-gateway-explain': '1', 'x-gateway-operator-token': TEST_ENV.GATEWAY_ADMIN_TOKEN });
    expect(meta.body.meta).toEqual({ filter_count: all.length });
    expect(meta.body.data).toEqual(all);
    expect(meta.body.explain).toEqual(expect.objectContaining({ source: 'live' }));
  });

  it('one item past MAX_ITEM_MB (its project\'s renders embedded in it) is a 400 naming the bound, in a page, a stream, a file, by id', async () => {
    const first = (await gw.get('/renders?limit=1&fields=id', token)).body.data[0].id as string;
    for (const url of ['/renders?limit=5&fields=id,project.renders.title', '/renders?limit=-1&fields=id,project.renders.title',
      '/renders?limit=5&fields=id,project.renders.title&export=csv', `/renders/${first}?fields=id,project.renders.title`]) {
      const res = await gw.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().errors[0].message, url).toMatch(/more than one item may be \(0\.2 MB, MAX_ITEM_MB\)/);
    }
    expect((await gw.get('/renders?limit=5&fields=id,title,project.title', token)).status).toBe(200); // items of 40 KB
    expect(gw.deps.answerMemory.held()).toBe(0);
  });

  it('an expanded limit=-1 answer and the files of a page: the same items as the pages walked', async () => {
    const fields = 'fields=id,title,project.id,project.title&sort=id';
    const all = await walked(fields, 10);
    peak = 0;
    const expanded = await gw.get(`/renders?${fields}&limit=-1`, token);
    expect(expanded.status).toBe(200);
    expect(expanded.body.data).toEqual(all);
    expect(peak).toBeLessThanOrEqual(1_048_576);
    const file = await gw.app.inject({ method: 'GET', url: `/renders?${fields}&limit=${all.length}&export=json`, headers: { authorization: `Bearer ${token}` } });
    expect(file.statusCode).toBe(200);
    expect(JSON.parse(file.body)).toEqual(all);
    const streamed = await gw.app.inject({ method: 'GET', url: `/renders?${fields}&limit=-1&export=json`, headers: { authorization: `Bearer ${token}` } });
    expect(JSON.parse(streamed.body)).toEqual(all);
    expect(gw.deps.answerMemory.held()).toBe(0);
  });
});

describe('an expanded limit=-1 answer (attack pass N1: every item serialised before the first was sent)', () => {
  for (const index of ['true', 'false']) {
    it(`is shaped as it is written: the first item leaves before the others are serialised (${index === 'true' ? 'replica' : 'live'})`, async () => {
      const gw = await startGateway({ INDEX_ENABLED: index, ANSWER_CACHE_MB: '0' });
      try {
        const userId = await gw.addUser(0, 'n1@example.com');
        const reads = new ItemReads(gw.deps, 'render', schemas.render!, gw.deps.heavyReads);
        const request = { id: 'req-n1', log: gw.app.log, principal: { user: (await gw.deps.users.byId(userId))!, via: 'jwt' } } as unknown as FastifyRequest;
        for (const fields of ['*,project.renders.*', '*,project.title', 'id,title']) {
          const q = parseQuery({ limit: '-1', fields }, schemas.render!, ctx());
          const of = vi.spyOn(RawJson, 'of');
          let end: (() => void) | undefined;
          const answered = await reads.list(new RequestContext(gw.deps, request), q, false, { gone: new AbortController().signal, onEnd: (fn) => { end = fn; } });
          const it = answered.result.stream![Symbol.asyncIterator]();
          expect((await it.next()).done).toBe(false);
          const before = of.mock.calls.length;
          let n = 1;
          while (!(await it.next()).done) n++;
          of.mockRestore();
          end?.(); // the reply has closed: the heavy place is given back
          expect(n, fields).toBeGreaterThan(10);
          // an expanded selection: nothing serialised yet (items are shaped as they are written); a plain one waits as bytes
          if (fields.includes('.')) expect(before, fields).toBe(0);
          else expect(before, fields).toBeLessThanOrEqual(n);
        }
      } finally {
        await gw.close();
      }
    });
  }
});

describe('a connection nothing moves on (HTTP_IDLE_TIMEOUT_MS)', () => {
  it('is closed by the gateway: a client that stops reading does not pin what its answer holds for ever', async () => {
    const gw = await startGateway({ HTTP_IDLE_TIMEOUT_MS: '300' }, { scale: 'tiny' });
    try {
      const base = new URL(await gw.app.listen({ port: 0, host: '127.0.0.1' }));
      const { connect } = await import('node:net');
      const socket = connect(Number(base.port), base.hostname);
      // sends nothing: nothing moves on the connection (a paused reader would not see the close it is sent)
      const closed = await new Promise<boolean>((done) => {
        socket.once('close', () => done(true));
        setTimeout(() => done(false), 20_000).unref(); // a bound on the wait, not a measure of speed
      });
      expect(closed).toBe(true);
    } finally {
      await gw.close();
    }
  });
});
