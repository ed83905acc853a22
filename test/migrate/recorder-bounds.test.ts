import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMappings } from '../../src/config/mappings.js';
import { ShapeRecorder, type SeenRequest } from '../../src/migrate/recorder.js';
import { parseQueryString } from '../../src/query/querystring.js';
import { ClientShapeStore } from '../../src/store/client-shapes.js';
import { openDb, type Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';
import { databases } from '../helpers/databases.js';
import { startGateway } from '../helpers/gateway.js';
import { RECORDER_HELD_BYTES } from '../../src/migrate/recorder.js';

/**
 * Everything the client profiles hold is bounded in bytes, whatever a client sends: the recorder's maps (questions held
 * by a hash, big questions shaped at once), the names in a shape (cut with a marker), the lists of a shape, each stored
 * row and each user's rows together.
 */
const m = loadMappings('mappings');
const DAY = 86_400_000;
const BIG = 'x'.repeat(900 * 1024);
const stores = await databases();

/** What the recorder's own maps hold, measured from outside: every key's length and every value's JSON length. */
function retained(r: ShapeRecorder): number {
  let n = 0;
  const json = (v: unknown) => JSON.stringify(v, (_k, x) => (x instanceof Map ? [...x] : x))?.length ?? 0;
  for (const v of Object.values(r as unknown as Record<string, unknown>)) {
    if (!(v instanceof Map)) continue;
    for (const [k, x] of v) n += String(k).length + json(x);
  }
  return n;
}

const search = (client: string, body: object, status = 200): SeenRequest => {
  const text = JSON.stringify(body);
  return { client, userId: 'u-1', method: 'SEARCH', route: '/items/renders', question: `\u0000${text}`, query: (body as { query: object }).query,
    status, ms: 1, v1Calls: 0 };
};

describe.each(stores)('the client profiles, bounded in bytes ($name)', ({ url }) => {
  let db: Db;
  beforeAll(async () => {
    db = await openDb(url);
    await migrate(db.kysely);
  });
  afterAll(async () => db.close());

  it('many distinct ~900 KB SEARCH bodies do not grow what the recorder holds past its bound, and are still counted', async () => {
    await db.kysely.deleteFrom('client_shapes').execute();
    const store = new ClientShapeStore(db.kysely);
    const bound = 512 * 1024;
    const r = new ShapeRecorder(store, { schemas: m.schemas, limitDefault: 100, perClient: 200, retentionMs: DAY, flushEveryMs: 0, maxHeldBytes: bound });
    for (let i = 0; i < 40; i++) {
      r.note(search('user:u-1~python-urllib', { query: { search: `${i}-${BIG}` } }));
      expect(retained(r)).toBeLessThan(bound);
    }
    // the recorder's own count agrees
    expect(r.heldBytes).toBeGreaterThan(0);
    expect(r.heldBytes).toBeLessThanOrEqual(bound);
    await r.flush();
    expect(retained(r)).toBeLessThan(bound);
    for (let i = 0; i < 40; i++) r.shapeOf(search('user:u-1~curl', { query: { search: `${i}-${BIG}`, fields: ['id'] } }));
    expect(retained(r)).toBeLessThan(bound);
    const rows = await store.list();
    expect(rows.map((x) => [JSON.parse(x.shape).key, x.count])).toEqual([['SEARCH /items/renders fields=* search', 40]]);
    expect(r.dropped).toBe(0);
  });

  it('a refused write with a 900 KB body key, or a SEARCH naming a 900 KB unknown parameter or field, stores a small row', async () => {
    await db.kysely.deleteFrom('client_shapes').execute();
    const store = new ClientShapeStore(db.kysely);
    const r = new ShapeRecorder(store, { schemas: m.schemas, limitDefault: 100, perClient: 200, retentionMs: DAY, flushEveryMs: 0 });
    const base = { client: 'user:u-1~curl', userId: 'u-1', ms: 1, v1Calls: 0 };
    r.note({ ...base, method: 'POST', route: '/renders', question: '', query: {}, bodyKeys: [`a${BIG}`, 'title'], status: 400 });
    r.note({ ...base, method: 'PATCH', route: '/render/:id', question: '', query: {}, bodyKeys: Array.from({ length: 5000 }, (_, i) => `k${i}-${'y'.repeat(200)}`), status: 400 });
    r.note(search('user:u-1~curl', { query: { [`b${BIG}`]: 1 } }, 400));
    r.note(search('user:u-1~curl', { query: { fields: [`c${BIG}`] } }, 400));
    r.note(search('user:u-1~curl', { query: { filter: { [`d${BIG}`]: { _eq: 1 } } } }, 400));
    r.note(search('user:u-1~curl', { query: { sort: [`e${BIG}`], groupBy: [`f${BIG}`], aggregate: { count: [`g${BIG}`] } } }, 400));
    await r.flush();
    const rows = await db.kysely.selectFrom('client_shapes').selectAll().execute();
    expect(rows.length).toBe(6);
    for (const row of rows) {
      expect(Buffer.byteLength(row.shape), row.shape.slice(0, 200)).toBeLessThanOrEqual(16 * 1024);
      expect(row.shape).not.toContain('x'.repeat(200));
    }
    // a cut name keeps its start and says it was cut
    const post = rows.find((x) => x.shape.includes('"POST"'))!;
    expect(JSON.parse(post.shape).body).toEqual([expect.stringMatching(/^ax+…\[cut: \d+ characters\]$/), 'title']);
  });

  it('a big question refused as invalid is shaped so without being parsed again (attack pass 17, F1: ~6 ms a refusal)', async () => {
    await db.kysely.deleteFrom('client_shapes').execute();
    const store = new ClientShapeStore(db.kysely);
    const r = new ShapeRecorder(store, { schemas: m.schemas, limitDefault: 100, perClient: 200, retentionMs: DAY, flushEveryMs: 0 });
    // the same big question, answered and refused (a question that parses: only the status tells them apart here)
    r.note(search('user:u-1~curl', { query: { search: `s${BIG}`, limit: 1 } }, 200));
    r.note(search('user:u-2~curl', { query: { search: `s${BIG}`, limit: 1 } }, 400));
    r.note(search('user:u-3~curl', { query: { search: `s${BIG}`, limit: 1 } }, 200)); // (not the refused one's shape)
    await r.flush();
    const rows = await db.kysely.selectFrom('client_shapes').selectAll().orderBy('client').execute();
    expect(rows.map((x) => [x.client, JSON.parse(x.shape).key])).toEqual([
      ['user:u-1~curl', 'SEARCH /items/renders fields=* search paging=limit'],
      ['user:u-2~curl', expect.stringMatching(/invalid/)],
      ['user:u-3~curl', 'SEARCH /items/renders fields=* search paging=limit'],
    ]);
  });

  it('a shape with very many terms is cut to its bound and says so', () => {
    const r = new ShapeRecorder(new ClientShapeStore(db.kysely), { schemas: m.schemas, limitDefault: 100, perClient: 200, retentionMs: DAY, flushEveryMs: 0 });
    const ops = ['_eq', '_neq', '_contains', '_ncontains', '_starts_with', '_nstarts_with', '_ends_with', '_nends_with', '_icontains'];
    const paths = ['title', 'project][title', 'project][account][name', 'status', 'project][account][name'];
    const qs = Array.from({ length: 200 }, (_, i) => `filter[_or][${i}][${paths[i % 5]}][${ops[i % 9]}]=v${i}`).join('&');
    const shape = r.shapeOf({ method: 'GET', route: '/renders', question: qs, query: parseQueryString(qs) });
    expect(shape.invalid, 'the query is read').toBeUndefined();
    expect(JSON.stringify(shape).length).toBeLessThanOrEqual(8 * 1024);
    expect(shape.cut).toBe(true);
    expect(shape.filterTree).toMatch(/…\[cut/);
  });

  it("each user's rows together stay under the user's bound: the least recently seen leave first", async () => {
    await db.kysely.deleteFrom('client_shapes').execute();
    let now = 1_000_000;
    const store = new ClientShapeStore(db.kysely, { userBytes: 16 * 1024 });
    const r = new ShapeRecorder(store, { schemas: m.schemas, limitDefault: 100, perClient: 100_000, retentionMs: DAY, flushEveryMs: 0, now: () => now });
    for (let i = 0; i < 200; i++) {
      now += 1000;
      const keys = [`k${i}-${'z'.repeat(300)}`, `j${i}-${'z'.repeat(300)}`];
      r.note({ client: `user:u-9~${['curl', 'node', 'browser', 'java'][i % 4]}`, userId: 'u-9', method: 'POST', route: '/renders', question: '', query: {},
        bodyKeys: keys, status: 400, ms: 1, v1Calls: 0 });
      if (i % 10 === 9) await r.flush();
    }
    await r.flush();
    const rows = await db.kysely.selectFrom('client_shapes').selectAll().where('user_id', '=', 'u-9').execute();
    const bytes = rows.reduce((s, x) => s + Buffer.byteLength(x.shape) + Buffer.byteLength(x.calls), 0);
    expect(bytes).toBeLessThanOrEqual(16 * 1024);
    expect(rows.length).toBeGreaterThan(5);
    // the newest are kept
    expect(Math.max(...rows.map((x) => Number(x.last_seen)))).toBe(now);
  });
});

describe('the gateway\'s recorder, over HTTP', () => {
  it('20 distinct ~900 KB SEARCH bodies leave what it holds within its bound (8 MiB), each still counted', async () => {
    const gw = await startGateway({ INDEX_ENABLED: 'false' });
    try {
      await gw.addUser(0, 'big@example.com', 'big-password-123');
      const token = await gw.login('big@example.com', 'big-password-123');
      await gw.deps.shapes.flush();
      for (let i = 0; i < 20; i++) {
        const res = await gw.app.inject({ method: 'SEARCH', url: '/items/renders', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ query: { search: `${i}-${BIG}`, limit: 1 } }) });
        expect(res.statusCode).toBe(200);
        expect(retained(gw.deps.shapes)).toBeLessThan(RECORDER_HELD_BYTES);
      }
      await gw.deps.shapes.flush();
      const rows = await new ClientShapeStore(gw.deps.db.kysely).list();
      expect(rows.find((r) => JSON.parse(r.shape).key === 'SEARCH /items/renders fields=* search paging=limit')?.count).toBe(20);
    } finally {
      await gw.close();
    }
  }, 120_000);
});
