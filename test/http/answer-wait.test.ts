import { createHash } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { derivedUuid } from '../../src/translate/ids.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { replicaReady } from '../helpers/replica-ready.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * A client that fires many large reads of its key at once and reads no answer before every one has begun (attack pass 10,
 * medium): its first answers fill the key's answer memory and are not read, so its later reads wait for room its own
 * answers hold — until the connection's idle timeout (300 s). A wait for that room is now bounded (`DATA_WAIT_MS`): past
 * it a 503 with Retry-After, and the client's answers already begun are read whole.
 */
const MB = 1_048_576;
const ITEM = 10 * MB;
const WAIT_MS = 1500;

let sim: RunningSim;
let gw: TestGateway;
let base: string;
let ann: string;
/** uuid → the text of its data */
const big = new Map<string, string>();

beforeAll(async () => {
  sim = await startSim();
  gw = await startGateway(
    { ANSWER_CACHE_MB: '0', ANSWER_MEMORY_MB_PER_KEY: '16', DATA_WAIT_MS: String(WAIT_MS), HTTP_IDLE_TIMEOUT_MS: '300000' },
    {}, { sim, simClock: true },
  );
  await gw.addUser(0, 'ann@example.com');
  ann = await gw.login('ann@example.com');
  await replicaReady(gw, ann);
  const teams = new Set(sim.keys[0]!.teams.map((t) => t.id));
  const ids = [...sim.sim.world.renders.values()]
    .filter((r) => teams.has(sim.sim.world.projects.get(r.projectId)?.teamId ?? '')).map((r) => r.id).slice(0, 6);
  expect(ids.length).toBe(6);
  for (const [i, id] of ids.entries()) {
    const text = `${i}:`.padEnd(ITEM, String.fromCharCode(97 + i));
    big.set(derivedUuid('render', id), text);
    await gw.deps.renderData.put(id, { text }, null, null);
  }
  base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
}, 180_000);
afterAll(async () => { await gw.close(); await sim.sim.close(); });

interface Begun { readonly res: http.IncomingMessage; readonly at: number }

/** A read whose answer is not read until `read` is called: resolves when its headers arrive. */
function begin(url: string): Promise<Begun> {
  return new Promise((ok, fail) => {
    const req = http.get(`${base}${url}`, { headers: { authorization: `Bearer ${ann}` } }, (res) => {
      res.pause();
      ok({ res, at: Date.now() });
    });
    req.on('error', fail);
  });
}

function read(res: http.IncomingMessage): Promise<string> {
  return new Promise((ok, fail) => {
    const parts: Buffer[] = [];
    res.on('data', (c: Buffer) => parts.push(c));
    res.on('end', () => ok(Buffer.concat(parts).toString('utf8')));
    res.on('error', fail);
    res.resume();
  });
}

const digest = (s: string) => createHash('sha256').update(s).digest('hex');

describe('a read waiting for room its key\'s unread answers hold (attack pass 10)', () => {
  it('waits at most DATA_WAIT_MS, then a 503 with Retry-After; the answers begun are read whole, and a retry is answered', async () => {
    const ids = [...big.keys()];
    const started = Date.now();
    // every read begins before any answer is read
    const begun = await Promise.all(ids.map((id) => begin(`/renders/${id}?fields=data`)));
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(WAIT_MS + 15_000);
    const ok = begun.filter((b) => b.res.statusCode === 200);
    const busy = begun.filter((b) => b.res.statusCode === 503);
    expect(ok.length + busy.length).toBe(ids.length);
    // the key's bound (16 MB) holds one or two 10 MB answers whole; the others waited their bound and were refused
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(ok.length).toBeLessThanOrEqual(2);
    for (const b of busy) {
      expect(b.res.headers['retry-after']).toBe('5');
      expect(b.at - started).toBeGreaterThanOrEqual(WAIT_MS - 100);
    }
    const bodies = await Promise.all(begun.map((b) => read(b.res)));
    for (const [i, b] of begun.entries()) {
      if (b.res.statusCode === 200) {
        expect(digest(bodies[i]!)).toBe(digest(JSON.stringify({ data: { data: { text: big.get(ids[i]!) } } })));
      } else {
        const e = JSON.parse(bodies[i]!) as { errors: { message: string; extensions: { code: string } }[] };
        expect(e.errors[0]!.extensions.code).toBe('SERVICE_UNAVAILABLE');
        expect(e.errors[0]!.message).toMatch(/retry shortly/);
      }
    }
    // nothing is held once every answer was read; the refused reads, asked again one at a time, are answered whole
    for (let i = 0; i < 100 && gw.deps.answerMemory.held() > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect({ memory: gw.deps.answerMemory.held(), room: gw.deps.dataRoom.held(), queued: gw.deps.dataRoom.queued }).toEqual({ memory: 0, room: 0, queued: 0 });
    for (const [i, b] of begun.entries()) {
      if (b.res.statusCode !== 503) continue;
      const again = await begin(`/renders/${ids[i]}?fields=data`);
      expect(again.res.statusCode).toBe(200);
      expect(digest(await read(again.res))).toBe(digest(JSON.stringify({ data: { data: { text: big.get(ids[i]!) } } })));
    }
  }, 120_000);

  it('a write made while its key\'s unread answers hold the room is answered 200 once it waited, never a 503 (attack pass 11, M: the render was made, then 503 with Retry-After)', async () => {
    const ids = [...big.keys()];
    const where = await gw.get(`/renders/${ids[0]}?fields=project,account`, ann);
    expect(where.status).toBe(200);
    const { project, account } = where.body.data as { project: string; account: string };
    // two large answers begun and not read: the key's answer memory (16 MB) is past its bound
    const held = await Promise.all(ids.slice(0, 2).map((id) => begin(`/renders/${id}?fields=data`)));
    expect(held.map((b) => b.res.statusCode)).toEqual([200, 200]);
    try {
      const title = `after-write ${Date.now()}`;
      const created = await fetch(`${base}/renders`, {
        method: 'POST', headers: { authorization: `Bearer ${ann}`, 'content-type': 'application/json' },
        body: JSON.stringify({ project, account, title, data: { made: title } }),
      });
      expect(created.status).toBe(200);
      const made = ((await created.json()) as { data: { id: string; title: string; data: unknown } }).data;
      expect({ title: made.title, data: made.data }).toEqual({ title, data: { made: title } });
      // the same while a PATCH by query changes it: answered with the item as changed
      const patched = await fetch(`${base}/renders?fields=id,title,data`, {
        method: 'PATCH', headers: { authorization: `Bearer ${ann}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: { filter: { id: { _eq: made.id } } }, data: { title: `${title} (2)` } }),
      });
      expect(patched.status).toBe(200);
      expect(((await patched.json()) as { data: unknown[] }).data).toEqual([{ id: made.id, title: `${title} (2)`, data: { made: title } }]);
      // made once
      const listed = await gw.get(`/renders?fields=id&filter[title][_starts_with]=${encodeURIComponent(title)}`, ann);
      expect(listed.body.data).toEqual([{ id: made.id }]);
    } finally {
      const bodies = await Promise.all(held.map((b) => read(b.res)));
      expect(bodies.map(digest)).toEqual(ids.slice(0, 2).map((id) => digest(JSON.stringify({ data: { data: { text: big.get(id) } } }))));
    }
  }, 120_000);
});
