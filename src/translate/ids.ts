import { LRUCache } from 'lru-cache';
import { isUuid, uuidV5 } from '../lib/uuid.js';
import type { IdMapStore, IdPair } from '../store/idmap.js';

/** Legacy resource types that carry ids, with their v1 prefix. An account is a v1 team. */
export const ID_TYPES = { render: 'rend_', project: 'proj_', account: 'team_', template: 'tpl_', user: 'user_' } as const;
export type IdType = keyof typeof ID_TYPES;

const ROOT_NAMESPACE = '6f1d7c1e-3b0a-5b57-9c1e-0d6c2b7f4a10';
const NAMESPACES = Object.fromEntries(Object.keys(ID_TYPES).map((t) => [t, uuidV5(`legacy-gateway:${t}`, ROOT_NAMESPACE)])) as Record<IdType, string>;

/** The uuid derived for a v1 id, before any imported pair is considered (pure). */
export const derivedUuid = (type: IdType, v1Id: string) => uuidV5(v1Id, NAMESPACES[type]);
/** The namespace a type's derived uuids are made in (the migration guide's snippets derive them too). */
export const idNamespace = (type: IdType): string => NAMESPACES[type];

/**
 * uuid ↔ v1 id. Emitting: an imported legacy uuid if one exists, else the derived UUID v5. Every emitted
 * pair is persisted (batched per request) so any instance can resolve it back.
 */
export class IdTranslator {
  private importedByV1 = new Map<string, string>();
  private readonly resolved = new LRUCache<string, string>({ max: 50_000 });
  /** v1 id → derived uuid already computed and queued for the store (repeats cost no hashing). */
  private readonly known = new LRUCache<string, string>({ max: 50_000 });
  private pending: IdPair[] = [];
  private readonly lostListeners: ((pairs: readonly IdPair[]) => void)[] = [];
  private readonly reloadListeners: (() => void)[] = [];
  /** Moves whenever a load finds imported pairs other than those held (a listener may skip its work when it did not). */
  importedVersion = 0;

  constructor(private readonly store: IdMapStore) {
    // imported pairs win: when any process imports some, every instance reads them again
    store.bus?.on('ids', () => void this.load().catch(() => undefined));
    store.bus?.onResync(() => void this.load().catch(() => undefined));
  }

  /** (Re)reads the imported pairs; called at start-up and whenever any process imports pairs. */
  async load(): Promise<void> {
    const next = new Map<string, string>();
    // (a v1 id imported with two uuids — two gateway users bound to one v1 user — answers the first imported, whatever
    // order the store reads them in; each still resolves to it: the seventh held-out check of issue 39 found the one
    // answered changing from one load to the next)
    for (const p of await this.store.imported()) {
      if (!next.has(`${p.type}:${p.v1Id}`)) next.set(`${p.type}:${p.v1Id}`, p.uuid);
      this.resolved.set(`${p.type}:${p.uuid}`, p.v1Id);
    }
    if (!samePairs(this.importedByV1, next)) this.importedVersion++;
    this.importedByV1 = next;
    for (const l of this.reloadListeners) l();
  }

  /** Called whenever the imported pairs have been read again (uuids answered from now on may differ). */
  onReloaded(listener: () => void): void {
    this.reloadListeners.push(listener);
  }

  /**
   * The uuid a v1 id is answered with, without queueing the pair for the store: for records that are
   * read but may never be answered (a scan keeps offset + limit of many). Answer one with `toLegacy`.
   */
  derive(type: IdType, v1Id: string): string {
    const k = `${type}:${v1Id}`;
    return this.importedByV1.get(k) ?? this.known.get(k) ?? derivedUuid(type, v1Id);
  }

  /** The imported legacy uuid of a v1 id, if one was imported (it wins over the derived one). */
  imported(type: IdType, v1Id: string): string | undefined {
    return this.importedByV1.get(`${type}:${v1Id}`);
  }

  toLegacy(type: IdType, v1Id: string): string;
  toLegacy(type: IdType, v1Id: string | null): string | null;
  toLegacy(type: IdType, v1Id: string | null): string | null {
    if (v1Id === null) return null;
    const k = `${type}:${v1Id}`;
    const imported = this.importedByV1.get(k);
    if (imported) return imported;
    const known = this.known.get(k);
    if (known) return known;
    const uuid = derivedUuid(type, v1Id);
    this.known.set(k, uuid); // also keeps a pair from being written again
    this.pending.push({ type, uuid, v1Id, source: 'derived' });
    this.resolved.set(`${type}:${uuid}`, v1Id);
    return uuid;
  }

  /** Called with pairs a failed flush did not write (whoever remembers having given them gives them again). */
  onLost(listener: (pairs: readonly IdPair[]) => void): void {
    this.lostListeners.push(listener);
  }

  /**
   * Queues a derived pair the caller already holds (the render index: it knows its uuids and which pairs it has given),
   * without caching it here; an imported pair is in the store already.
   */
  queue(type: IdType, v1Id: string, uuid: string): void {
    if (this.importedByV1.has(`${type}:${v1Id}`)) return;
    this.pending.push({ type, uuid, v1Id, source: 'derived' });
  }

  /** The v1 id a legacy uuid names, or undefined (unknown, malformed or never emitted). */
  async toV1(type: IdType, uuid: string): Promise<string | undefined> {
    if (!isUuid(uuid)) return undefined;
    const lower = uuid.toLowerCase();
    const hit = this.resolved.get(`${type}:${lower}`);
    if (hit) return hit;
    const v1 = await this.store.v1IdFor(type, lower);
    if (v1) this.resolved.set(`${type}:${lower}`, v1);
    return v1;
  }

  /** The v1 ids many uuids name, of any type (after writing what is pending). */
  async resolveMany(uuids: readonly string[]): Promise<Map<string, string>> {
    await this.flush();
    return this.store.v1IdsFor(uuids);
  }

  /** Writes the pairs emitted since the last flush. */
  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    try {
      await this.store.remember(batch);
    } catch (e) {
      for (const p of batch) this.known.delete(`${p.type}:${p.v1Id}`);
      for (const l of this.lostListeners) l(batch);
      throw e;
    }
  }
}

function samePairs(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of b) if (a.get(k) !== v) return false;
  return true;
}
