import type { Logger } from 'pino';
import type { Config } from '../../config/schema.js';
import type { Mappings } from '../../config/mappings.js';
import type { ChangeBus } from '../../store/changes.js';
import type { OverlayStore } from '../../store/render-extras.js';
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
  /** Resolves once the overlays being read are in use (a read waits for them). */
  ready: Promise<void>;
  /** False while overlays are being read again. */
  settled = false;
  private overlays: Overlays = {};
  private seq = 0;
  /** Bumped when new overlays are in use. */
  private overlaysVersion = 0;
  /** Bumped when imported id pairs are read again. */
  private idsVersion = 0;

  constructor(private readonly deps: RecordInputsDeps) {
    this.builder = recordBuilder({ ids: deps.ids, mappings: deps.mappings, timeUnit: deps.timeUnit }, () => this.overlays, deps.credits);
    this.ready = this.reload();
  }

  private soon: Promise<void> | undefined;

  /**
   * A reload after this turn of the event loop: the changes heard meanwhile are read once (a write of 2 000 items
   * published 2 000 changes, each read back and applied: attack pass 14, H1). Reads wait for it (`settled`, `ready`).
   */
  private reloadSoon(): Promise<void> {
    // (a reload under way is outdated now: it neither applies what it read nor says the inputs are settled)
    this.seq++;
    this.settled = false;
    this.soon ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.soon = undefined;
      return this.reload();
    });
    return this.soon;
  }

  /** Follows the overlays' and ids' changes (heard on the bus, or from the translator). */
  listen(): void {
    this.deps.bus.on('overlays', () => { this.ready = this.reloadSoon(); });
    // a lost change bus may have missed another instance's overlays (the overlay store dropped its copy)
    this.deps.bus.onResync(() => { this.ready = this.reloadSoon(); });
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
   * Reads the overlays every record is built with; only the newest of overlapping reloads is applied, and a failed one
   * keeps the last good set (logged; the next change reloads).
   */
  private async reload(): Promise<void> {
    const seq = ++this.seq;
    this.settled = false;
    try {
      const types = ['render', 'project', 'account'];
      const loaded = await Promise.all(types.map(async (t) => [t, await this.deps.overlays.ofType(t)] as const));
      if (seq !== this.seq) return;
      const first = this.overlaysVersion === 0;
      const changed = changedIds(this.overlays, loaded);
      // the same overlays read again (a resync): the records built with them stand
      if (!first && changed.size === 0) return;
      this.overlays = Object.fromEntries(loaded);
      this.overlaysVersion++;
      // only the renders whose overlays changed are flagged again (their uuids stand); every record is built anew
      const renders = changed.get('render') ?? new Set<string>();
      for (const t of this.deps.teams()) {
        if (first) t.invalidateRecords();
        else t.overlaysChanged(renders);
      }
    } catch (e) {
      this.deps.logger.warn({ err: e }, 'render index: could not read the overlays (the last ones read stay in use)');
    } finally {
      if (seq === this.seq) this.settled = true;
    }
  }
}

type OverlayEntries = Iterable<readonly [string, ReadonlyMap<string, Record<string, unknown>>]>;

/** By type, the ids whose overlays differ between those held and those read (an id in either, its fields in any order). */
function changedIds(held: Overlays, loaded: OverlayEntries): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const text = (o: Record<string, unknown> | undefined) => (o ? JSON.stringify(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1))) : '');
  for (const [type, now] of loaded) {
    const before = held[type] ?? new Map<string, Record<string, unknown>>();
    const ids = new Set<string>();
    for (const id of new Set([...before.keys(), ...now.keys()])) if (text(before.get(id)) !== text(now.get(id))) ids.add(id);
    if (ids.size > 0) out.set(type, ids);
  }
  return out;
}
