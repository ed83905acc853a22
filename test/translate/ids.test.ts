import { describe, expect, it } from 'vitest';
import type { IdMapStore, IdPair } from '../../src/store/idmap.js';
import { derivedUuid, ID_TYPES, IdTranslator } from '../../src/translate/ids.js';

/** An in-memory IdMapStore: records every call, with a bus whose listeners the test fires by hand. */
class FakeStore {
  importedPairs: IdPair[] = [];
  remembered: IdPair[][] = [];
  lookups: { type: string; uuid: string }[] = [];
  manyLookups: string[][] = [];
  byUuid = new Map<string, string>();
  failRemember = false;
  failImported = false;
  listeners: Record<string, (() => void)[]> = {};
  resync: (() => void)[] = [];
  bus = {
    on: (topic: string, fn: () => void) => { (this.listeners[topic] ??= []).push(fn); },
    onResync: (fn: () => void) => { this.resync.push(fn); },
  };
  async imported(): Promise<IdPair[]> {
    if (this.failImported) throw new Error('store down');
    return this.importedPairs;
  }
  async remember(batch: readonly IdPair[]): Promise<void> {
    if (this.failRemember) throw new Error('write failed');
    this.remembered.push([...batch]);
  }
  async v1IdFor(type: string, uuid: string): Promise<string | undefined> {
    this.lookups.push({ type, uuid });
    return this.byUuid.get(`${type}:${uuid}`);
  }
  async v1IdsFor(uuids: readonly string[]): Promise<Map<string, string>> {
    this.manyLookups.push([...uuids]);
    return new Map(uuids.map((u) => [u, `v1-of-${u}`]));
  }
}
const make = (store = new FakeStore()) => ({ store, ids: new IdTranslator(store as unknown as IdMapStore) });
const tick = () => new Promise<void>((r) => setImmediate(r));
const IMPORTED = '11111111-2222-4333-8444-555555555555';

describe('ID_TYPES', () => {
  it('names the v1 prefix of each legacy type (an account is a team)', () => {
    expect(ID_TYPES).toEqual({ render: 'rend_', project: 'proj_', account: 'team_', template: 'tpl_', user: 'user_' });
  });
});

describe('IdTranslator.toLegacy', () => {
  it('answers the derived uuid, null for null, and queues each pair once', async () => {
    const { store, ids } = make();
    expect(ids.toLegacy('render', null)).toBeNull();
    expect(ids.toLegacy('render', 'rend_1')).toBe(derivedUuid('render', 'rend_1'));
    expect(ids.toLegacy('render', 'rend_1')).toBe(derivedUuid('render', 'rend_1'));
    expect(ids.toLegacy('project', 'proj_1')).toBe(derivedUuid('project', 'proj_1'));
    await ids.flush();
    expect(store.remembered).toEqual([
      [
        { type: 'render', uuid: derivedUuid('render', 'rend_1'), v1Id: 'rend_1', source: 'derived' },
        { type: 'project', uuid: derivedUuid('project', 'proj_1'), v1Id: 'proj_1', source: 'derived' },
      ],
    ]);
    // nothing new: a second flush writes nothing; the same id again is not queued again
    await ids.flush();
    expect(ids.toLegacy('render', 'rend_1')).toBe(derivedUuid('render', 'rend_1'));
    await ids.flush();
    expect(store.remembered).toHaveLength(1);
  });

  it('answers an imported uuid instead of the derived one, and queues nothing for it', async () => {
    const store = new FakeStore();
    store.importedPairs = [{ type: 'render', uuid: IMPORTED, v1Id: 'rend_9', source: 'imported' }];
    const { ids } = make(store);
    await ids.load();
    expect(ids.toLegacy('render', 'rend_9')).toBe(IMPORTED);
    expect(ids.derive('render', 'rend_9')).toBe(IMPORTED);
    // the type is part of the key: a project with the same v1 id is derived
    expect(ids.toLegacy('project', 'rend_9')).toBe(derivedUuid('project', 'rend_9'));
    ids.queue('render', 'rend_9', 'aaaaaaaa-0000-4000-8000-000000000000');
    await ids.flush();
    expect(store.remembered).toEqual([[{ type: 'project', uuid: derivedUuid('project', 'rend_9'), v1Id: 'rend_9', source: 'derived' }]]);
    // and it resolves back without asking the store
    expect(await ids.toV1('render', IMPORTED)).toBe('rend_9');
    expect(await ids.toV1('render', IMPORTED.toUpperCase())).toBe('rend_9');
    expect(store.lookups).toEqual([]);
  });

  it('resolves back every uuid it emitted without asking the store', async () => {
    const { store, ids } = make();
    const u = ids.toLegacy('template', 'tpl_7');
    expect(await ids.toV1('template', u)).toBe('tpl_7');
    expect(store.lookups).toEqual([]);
  });
});

describe('IdTranslator.derive and queue', () => {
  it('derive answers the same uuid as toLegacy without queueing anything', async () => {
    const { store, ids } = make();
    expect(ids.derive('account', 'team_1')).toBe(derivedUuid('account', 'team_1'));
    await ids.flush();
    expect(store.remembered).toEqual([]);
  });

  it('queue writes the pair the caller holds on the next flush', async () => {
    const { store, ids } = make();
    ids.queue('render', 'rend_5', 'the-uuid');
    await ids.flush();
    expect(store.remembered).toEqual([[{ type: 'render', uuid: 'the-uuid', v1Id: 'rend_5', source: 'derived' }]]);
  });
});

