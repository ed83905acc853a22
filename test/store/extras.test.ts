import vm from 'node:vm';
import v8 from 'node:v8';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { existsSync, statSync } from 'node:fs';
import { sql } from 'kysely';
import { openChangeBus, type ChangeBus } from '../../src/store/changes.js';
import { CompareStore } from '../../src/store/compare.js';
import { SecretBox } from '../../src/store/crypto.js';
import { openDb, pingDb, type Db } from '../../src/store/db.js';
import { verifyEncryptionKey, WrongEncryptionKeyError } from '../../src/store/key-check.js';
import { migrate } from '../../src/store/migrations.js';
import { DATA_KEPT_BYTES, OverlayStore, RenderDataStore } from '../../src/store/render-extras.js';
import { Spool } from '../../src/store/spool.js';
import { UsageLedger } from '../../src/store/usage.js';
import { databases } from '../helpers/databases.js';

/** The smaller stores (render data, overlays, usage, comparisons, the key check), the spool and SQLite's bus. */
const [{ url }] = (await databases()) as unknown as [{ url: string }];
let db: Db;
let now = 2_100_000_000_000;
const clock = () => now;
let bus: ChangeBus;
beforeAll(async () => {
  db = await openDb(url);
  await migrate(db.kysely);
  bus = await openChangeBus(db, url, 0);
});
afterAll(async () => {
  await bus.close();
  await db.close();
});
const other = (file: string) => url.replace(/store\.db$/, file);

