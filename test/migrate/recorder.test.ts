import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMappings } from '../../src/config/mappings.js';
import { ShapeRecorder, type SeenRequest } from '../../src/migrate/recorder.js';
import { parseQueryString } from '../../src/query/querystring.js';
import { ClientShapeStore, medianOf } from '../../src/store/client-shapes.js';
import { openDb, type Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';
import { databases } from '../helpers/databases.js';

const m = loadMappings('mappings');
let now = 1_000_000;
const DAY = 86_400_000;
const stores = await databases();

const seen = (client: string, qs: string, extra: Partial<SeenRequest> = {}): SeenRequest => ({
  client, userId: 'u-1', method: 'GET', route: '/renders', question: qs, query: parseQueryString(qs), status: 200, ms: 10, v1Calls: 0, ...extra,
});

describe.each(stores)('the client profiles recorder ($name)', ({ name, url }) => {
  let db: Db;
  beforeAll(async () => {
    db = await openDb(url);
    await migrate(db.kysely);
  });
  afterAll(async () => db.close());

  it('counts per (client, shape) with errors, latency and v1 calls; stores no value, token or search string', async () => {
    const store = new ClientShapeStore(db.kysely);
    const r = new ShapeRecorder(store, { schemas: m.schemas, limitDefault: 100, perClient: 10, retentionMs: 30 * DAY, now: () => now, flushEveryMs: 0 });
    r.note(seen('user:u-1~curl', 'filter[status][_eq]=complete&access_token=tok-SECRET-1&limit=3', { v1Calls: 4, ms: 30 }));
    r.note(seen('user:u-1~curl', 'filter[status][_eq]=failed&limit=9', { v1Calls: 2, ms: 10 }));
    r.note(seen('user:u-1~curl', 'filter[status][_eq]=failed&limit=9', { v1Calls: 2, status: 500, ms: 50 }));
    r.note(seen('user:u-1~curl', 'search=my%20private%20words'));
    r.note(seen('user:u-1~node', 'filter[status][_eq]=failed&limit=9'));
    r.note(seen('user:u-1~curl', 'filter[nope][_eq]=1'));
    await r.flush();
    const rows = await store.list();
    const byKey = new Map(rows.map((x) => [`${x.client} ${JSON.parse(x.shape).key}`, x]));
    const list = byKey.get('user:u-1~curl GET /renders fields=* filter=status _eq ? paging=limit');
    expect(list).toMatchObject({ count: 3, errors: 1, msTotal: 90, msMax: 50, calls: { 2: 2, 4: 1 } });
    expect(medianOf(list!.calls)).toBe(2);
    expect(byKey.get('user:u-1~node GET /renders fields=* filter=status _eq ? paging=limit')?.count).toBe(1);
    expect(byKey.has('user:u-1~curl GET /renders fields=* search')).toBe(true);
    expect([...byKey.keys()].some((k) => k.includes('invalid=filter'))).toBe(true);
    // nothing secret in what is stored (SQLite: the file itself)
    const stored = JSON.stringify(await db.kysely.selectFrom('client_shapes').selectAll().execute()) +
      (name === 'sqlite' ? readFileSync(url).toString('latin1') : '');
    for (const secret of ['tok-SECRET-1', 'private', 'complete', 'failed']) expect(stored).not.toContain(secret);
    // a second flush adds to the rows
    r.note(seen('user:u-1~curl', 'filter[status][_eq]=draft&limit=1', { v1Calls: 2 }));
    await r.flush();
    expect((await store.list('user:u-1~curl')).find((x) => x.key === list!.key)?.count).toBe(4);
    expect((await store.list('user:u-1')).length).toBe(4);
  });

  it('bounded: at most perClient shapes per client, the least recently seen dropped; rows past the retention dropped', async () => {
    await db.kysely.deleteFrom('client_shapes').execute();
    const store = new ClientShapeStore(db.kysely);
    const r = new ShapeRecorder(store, { schemas: m.schemas, limitDefault: 100, perClient: 2, retentionMs: 30 * DAY, now: () => now, flushEveryMs: 0 });
    const fields = ['id', 'title', 'status'];
    for (const f of fields) {
      now += 1000;
      r.note(seen('static:t-1~curl', `fields=${f}`));
      await r.flush();
    }
    expect((await store.list()).map((x) => JSON.parse(x.shape).fields[0]).sort()).toEqual(['status', 'title']);
    now += 31 * DAY;
    r.note(seen('static:t-2~curl', 'fields=id'));
    await r.flush();
    expect((await store.list()).map((x) => x.client)).toEqual(['static:t-2~curl']);
  });

  it('two instances adding the same new row: neither loses its counts', async () => {
    await db.kysely.deleteFrom('client_shapes').execute();
    const a = new ClientShapeStore(db.kysely);
    const b = new ClientShapeStore(db.kysely);
    const delta = () => ({ client: 'user:z~curl', userId: 'z', key: 'k1', shape: '{}', count: 2, errors: 0, msTotal: 4, msMax: 3,
      calls: new Map([[1, 2]]), first: now, last: now, compared: 0, differing: 0 });
    await Promise.all([a.apply([delta()]), b.apply([delta()])]);
    expect(await a.list()).toEqual([expect.objectContaining({ count: 4, msTotal: 8 })]);
  });

  it('past maxPending distinct questions between flushes, requests are counted as dropped', async () => {
    const r = new ShapeRecorder(new ClientShapeStore(db.kysely), { schemas: m.schemas, limitDefault: 100, perClient: 5, retentionMs: DAY, flushEveryMs: 0, maxPending: 2 });
    for (let i = 0; i < 5; i++) r.note(seen('user:x~none', `limit=${i}`));
    expect(r.dropped).toBe(3);
  });
});
