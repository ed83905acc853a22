import type { Logger } from 'pino';
import type { ChangeBus } from '../../store/changes.js';
import type { ReplicaStore } from '../../store/replica-store.js';
import type { RenderDataStore } from '../../store/render-extras.js';
import { CatchUp } from './catch-up.js';
import type { TeamRegistry } from './registry.js';

export interface PeersDeps {
  /** This instance, as its announcements and leases name it (its own announcements are not followed). */
  readonly holder: string;
  readonly bus: ChangeBus;
  readonly logger: Logger;
  readonly store: ReplicaStore;
  readonly renderData: RenderDataStore;
  readonly registry: TeamRegistry;
  /** A team being synced or backfilled here is this instance's own writes: it is not read again. */
  readonly busy: (teamId: string) => boolean;
}

/**
 * The other instances sharing the store: this one announces the renders and teams it wrote (on the change bus), and
 * follows theirs — renders read back by id, a team's row and projects read again, a team dropped after a repair (read
 * whole on its next read), the data of a render the gateway created; after a resync (announcements may have been
 * missed) every held team reads what changed in the store since its change mark (`CatchUp`).
 */
export class Peers {
  private readonly following = new Set<Promise<void>>();
  /** Reads waiting for another instance's sync of a team to end (by team). */
  private readonly waiting = new Map<string, Set<() => void>>();
  private readonly catchUp: CatchUp;

  constructor(private readonly deps: PeersDeps) {
    this.catchUp = new CatchUp({ ...deps, follow: (p) => this.follow(p) });
  }

  listen(): void {
    const { bus, store, registry, busy } = this.deps;
    bus.on('index_renders', (key) => {
      const [from, team, ids] = key.split(' ');
      const t = team ? registry.get(team) : undefined;
      if (from === this.deps.holder || !t || !ids) return;
      this.follow(store.rendersById(ids.split(',')).then((rows) => { for (const r of rows) t.apply(r.render, r.seenAt); }));
    });
    bus.on('index_team', (key) => {
      const [from, team] = key.split(' ');
      const t = team ? registry.get(team) : undefined;
      if (from === this.deps.holder || !team) return;
      for (const wake of [...(this.waiting.get(team) ?? [])]) wake();
      if (t) this.follow(registry.refreshRow(t));
    });
    // a repair (`index verify --repair`) rewrote the team's rows: its copy is read again on its next read
    bus.on('index_drop', (team) => {
      if (!busy(team)) registry.forget(team);
    });
    // announcements may have been missed: each held team reads what changed since its mark
    bus.onResync(() => this.follow(this.catchUp.request()));
  }

  /** Follows the data the gateway sent for the renders it created (written by any instance). */
  listenData(): void {
    this.deps.bus.on('render_data', (id) => {
      const t = [...this.deps.registry.values()].find((x) => x.has(id));
      if (t) t.dataChanged([id]);
    });
  }

  /** Applies another instance's change in the background (idle() waits for it). */
  private follow(p: Promise<void>): void {
    const q = p.catch((e: unknown) => this.deps.logger.warn({ err: e }, 'render index: could not follow a change')).finally(() => this.following.delete(q));
    this.following.add(q);
  }

  /**
   * Resolves when another instance announces the team (its sync or backfill done), or after `ms` (a real timer: the
   * holder may fail and announce nothing).
   */
  announced(teamId: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const set = this.waiting.get(teamId) ?? new Set<() => void>();
      this.waiting.set(teamId, set);
      const wake = () => {
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0 && this.waiting.get(teamId) === set) this.waiting.delete(teamId);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      timer.unref();
      set.add(wake);
    });
  }

  /** Changes being followed (close waits for them). */
  pending(): Promise<void>[] {
    return [...this.following];
  }

  /** Resolves once every change heard from other instances so far is applied (tests, the CLI). */
  async idle(): Promise<void> {
    while (this.following.size > 0) await Promise.all([...this.following]);
  }

  /** Announces renders this instance wrote (the others read them back by id). */
  async publishRenders(teamId: string, ids: readonly string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += 100) await this.deps.bus.publish('index_renders', `${this.deps.holder} ${teamId} ${ids.slice(i, i + 100).join(',')}`);
  }

  /** Announces a team whose row or projects this instance wrote (a backfill or sync done). */
  async publishTeam(teamId: string): Promise<void> {
    await this.deps.bus.publish('index_team', `${this.deps.holder} ${teamId}`);
  }
}