describe('SQLite change bus', () => {
  it('delivers a publish to every listener of its topic, with * by default', async () => {
    const got: string[] = [];
    bus.on('topic-a', (k) => got.push(`1:${k}`));
    bus.on('topic-a', (k) => got.push(`2:${k}`));
    bus.on('topic-b', (k) => got.push(`b:${k}`));
    await bus.publish('topic-a', 'id-1');
    await bus.publish('topic-a');
    expect(got).toEqual(['1:id-1', '2:id-1', '1:*', '2:*']);
  });

  it('signals a resync once another connection committed, and not otherwise', async () => {
    const bus = await openChangeBus(db, url, 0);
    let resyncs = 0;
    bus.onResync(() => { resyncs++; });
    await bus.sync();
    expect(resyncs).toBe(0);
    await db.kysely.insertInto('gateway_meta').values({ key: 'own-write', value: 'x' }).execute();
    await bus.sync();
    expect(resyncs).toBe(0); // this connection's own commit
    const second = await openDb(url);
    try {
      await second.kysely.insertInto('gateway_meta').values({ key: 'their-write', value: 'y' }).execute();
    } finally {
      await second.close();
    }
    await bus.sync();
    expect(resyncs).toBe(1);
    await bus.sync();
    expect(resyncs).toBe(1);
  });

  it('polls by itself every pollMs until closed', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const polling = await openChangeBus(db, url, 250);
      let resyncs = 0;
      polling.onResync(() => { resyncs++; });
      const theirWrite = async (key: string) => {
        const second = await openDb(url);
        try { await second.kysely.insertInto('gateway_meta').values({ key, value: 'z' }).execute(); } finally { await second.close(); }
      };
      await theirWrite(`poll-a-${now}`);
      vi.advanceTimersByTime(249);
      await pingDb(db);
      expect(resyncs).toBe(0);
      vi.advanceTimersByTime(1);
      await vi.waitFor(() => expect(resyncs).toBe(1));
      await polling.close();
      await theirWrite(`poll-b-${now}`);
      vi.advanceTimersByTime(1_000);
      await pingDb(db);
      expect(resyncs).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('pingDb answers on an open store and fails on a closed one', async () => {
    const file = other('closing.db');
    const d = await openDb(file);
    await expect(pingDb(d)).resolves.toBeUndefined();
    await d.close();
    await expect(pingDb(d)).rejects.toThrow();
  });

  it('openDb creates the directories of a new file', async () => {
    const deep = other('a/b/c/deep.db');
    const d = await openDb(`sqlite://${deep}`);
    try {
      expect(d.dialect).toBe('sqlite');
      await pingDb(d);
      expect(existsSync(deep)).toBe(true);
    } finally {
      await d.close();
    }
    const mem = await openDb('file::memory:');
    try {
      await pingDb(mem);
    } finally {
      await mem.close();
    }
  });
});

describe('openDb', () => {
  it('takes a postgres:// or postgresql:// URL for PostgreSQL (connecting only when asked)', async () => {
    for (const u of ['postgres://nobody@127.0.0.1:1/none', 'postgresql://nobody@127.0.0.1:1/none']) {
      const d = await openDb(u);
      expect(d.dialect).toBe('postgres');
      await d.close();
    }
  });

  it('takes a path, sqlite:, sqlite:// or file: for SQLite, only as a prefix', async () => {
    for (const [given, file] of [
      [other('plain.db'), other('plain.db')],
      [`sqlite:${other('s1.db')}`, other('s1.db')],
      [`sqlite://${other('s2.db')}`, other('s2.db')],
      [`file:${other('f.db')}`, other('f.db')],
      [other('sqlite:in-the-middle/x.db'), other('sqlite:in-the-middle/x.db')],
      [other('file:in-the-middle/x.db'), other('file:in-the-middle/x.db')],
      [other('postgres://not-a-url/x.db'), other('postgres:/not-a-url/x.db')],
    ] as const) {
      const d = await openDb(given);
      try {
        expect(d.dialect).toBe('sqlite');
        await pingDb(d);
        await sql`create table t (x integer)`.execute(d.kysely);
        expect(existsSync(file)).toBe(true);
      } finally {
        await d.close();
      }
    }
  });

  it('opens SQLite in WAL mode, waiting on locks, with foreign keys enforced', async () => {
    const d = await openDb(other('pragmas.db'));
    try {
      const one = async (q: string) => Object.values((await sql.raw<Record<string, unknown>>(q).execute(d.kysely)).rows[0]!)[0];
      expect(await one('pragma journal_mode')).toBe('wal');
      expect(Number(await one('pragma busy_timeout'))).toBe(5000);
      expect(Number(await one('pragma foreign_keys'))).toBe(1);
    } finally {
      await d.close();
    }
  });

  it('answers every one of many distinct statements right (its statement memory starts afresh)', async () => {
    const d = await openDb(other('many-statements.db'));
    try {
      for (let i = 0; i < 1_050; i++) {
        const r = await sql.raw<{ v: number }>(`select ${i} as v`).execute(d.kysely);
        expect(r.rows).toEqual([{ v: i }]);
      }
      expect((await sql.raw<{ v: number }>('select 7 as v').execute(d.kysely)).rows).toEqual([{ v: 7 }]);
    } finally {
      await d.close();
    }
  });
});

describe('RenderDataStore', () => {
  it('put stores the data (or {}), title, author and time; a second put replaces only the data', async () => {
    const s = new RenderDataStore(db.kysely, clock, bus);
    const heard: string[] = [];
    bus.on('render_data', (k) => heard.push(k));
    await s.put('rd1', { a: 1 }, 'Title', 'user-1');
    await s.put('rd2', undefined, null, null);
    now += 5;
    await s.put('rd1', { a: 2 }, 'Other', 'user-2');
    const rows = await db.kysely.selectFrom('render_data').selectAll().where('v1_id', 'in', ['rd1', 'rd2']).orderBy('v1_id').execute();
    expect(rows.map((r) => ({ ...r, data_chars: Number(r.data_chars) }))).toEqual([
      { v1_id: 'rd1', data: '{"a":2}', data_chars: 7, title: 'Title', created_by: 'user-1', created_at: now - 5 },
      { v1_id: 'rd2', data: '{}', data_chars: 2, title: null, created_by: null, created_at: now - 5 },
    ]);
    expect(heard).toEqual(['rd1', 'rd2', 'rd1']);
    expect(await s.many(['rd1', 'rd2', 'rd-none'])).toEqual(new Map<string, unknown>([['rd1', { a: 2 }], ['rd2', {}]]));
  });

  it('weighs data without reading it: its characters, also for a row written before they were kept (a read weighs before it reads)', async () => {
    const s = new RenderDataStore(db.kysely, clock, bus);
    const text = { t: 'ça – 🎬'.repeat(100) };
    await s.put('rw1', text, null, null);
    await s.claim('rw2', { a: 1 }, null, null);
    await s.put('rw3', { b: 'x'.repeat(50) }, null, null);
    // a row an instance before migration 0019 wrote: no weight kept, weighed by its text (characters, not bytes)
    await db.kysely.updateTable('render_data').set({ data_chars: null }).where('v1_id', '=', 'rw3').execute();
    const sizes = await new RenderDataStore(db.kysely, clock, bus).sizes(['rw1', 'rw2', 'rw3', 'rw-none']);
    expect(sizes).toEqual(new Map([['rw1', JSON.stringify(text).length], ['rw2', 7], ['rw3', JSON.stringify({ b: 'x'.repeat(50) }).length]]));
    // no more than the bytes the data's JSON is: what an answer writes
    for (const [id, v] of [['rw1', text], ['rw2', { a: 1 }]] as const) expect(sizes.get(id)).toBeLessThanOrEqual(Buffer.byteLength(JSON.stringify(v)));
    // read back as it was weighed (and a kept one weighed from memory)
    expect((await s.many(['rw1'])).get('rw1')).toEqual(text);
    expect((await s.sizes(['rw1'])).get('rw1')).toBe(JSON.stringify(text).length);
  });

  it('keeps at most DATA_KEPT_BYTES of data in memory, whatever the number of renders (attack re-check F4: 20 000 entries of any size)', async () => {
    const s = new RenderDataStore(db.kysely, clock, bus);
    const big = { text: 'x'.repeat(1_048_576) };
    const ids = Array.from({ length: 48 }, (_, i) => `rb${i}`);
    for (const id of ids) await s.put(id, big, null, null);
    for (let i = 0; i < ids.length; i += 8) expect((await s.many(ids.slice(i, i + 8))).size).toBe(8); // pages of 8: kept
    expect(s.keptBytes()).toBeGreaterThan(DATA_KEPT_BYTES / 2);
    expect(s.keptBytes()).toBeLessThanOrEqual(DATA_KEPT_BYTES);
    // the latest pages are the ones kept: read again without the store
    await db.kysely.deleteFrom('render_data').where('v1_id', 'in', ids).execute();
    expect((await s.many(ids.slice(-8))).size).toBe(8);
    expect((await s.many(ids.slice(0, 8))).size).toBe(0);
  });

  it('claim stores data only for the first request', async () => {
    const s = new RenderDataStore(db.kysely, clock, bus);
    const heard: string[] = [];
    bus.on('render_data', (k) => heard.push(k));
    expect(await s.claim('rc1', { who: 'first' }, 't', 'u1')).toBe(true);
    expect(heard).toEqual(['rc1']);
    expect(await s.claim('rc1', { who: 'second' }, 't', 'u2')).toBe(false);
    expect(await s.claim('rc2', null, null, null)).toBe(true);
    expect(await s.many(['rc1', 'rc2'])).toEqual(new Map<string, unknown>([['rc1', { who: 'first' }], ['rc2', {}]]));
    expect(await s.claimed([])).toEqual(new Set());
    expect(await s.claimed(['rc1', 'rc2', 'rc3'])).toEqual(new Set(['rc1', 'rc2']));
  });

  it('many keeps small look-ups (misses too) until a write or the bus drops them; large scans are not kept', async () => {
    const s = new RenderDataStore(db.kysely, clock, bus);
    await s.put('rk1', { v: 1 }, null, null);
    expect(await s.many(['rk1', 'rk-miss'])).toEqual(new Map([['rk1', { v: 1 }]]));
    // behind its back
    await db.kysely.updateTable('render_data').set({ data: '{"v":2}' }).where('v1_id', '=', 'rk1').execute();
    await db.kysely.insertInto('render_data').values({ v1_id: 'rk-miss', data: '{"late":true}', title: null, created_by: null, created_at: now }).execute();
    expect(await s.many(['rk1', 'rk-miss'])).toEqual(new Map([['rk1', { v: 1 }]])); // both kept
    await bus.publish('render_data', 'rk1');
    expect(await s.many(['rk1', 'rk-miss'])).toEqual(new Map<string, unknown>([['rk1', { v: 2 }]]));
    await bus.publish('render_data', '*');
    expect(await s.many(['rk1', 'rk-miss'])).toEqual(new Map<string, unknown>([['rk1', { v: 2 }], ['rk-miss', { late: true }]]));
    // a write through this store drops its own copy
    await db.kysely.updateTable('render_data').set({ data: '{"v":3}' }).where('v1_id', '=', 'rk1').execute();
    await s.claim('rk1', { ignored: true }, null, null);
    expect((await s.many(['rk1'])).get('rk1')).toEqual({ v: 3 });
    await db.kysely.updateTable('render_data').set({ data: '{"v":4}' }).where('v1_id', '=', 'rk1').execute();
    await s.put('rk-miss', { late: false }, null, null);
    expect((await s.many(['rk1'])).get('rk1')).toEqual({ v: 3 }); // put of another id keeps rk1
    // a resync drops everything
    const second = await openDb(url);
    try { await second.kysely.updateTable('render_data').set({ data: '{"v":5}' }).where('v1_id', '=', 'rk1').execute(); } finally { await second.close(); }
    await bus.sync();
    expect((await s.many(['rk1'])).get('rk1')).toEqual({ v: 5 });
    // a scan of more than 200 ids is read but not kept
    const ids = ['rk1', ...Array.from({ length: 600 }, (_, i) => `scan-${i}`)];
    await db.kysely.insertInto('render_data').values({ v1_id: 'scan-599', data: '{"last":1}', title: null, created_by: null, created_at: now }).execute();
    const scanned = await s.many(ids);
    expect(scanned).toEqual(new Map<string, unknown>([['rk1', { v: 5 }], ['scan-599', { last: 1 }]]));
    await db.kysely.updateTable('render_data').set({ data: '{"last":2}' }).where('v1_id', '=', 'scan-599').execute();
    expect((await s.many(['scan-599'])).get('scan-599')).toEqual({ last: 2 });
    // up to 200 ids are kept, 201 are not
    await db.kysely.insertInto('render_data').values([{ v1_id: 'edge-a', data: '{"e":1}', title: null, created_by: null, created_at: now },
      { v1_id: 'edge-b', data: '{"e":1}', title: null, created_by: null, created_at: now }]).execute();
    const ask = (first: string, n: number) => Array.from({ length: n }, (_, i) => (i === 0 ? first : `${first}-pad-${i}`));
    expect((await s.many(ask('edge-a', 200))).get('edge-a')).toEqual({ e: 1 });
    expect((await s.many(ask('edge-b', 201))).get('edge-b')).toEqual({ e: 1 });
    await db.kysely.updateTable('render_data').set({ data: '{"e":2}' }).where('v1_id', 'in', ['edge-a', 'edge-b']).execute();
    expect(await s.many(['edge-a', 'edge-b'])).toEqual(new Map([['edge-a', { e: 1 }], ['edge-b', { e: 2 }]]));
  });
});

describe('OverlayStore', () => {
  it('sets one row per field, replacing values, and answers them per render', async () => {
    const s = new OverlayStore(db.kysely, clock, bus);
    const heard: string[] = [];
    bus.on('overlays', (k) => heard.push(k));
    await s.set('project', 'p1', { title: 'A', tags: ['x'] }, 'u1');
    now += 3;
    await s.set('project', 'p1', { title: 'B' }, 'u2');
    await s.set('project', 'p2', { n: null }, null);
    await s.set('render', 'p1', { title: 'R' }, null);
    expect(heard).toEqual(['project:p1', 'project:p1', 'project:p2', 'render:p1']); // (each change names its items)
    expect(await s.ofType('project')).toEqual(new Map<string, unknown>([['p1', { title: 'B', tags: ['x'] }], ['p2', { n: null }]]));
    expect(await s.ofType('render')).toEqual(new Map([['p1', { title: 'R' }]]));
    expect(await s.ofType('none')).toEqual(new Map());
    const rows = await db.kysely.selectFrom('overlays').selectAll().where('type', '=', 'project').where('v1_id', '=', 'p1').orderBy('field').execute();
    expect(rows).toEqual([
      { type: 'project', v1_id: 'p1', field: 'tags', value: '["x"]', updated_by: 'u1', updated_at: now - 3 },
      { type: 'project', v1_id: 'p1', field: 'title', value: '"B"', updated_by: 'u2', updated_at: now },
    ]);
  });

  it('keeps each type in memory until a write, the bus or a resync drops it', async () => {
    const s = new OverlayStore(db.kysely, clock, bus);
    await s.set('k1', 'a', { f: 1 }, null);
    await s.set('k2', 'a', { f: 1 }, null);
    const first = s.ofType('k1');
    expect(s.ofType('k1')).toBe(first); // one load for concurrent readers
    expect(await first).toEqual(new Map([['a', { f: 1 }]]));
    await s.ofType('k2');
    await db.kysely.updateTable('overlays').set({ value: '2' }).where('type', 'in', ['k1', 'k2']).execute();
    expect(await s.ofType('k1')).toEqual(new Map([['a', { f: 1 }]]));
    await bus.publish('overlays', 'k1');
    expect(await s.ofType('k1')).toEqual(new Map([['a', { f: 2 }]]));
    expect(await s.ofType('k2')).toEqual(new Map([['a', { f: 1 }]]));
    await bus.publish('overlays', '*');
    expect(await s.ofType('k2')).toEqual(new Map([['a', { f: 2 }]]));
    await db.kysely.updateTable('overlays').set({ value: '3' }).where('type', 'in', ['k1', 'k2']).execute();
    const second = await openDb(url);
    try { await second.kysely.insertInto('gateway_meta').values({ key: `ov-${now}`, value: '' }).execute(); } finally { await second.close(); }
    await bus.sync();
    expect(await s.ofType('k1')).toEqual(new Map([['a', { f: 3 }]]));
  });

  it('a failed load is not kept', async () => {
    const broken = await openDb(other('broken.db'));
    const s = new OverlayStore(broken.kysely, clock); // no tables: the load fails
    await expect(s.ofType('t')).rejects.toThrow();
    await migrate(broken.kysely);
    try {
      expect(await s.ofType('t')).toEqual(new Map());
    } finally {
      await broken.close();
    }
  });
});

describe('UsageLedger', () => {
  it('counts calls per route and principal, first and last seen, across flushes', async () => {
    const u = new UsageLedger(db.kysely, clock, 0);
    const t = now;
    u.note('GET /renders', 'user-1', 'jwt');
    now += 1_000;
    u.note('GET /renders', 'user-1', 'jwt');
    u.note('GET /renders', 'tok-1', 'static');
    u.note('GET /projects', 'user-1', 'jwt');
    await u.flush();
    now += 1_000;
    u.note('GET /renders', 'user-1', 'jwt');
    expect(await u.list()).toEqual([
      { route: 'GET /projects', principal: 'user-1', principal_kind: 'jwt', count: 1, first_seen: new Date(t + 1_000).toISOString(), last_seen: new Date(t + 1_000).toISOString() },
      { route: 'GET /renders', principal: 'user-1', principal_kind: 'jwt', count: 3, first_seen: new Date(t).toISOString(), last_seen: new Date(t + 2_000).toISOString() },
      { route: 'GET /renders', principal: 'tok-1', principal_kind: 'static', count: 1, first_seen: new Date(t + 1_000).toISOString(), last_seen: new Date(t + 1_000).toISOString() },
    ]);
    // a flush sends each note once
    await u.flush();
    expect((await u.list()).find((r) => r.principal === 'user-1' && r.route === 'GET /renders')!.count).toBe(3);
    u.note('GET /renders', 'tok-1', 'static');
    await u.close();
    expect((await new UsageLedger(db.kysely, clock, 0).list()).find((r) => r.principal === 'tok-1')!.count).toBe(2);
  });
});

describe('UsageLedger timer', () => {
  it('flushes by itself every interval, and no more once closed', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const count = async (route: string) => Number((await db.kysely.selectFrom('usage').select('count').where('route', '=', route).executeTakeFirst())?.count ?? 0);
      const u = new UsageLedger(db.kysely, clock, 1_000);
      u.note('GET /timer', 'p', 'jwt');
      vi.advanceTimersByTime(999);
      expect(await count('GET /timer')).toBe(0); // not yet
      vi.advanceTimersByTime(1);
      await vi.waitFor(async () => expect(await count('GET /timer')).toBe(1));
      await u.close();
      u.note('GET /timer', 'p', 'jwt');
      vi.advanceTimersByTime(5_000);
      expect(await count('GET /timer')).toBe(1);
      const quiet = new UsageLedger(db.kysely, clock, 0);
      quiet.note('GET /quiet', 'p', 'jwt');
      vi.advanceTimersByTime(60_000);
      expect(await count('GET /quiet')).toBe(0);
      await quiet.close();
      expect(await count('GET /quiet')).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('CompareStore', () => {
  const diff = (path: string, kind = 'changed', legacy: unknown = 1, translated: unknown = 2) => ({ path, kind, legacy, translated }) as never;

  it('counts routes, differing answers, fields (once per answer) and noise, with at most five samples', async () => {
    const c = new CompareStore(db.kysely, clock);
    await c.clear();
    await c.record({ route: 'GET /a', differences: [diff('x'), diff('x'), ({ path: 'n', kind: 'missing', legacy: undefined, translated: 'v' }) as never], noise: new Set(['n']), legacyMs: 10, translatedMs: 30, request: 'req-1' });
    now += 1;
    await c.record({ route: 'GET /a', differences: [diff('n', 'missing')], noise: new Set(['n']), legacyMs: 20, translatedMs: 10, request: 'req-2' });
    await c.record({ route: 'GET /b', differences: [], noise: new Set(), legacyMs: 5, translatedMs: 7, request: 'req-3' });
    for (let i = 0; i < 6; i++) {
      now += 1;
      await c.record({ route: 'GET /c', differences: [diff('y', 'changed', 'x'.repeat(2_100), i)], noise: new Set(), legacyMs: 1, translatedMs: 1, request: `c-${i}` });
    }
    const r = await c.report();
    expect(r.routes.map((x) => x.route)).toEqual(['GET /a', 'GET /b', 'GET /c']);
    const [a, b, cc] = r.routes as [typeof r.routes[0], typeof r.routes[0], typeof r.routes[0]];
    expect(a).toMatchObject({ total: 2, differing: 1, diffRate: 0.5, legacyMsAvg: 15, translatedMsAvg: 20 });
    expect(a.fields).toEqual([
      { path: 'n', kind: 'missing', count: 2, noise: true, samples: [
        { legacy: null, translated: '"v"', request: 'req-1' },
        { legacy: '1', translated: '2', request: 'req-2' },
      ] },
      { path: 'x', kind: 'changed', count: 1, noise: false, samples: [{ legacy: '1', translated: '2', request: 'req-1' }] },
    ]);
    expect(b).toEqual({ route: 'GET /b', total: 1, differing: 0, diffRate: 0, legacyMsAvg: 5, translatedMsAvg: 7, fields: [] });
    expect(cc).toMatchObject({ total: 6, differing: 6 }); // every answer differed, counted on update too
    expect(cc.fields).toHaveLength(1);
    expect(cc.fields[0]!.count).toBe(6);
    expect(cc.fields[0]!.samples.map((s) => s.request)).toEqual(['c-0', 'c-1', 'c-2', 'c-3', 'c-4']);
    const long = cc.fields[0]!.samples[0]!.legacy!;
    expect(long).toBe(`"${'x'.repeat(1_999)}…`);
    await c.clear();
    expect(await c.report()).toEqual({ routes: [] });
  });

  it('clips a sample only past 2 000 characters; a route counted zero times has zero rates', async () => {
    const c = new CompareStore(db.kysely, clock);
    await c.clear();
    const exact = 'e'.repeat(1_998); // 2 000 characters as JSON
    await c.record({ route: 'GET /clip', differences: [diff('p', 'changed', exact, 'f'.repeat(1_999))], noise: new Set(), legacyMs: 1, translatedMs: 1, request: 'r' });
    await db.kysely.insertInto('compare_routes').values({ route: 'GET /zero', total: 0, differing: 0, legacy_ms_total: 0, translated_ms_total: 0 }).execute();
    const r = await c.report();
    expect(r.routes[0]!.fields[0]!.samples[0]).toEqual({ legacy: `"${exact}"`, translated: `"${'f'.repeat(1_999)}…`, request: 'r' });
    expect(r.routes[1]).toEqual({ route: 'GET /zero', total: 0, differing: 0, diffRate: 0, legacyMsAvg: 0, translatedMsAvg: 0, fields: [] });
    await c.clear();
  });
});

describe('key check', () => {
  const right = new SecretBox(Buffer.alloc(32, 4));
  const wrong = new SecretBox(Buffer.alloc(32, 5));

  it('an empty store: the check is sealed with the key given, which then passes and another fails', async () => {
    const d = await openDb(other('keys-empty.db'));
    try {
      await migrate(d.kysely);
      await verifyEncryptionKey(d.kysely, right);
      const row = await d.kysely.selectFrom('gateway_meta').select('value').where('key', '=', 'encryption_key_check').executeTakeFirstOrThrow();
      expect(right.open(row.value)).toBe('legacy-gateway key check');
      await verifyEncryptionKey(d.kysely, right);
      const err = (await verifyEncryptionKey(d.kysely, wrong).catch((e: unknown) => e)) as Error;
      expect(err).toBeInstanceOf(WrongEncryptionKeyError);
      expect(err.name).toBe('WrongEncryptionKeyError');
      expect(err.message).toBe('ENCRYPTION_KEY does not open the data in this store (DATABASE_URL): the key check sealed at first start does not open. '
        + 'Start with the key the store was written with; a new key would leave every stored v1 key unreadable.');
      // a check that opens to something else is wrong too
      await d.kysely.updateTable('gateway_meta').set({ value: right.seal('something else') }).where('key', '=', 'encryption_key_check').execute();
      await expect(verifyEncryptionKey(d.kysely, right)).rejects.toThrow(/the key check sealed at first start does not open/);
    } finally {
      await d.close();
    }
  });

  it('a store written before the check: a stored v1 key decides, and no check is sealed with a wrong key', async () => {
    const d = await openDb(other('keys-old.db'));
    try {
      await migrate(d.kysely);
      await d.kysely.insertInto('users').values({ id: 'u', email: 'a@x.io', email_lower: 'a@x.io', password_hash: null, first_name: null, last_name: null, role: 'r',
        v1_key_enc: right.seal('sk_1'), v1_user_id: 'v', status: 'active', created_at: 1, updated_at: null }).execute();
      await expect(verifyEncryptionKey(d.kysely, wrong)).rejects.toThrow(/: a stored v1 key does not open\./);
      expect(await d.kysely.selectFrom('gateway_meta').select('value').where('key', '=', 'encryption_key_check').executeTakeFirst()).toBeUndefined();
      await verifyEncryptionKey(d.kysely, right);
      await expect(verifyEncryptionKey(d.kysely, wrong)).rejects.toThrow(/the key check sealed at first start/);
    } finally {
      await d.close();
    }
  });
});

v8.setFlagsFromString('--expose-gc');

describe('Spool', () => {
  it('gives back every value written, in order, and removes its file', async () => {
    const s = await Spool.open();
    const values = [{ a: 1 }, 'two', 3, null, [4], { big: 'z'.repeat(100_000) }];
    for (let i = 0; i < 50; i++) for (const v of values) await s.write(v);
    const back: unknown[] = [];
    for await (const v of s.read()) back.push(v);
    expect(back).toHaveLength(300);
    expect(back.slice(0, 6)).toEqual(values);
    expect(back.slice(294)).toEqual(values);
    const { dir, file } = s as unknown as { dir: string; file: string };
    expect(existsSync(dir)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600); // readable by this user only
    await s.remove();
    expect(existsSync(dir)).toBe(false);
  });

  it('holds one value and a chunk while its reader waits, whatever the lines\' length (attack pass 10: 1 024 lines read ahead)', async () => {
    const s = await Spool.open();
    const MB = 1_048_576;
    const big = (i: number) => ({ i, text: `${i}`.padEnd(2 * MB, 'x') });
    for (let i = 0; i < 40; i++) await s.write(big(i));
    const gc = vm.runInNewContext('gc') as () => void;
    const held = () => {
      gc();
      gc();
      const m = process.memoryUsage();
      return m.heapUsed + m.external;
    };
    const before = held();
    const it = s.read()[Symbol.asyncIterator]();
    const first = await it.next();
    expect((first.value as { i: number }).i).toBe(0);
    await new Promise((r) => setTimeout(r, 200)); // (a read ahead would fill meanwhile)
    // 40 lines of 2 MB: the whole file (80 MB, 160 MB as strings) was held before; now about one line
    expect(held() - before).toBeLessThan(16 * MB);
    let n = 1;
    for (let v = await it.next(); !v.done; v = await it.next()) {
      expect((v.value as { i: number; text: string })).toEqual(big(n));
      n++;
    }
    expect(n).toBe(40);
    await s.remove();
  });

  it('an empty spool reads nothing', async () => {
    const s = await Spool.open();
    const back: unknown[] = [];
    for await (const v of s.read()) back.push(v);
    expect(back).toEqual([]);
    await s.remove();
  });
});