describe('IdTranslator.load', () => {
  it('replaces the imported pairs: one no longer imported falls back to the derived uuid', async () => {
    const store = new FakeStore();
    store.importedPairs = [{ type: 'user', uuid: IMPORTED, v1Id: 'user_1', source: 'imported' }];
    const { ids } = make(store);
    await ids.load();
    expect(ids.derive('user', 'user_1')).toBe(IMPORTED);
    store.importedPairs = [];
    await ids.load();
    expect(ids.derive('user', 'user_1')).toBe(derivedUuid('user', 'user_1'));
  });

  it('tells its listeners once the pairs are read again (bus, resync, or a direct load), not when a reload fails', async () => {
    const store = new FakeStore();
    const { ids } = make(store);
    const seen: string[] = [];
    ids.onReloaded(() => seen.push(ids.derive('project', 'proj_1')));
    store.importedPairs = [{ type: 'project', uuid: IMPORTED, v1Id: 'proj_1', source: 'imported' }];
    store.listeners.ids![0]!();
    await tick();
    expect(seen).toEqual([IMPORTED]); // told after the new pairs are in use
    store.importedPairs = [];
    store.resync[0]!();
    await tick();
    await ids.load();
    expect(seen).toEqual([IMPORTED, derivedUuid('project', 'proj_1'), derivedUuid('project', 'proj_1')]);
    store.failImported = true;
    store.resync[0]!();
    await tick();
    expect(seen).toHaveLength(3);
  });

  it('reloads when the bus says pairs were imported, or on a resync; a failing reload is swallowed', async () => {
    const store = new FakeStore();
    const { ids } = make(store);
    expect(store.listeners.ids).toHaveLength(1);
    expect(store.resync).toHaveLength(1);
    store.importedPairs = [{ type: 'project', uuid: IMPORTED, v1Id: 'proj_1', source: 'imported' }];
    store.listeners.ids![0]!();
    await tick();
    expect(ids.derive('project', 'proj_1')).toBe(IMPORTED);
    store.importedPairs = [{ type: 'project', uuid: IMPORTED, v1Id: 'proj_2', source: 'imported' }];
    store.resync[0]!();
    await tick();
    expect(ids.derive('project', 'proj_2')).toBe(IMPORTED);
    expect(ids.derive('project', 'proj_1')).toBe(derivedUuid('project', 'proj_1'));
    // a reload that fails keeps what was loaded and raises nothing
    store.failImported = true;
    store.listeners.ids![0]!();
    store.resync[0]!();
    await tick();
    expect(ids.derive('project', 'proj_2')).toBe(IMPORTED);
  });

  it('works without a bus', async () => {
    const store = new FakeStore();
    (store as { bus?: unknown }).bus = undefined;
    const { ids } = make(store);
    expect(ids.toLegacy('render', 'rend_1')).toBe(derivedUuid('render', 'rend_1'));
  });
});

describe('IdTranslator.toV1', () => {
  it('undefined for a malformed uuid, without asking the store', async () => {
    const { store, ids } = make();
    expect(await ids.toV1('render', 'not-a-uuid')).toBeUndefined();
    expect(store.lookups).toEqual([]);
  });

  it('asks the store (lower-cased) for a uuid it did not emit, and keeps a hit; a miss is asked again', async () => {
    const store = new FakeStore();
    const u = 'ABCDEF01-2345-4678-89AB-CDEF01234567';
    store.byUuid.set(`project:${u.toLowerCase()}`, 'proj_42');
    const { ids } = make(store);
    expect(await ids.toV1('project', u)).toBe('proj_42');
    expect(await ids.toV1('project', u)).toBe('proj_42');
    expect(store.lookups).toEqual([{ type: 'project', uuid: u.toLowerCase() }]);
    // the type is part of the key
    expect(await ids.toV1('render', u)).toBeUndefined();
    expect(await ids.toV1('render', u)).toBeUndefined();
    expect(store.lookups).toHaveLength(3);
  });
});

describe('IdTranslator.resolveMany and flush', () => {
  it('writes what is pending before resolving many uuids', async () => {
    const { store, ids } = make();
    const u = ids.toLegacy('render', 'rend_3');
    const got = await ids.resolveMany([u]);
    expect(store.remembered).toEqual([[{ type: 'render', uuid: u, v1Id: 'rend_3', source: 'derived' }]]);
    expect(store.manyLookups).toEqual([[u]]);
    expect(got.get(u)).toBe(`v1-of-${u}`);
  });

  it('a failed write forgets the batch so the pairs are queued again by the next request', async () => {
    const store = new FakeStore();
    const { ids } = make(store);
    const u = ids.toLegacy('render', 'rend_8');
    store.failRemember = true;
    await expect(ids.flush()).rejects.toThrow('write failed');
    store.failRemember = false;
    await ids.flush(); // the failed batch is not kept pending
    expect(store.remembered).toEqual([]);
    expect(ids.toLegacy('render', 'rend_8')).toBe(u);
    await ids.flush();
    expect(store.remembered).toEqual([[{ type: 'render', uuid: u, v1Id: 'rend_8', source: 'derived' }]]);
  });
});
