import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readsOutsideHand } from '../../src/replica/data-at-hand.js';
import { derivedUuid } from '../../src/translate/ids.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * The data the gateway sent for the renders it created is the client's own, up to MAX_PAYLOAD_BYTES a render: the
 * replica holds none of it (a restarted instance held every render's data of a team from its first read — 300 renders of
 * 900 KB and it died of it). Each answer reads the data of the renders it shows, and answers it whole.
 */
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

let sim: RunningSim;
let gw: TestGateway;
let token: string;
const MB = 1_048_576;
/** v1 id → the data the gateway sent (a distinct 1 MB text each: nothing shared). */
const sent = new Map<string, { i: number; text: string }>();

async function ready(t: TestGateway, tok: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    await t.get('/renders?limit=1&fields=id', tok);
    const s = await t.deps.index!.status();
    if (s.length > 0 && s.every((x) => x.state === 'ready')) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the replica did not become ready');
}

/** Asks until the replica answers (a restarted instance answers live while it reads its teams back from the store). */
async function fromReplica(t: TestGateway, tok: string, url: string): Promise<Awaited<ReturnType<TestGateway['get']>>> {
  let r = await t.get(url, tok);
  for (let i = 0; i < 300 && r.headers['x-gateway-source'] !== 'index'; i++) {
    await new Promise((ok) => setTimeout(ok, 10));
    r = await t.get(url, tok);
  }
  return r;
}

beforeAll(async () => {
  sim = await startSim();
  gw = await startGateway({}, {}, { sim, simClock: true });
  await gw.addUser(0, 'ann@example.com');
  token = await gw.login('ann@example.com');
  await ready(gw, token);
  const teams = new Set(sim.keys[0]!.teams.map((t) => t.id));
  const ids = [...sim.sim.world.renders.values()].filter((r) => teams.has(sim.sim.world.projects.get(r.projectId)?.teamId ?? '')).slice(0, 48).map((r) => r.id);
  expect(ids.length).toBe(48);
  for (const [i, id] of ids.entries()) {
    const data = { i, text: `${i}:`.padEnd(MB, String.fromCharCode(97 + (i % 26))) };
    sent.set(id, data);
    await gw.deps.renderData.put(id, data, null, null);
  }
}, 120_000);
afterAll(async () => { await gw.close(); await sim.sim.close(); });

