import type { Logger } from 'pino';
import { RECORD_RESOURCES, RESOURCE_TRAITS } from '../../query/resources.js';
import { traitsOf } from '../../query/resources.js';
import type { Config } from '../../config/schema.js';
import type { Mappings } from '../../config/mappings.js';
import type { ChangeBus } from '../../store/changes.js';
import { applyRows, overlayChange, type OverlayStore } from '../../store/render-extras.js';
import type { IdTranslator } from '../../translate/ids.js';
import { recordBuilder, type Overlays, type RecordBuilder } from '../team/records.js';
import type { TeamReplica } from '../team/team-replica.js';

export interface RecordInputsDeps {
  readonly logger: Logger;
  readonly bus: ChangeBus;
  readonly ids: IdTranslator;
  readonly mappings: Mappings;
  readonly overlays: OverlayStore;
  readonly timeUnit: Config['V1_TIMESTAMP_UNIT'];
  readonly credits: Config['renderCredits'];
  /** The teams in memory (their records are rebuilt when what they are built with changes). */
  readonly teams: () => Iterable<TeamReplica>;
}

/**
 * What every legacy record of the replica is built with besides v1's data: the overlays (read again whenever they
 * change) and the imported id pairs (the translator's). Teams in memory rebuild their records when either changes;
 * `version` tells a team being read from the store meanwhile to rebuild its own.
 */
export class RecordInputs {
  readonly builder: RecordBuilder;
  /** Resolves once the overlays changed so far are in use (a read waits for them). */
  ready: Promise<void>;
  /** False while overlays are being read again. */
  settled = false;
  private overlays: Overlays = {};
  /** Bumped when new overlays are in use. */
  private overlaysVersion = 0;
  /** Bumped when imported id pairs are read again. */
  private idsVersion = 0;
  /** What changed since the last read: every overlay (`all`), or the items of a type named by their changes. */
  private pending: { all: boolean; ids: Map<string, Set<string>> } = { all: true, ids: new Map() };
  /** The reads of changed overlays, one after another (each applies what changed before it started). */
  private chain: Promise<void> = Promise.resolve();
  private queued = false;

  constructor(private readonly deps: RecordInputsDeps) {
    this.builder = recordBuilder({ ids: deps.ids, mappings: deps.mappings, timeUnit: deps.timeUnit }, () => this.overlays, deps.credits);
    this.ready = this.reloadSoon();
  }

  /**
   * A read of what changed after this turn of the event loop: the changes heard meanwhile are read once, one read after
   * another. A change that names its items reads those items only (a write by query of 40 000 items, in chunks of
   * 100, read every overlay back after each chunk, and every reader waited: attack pass 15); one that does not, or a
   * resync, reads them all. Reads wait for it (`settled`, `ready`).
   */
  private reloadSoon(): Promise<void> {
    this.settled = false;
    if (this.queued) return this.ready;
    this.queued = true;
    this.chain = this.chain
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(() => {
        this.queued = false;
        const take = this.pending;
        this.pending = { all: false, ids: new Map() };
        return this.apply(take);
      })
      .finally(() => { if (!this.queued) this.settled = true; });
    return this.chain;
  }

  /** Follows the overlays' and ids' changes (heard on the bus, or from the translator). */
  listen(): void {
    this.deps.bus.on('overlays', (key) => {
      const change = overlayChange(key);
      if (change.type === '*' || !change.ids) this.pending.all = true;
      else {
        const ids = this.pending.ids.get(change.type) ?? new Set<string>();
        for (const id of change.ids) ids.add(id);
        this.pending.ids.set(change.type, ids);
      }
      this.ready = this.reloadSoon();
    });
    // a lost change bus may have missed another instance's overlays (the overlay store dropped its copy)
    this.deps.bus.onResync(() => { this.pending.all = true; this.ready = this.reloadSoon(); });
    // imported id pairs change uuids: the records are rebuilt whenever the translator has read them again (an import
    // heard on the bus, or a resync: another process's import reaches SQLite instances only so); a team being loaded
    // meanwhile rebuilds its own (version)
    let pairs = this.deps.ids.importedVersion;
    this.deps.ids.onReloaded(() => {
      if (this.deps.ids.importedVersion === pairs) return; // the same pairs read again (a resync): the records stand
      pairs = this.deps.ids.importedVersion;
      this.idsVersion++;
      for (const t of this.deps.teams()) t.invalidateRecords();
    });
    // pairs a failed write lost are given again (the replica remembers which it gave)
    this.deps.ids.onLost((pairs) => { for (const p of pairs) for (const t of this.deps.teams()) t.forgetPaired(p.type, p.v1Id); });
  }