describe('render data is read per answer, never held by the replica', () => {
  it('a restarted instance holding 48 MB of data reads none of it to answer a question without data', async () => {
    const before = heap();
    const again = await startGateway({ DATABASE_URL: gw.config.DATABASE_URL }, {}, { sim, simClock: true });
    try {
      const t = await again.login('ann@example.com');
      // the teams are read back from the store (the first reads may be answered live meanwhile)
      const r = await fromReplica(again, t, '/renders?fields=id,title&limit=5&meta=total_count');
      expect(r.status).toBe(200);
      expect(r.headers['x-gateway-source']).toBe('index');
      const grown = heap() - before;
      // the team's rows are a few hundred bytes a render; its 48 MB of data stays in the store (it was all read before)
      expect(grown).toBeLessThan(16 * MB);
      // and the data is answered whole, by id and in a list, read per answer
      const [id, data] = [...sent.entries()][7]!;
      const one = await again.get(`/renders/${derivedUuid('render', id)}?fields=id,data`, t);
      expect(one.body.data.data).toEqual(data);
      const list = await again.get(`/renders?fields=data&filter[id][_in]=${[...sent.keys()].slice(0, 3).map((v) => derivedUuid('render', v)).join(',')}&limit=-1`, t);
      expect(list.body.data.map((x: { data: { i: number } }) => x.data.i).sort()).toEqual([0, 1, 2]);
      expect(list.body.data.map((x: { data: { text: string } }) => x.data.text.length)).toEqual([MB, MB, MB]);
      expect(heap() - before).toBeLessThan(24 * MB);
    } finally {
      await again.close();
    }
  }, 120_000);

  it('a filter on data reads none of it: a json field is tested only for null, and stored data never is (attack pass 5, M1)', async () => {
    const many = vi.spyOn(gw.deps.renderData, 'many');
    try {
      const all = await gw.get('/renders?fields=id&limit=-1&sort=id', token);
      const questions = [
        '/renders?fields=id&filter[data][_nnull]=true&limit=-1&sort=id',
        '/renders?fields=id&filter[data][_null]=false&limit=-1&sort=id',
        '/renders?fields=id&filter[project][renders][data][_nnull]=true&limit=-1&sort=id',
        '/renders?aggregate[count]=*&filter[data][_nnull]=true',
      ];
      const before = many.mock.calls.length;
      const answers = [];
      for (const url of questions) answers.push(await gw.get(url, token));
      // not one render's data read to answer them…
      expect(many.mock.calls.slice(before).flatMap((c) => c[0]).length).toBe(0);
      // …and the answers are the data's: every render's data is a non-null object
      for (const a of answers.slice(0, 3)) expect(a.body.data).toEqual(all.body.data);
      expect(Number(answers[3]!.body.data[0].count)).toBe(all.body.data.length);
      expect((await gw.get('/renders?fields=id&filter[data][_null]=true&limit=-1', token)).body.data).toEqual([]);
    } finally {
      many.mockRestore();
    }
  });

  it('an aggregate over data: a count reads none of it; a group, a sort or a distinct count of json is refused, as PostgreSQL cannot (review: every render read)', async () => {
    const many = vi.spyOn(gw.deps.renderData, 'many');
    try {
      const all = await gw.get('/renders?fields=id&limit=-1', token);
      const before = many.mock.calls.length;
      const counted = await gw.get('/renders?aggregate[count]=data', token);
      expect(counted.status).toBe(200);
      expect(Number(counted.body.data[0].count.data)).toBe(all.body.data.length);
      expect(many.mock.calls.slice(before).flatMap((c) => c[0]).length).toBe(0);
      // (Directus 10.10 on PostgreSQL answers each of these 500, a database error: json has no equality or order)
      for (const url of ['/renders?aggregate[count]=*&groupBy=data', '/renders?aggregate[countDistinct]=data', '/renders?aggregate[max]=data', '/renders?sort=data']) {
        const r = await gw.get(url, token);
        expect(r.status, url).toBe(400);
        expect(r.body.errors[0].extensions.code, url).toBe('INVALID_QUERY');
      }
    } finally {
      many.mockRestore();
    }
  });

  it('an expansion with data counts its related items once, however many rounds read the data (review: twice)', async () => {
    const n = (await gw.get('/renders?fields=id&limit=-1', token)).body.data.length as number;
    // room for one related project a render, not for two
    const tight = await startGateway({ DATABASE_URL: gw.config.DATABASE_URL, MAX_RELATED_ITEMS: String(n + 5) }, {}, { sim, simClock: true });
    try {
      const t = await tight.login('ann@example.com');
      const r = await fromReplica(tight, t, '/renders?fields=*,project.title&limit=-1');
      expect(r.headers['x-gateway-source']).toBe('index');
      expect(r.status).toBe(200);
      expect(r.body.data.length).toBe(n);
      expect(r.body.data.filter((x: { data: { text?: string } }) => x.data.text).length).toBe(sent.size);
    } finally {
      await tight.close();
    }
  }, 120_000);

  it('every way of reading data answers what was stored (pages, filters on data, nested, exports), read within an answer', async () => {
    const outside = readsOutsideHand();
    const byUuid = new Map([...sent.entries()].map(([v1, d]) => [derivedUuid('render', v1), d]));
    const small = (x: { data?: { i?: number; text?: string } }) => (x.data?.text ? { i: x.data.i, n: x.data.text.length, head: x.data.text.slice(0, 3) } : x.data);
    const expected = (uuid: string) => {
      const d = byUuid.get(uuid);
      return d ? { i: d.i, n: d.text.length, head: d.text.slice(0, 3) } : {};
    };
    // a page with the default selection (every field)
    const page = await gw.get('/renders?limit=60&sort=date_created', token);
    expect(page.status).toBe(200);
    let withData = 0;
    for (const x of page.body.data) {
      expect(small(x), x.id).toEqual(expected(x.id));
      if (byUuid.has(x.id)) withData++;
    }
    expect(withData).toBeGreaterThan(0);
    // a filter that tests data: only the renders whose data has an `i`
    const filtered = await gw.get('/renders?fields=id&filter[data][_nnull]=true&limit=-1', token);
    expect(filtered.status).toBe(200);
    const all = await gw.get('/renders?fields=id&limit=-1', token);
    expect(filtered.body.data.length).toBe(all.body.data.length);
    // nested: a project's renders with their data
    const projects = await gw.get('/projects?fields=id,renders.id,renders.data&limit=-1&deep[renders][_limit]=-1', token);
    expect(projects.status).toBe(200);
    let nested = 0;
    for (const p of projects.body.data) {
      for (const x of p.renders) {
        expect(small(x), x.id).toEqual(expected(x.id));
        if (byUuid.has(x.id)) nested++;
      }
    }
    expect(nested).toBe(sent.size);
    // a full export, parsed back, equals the JSON answer
    const json = await gw.get('/renders?fields=id,data&limit=-1&sort=id', token);
    const exported = await gw.get('/renders?fields=id,data&limit=-1&sort=id&export=json', token);
    expect(exported.status).toBe(200);
    expect(typeof exported.body === 'string' ? JSON.parse(exported.body) : exported.body).toEqual(json.body.data);
    expect(json.body.data.filter((x: { id: string }) => byUuid.has(x.id)).length).toBe(sent.size);
    for (const x of json.body.data) expect(small(x), x.id).toEqual(expected(x.id));
    // none of these read data outside an answer's evaluation (where it would have been a stand-in)
    expect(readsOutsideHand()).toBe(outside);
  }, 120_000);
});