  /** Moves whenever the records' inputs change. */
  get version(): string {
    return `${this.overlaysVersion}:${this.idsVersion}`;
  }

  /**
   * Reads what changed and puts it in use: every overlay, or the items named; a failed read keeps the last good set
   * (logged) and is tried again with the next change (what it was to read is read then).
   */
  private async apply(take: { all: boolean; ids: Map<string, Set<string>> }): Promise<void> {
    try {
      const first = this.overlaysVersion === 0;
      let next: Overlays;
      let changed: Map<string, Set<string>>;
      if (take.all) {
        const loaded = await Promise.all(TYPES.map(async (t) => [t, await this.deps.overlays.ofType(t)] as const));
        changed = changedIds(this.overlays, loaded);
        next = Object.fromEntries(loaded);
      } else {
        const patched: Record<string, ReadonlyMap<string, Record<string, unknown>>> = { ...this.overlays };
        next = patched;
        changed = new Map();
        for (const [type, ids] of take.ids) {
          const rows = await this.deps.overlays.ofIds(type, [...ids]);
          const held = this.overlays[type] ?? new Map<string, Record<string, unknown>>();
          const before = new Map([...ids].flatMap((id) => (held.has(id) ? [[id, held.get(id) as Record<string, unknown>] as const] : [])));
          const differ = changedIds({ [type]: before }, [[type, rows]]);
          if (!differ.has(type)) continue;
          changed.set(type, differ.get(type) as Set<string>);
          patched[type] = applyRows(new Map(held), [...ids], rows);
        }
      }
      // the same overlays read again (a resync): the records built with them stand
      if (!first && changed.size === 0) return;
      this.overlays = next;
      this.overlaysVersion++;
      // only the renders whose overlays changed are flagged again (their uuids stand); a team is rebuilt when a render
      // of its own changed, or any project or account overlay did
      const renders = changed.get('render') ?? new Set<string>();
      const others = [...changed.keys()].some((t) => !traitsOf(t).rows);
      for (const t of this.deps.teams()) {
        if (first) t.invalidateRecords();
        else t.overlaysChanged(renders, others || take.all);
      }
    } catch (e) {
      if (take.all) this.pending.all = true;
      else {
        for (const [type, ids] of take.ids) {
          const again = this.pending.ids.get(type) ?? new Set<string>();
          for (const id of ids) again.add(id);
          this.pending.ids.set(type, again);
        }
      }
      this.deps.logger.warn({ err: e }, 'render index: could not read the overlays (the last ones read stay in use)');
    }
  }
}

/** The types overlays are kept for (`RESOURCE_TRAITS[…].overlays`). */
const TYPES: readonly string[] = RECORD_RESOURCES.filter((r) => RESOURCE_TRAITS[r].overlays);

type OverlayEntries = Iterable<readonly [string, ReadonlyMap<string, Record<string, unknown>>]>;

/** By type, the ids whose overlays differ between those held and those read (an id in either, its fields in any order). */
function changedIds(held: Overlays, loaded: OverlayEntries): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const text = (o: Record<string, unknown> | undefined) => (o ? JSON.stringify(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1))) : '');
  for (const [type, now] of loaded) {
    const before = held[type] ?? new Map<string, Record<string, unknown>>();
    const ids = new Set<string>();
    // (an item's values are the same object when it did not change: only the others are compared as text)
    for (const id of new Set([...before.keys(), ...now.keys()])) {
      const a = before.get(id);
      const b = now.get(id);
      if (a !== b && text(a) !== text(b)) ids.add(id);
    }
    if (ids.size > 0) out.set(type, ids);
  }
  return out;
}
