import type { ReplicaStore } from '../../store/replica-store.js';

/** A team's sync lease while this instance holds it. */
export interface HeldLease {
  /** Throws once the lease was lost (another instance took the team over): the walk stops at its next step. */
  check(): void;
  /**
   * Stops the heartbeat and gives the lease back; `syncedAt`: the sync that started then is over, the team marked synced
   * as of it in the same statement. False when the lease was lost meanwhile (nothing written: the caller marks alone).
   */
  release(syncedAt?: number): Promise<boolean>;
}

/**
 * The sync leases of one instance (a lease in `index_teams`: one instance syncs a team at a time). A held lease is
 * renewed by a heartbeat every `heartbeatMs` whatever the walk is doing, and lasts twice that: when a holder dies, its
 * team is taken over at most 2 × heartbeat after its last renewal, never before its lease ran out.
 */
export class SyncLeases {
  constructor(private readonly store: ReplicaStore, private readonly holder: string, readonly heartbeatMs: number) {}

  /** How long a lease lasts past its last renewal. */
  get leaseMs(): number {
    return 2 * this.heartbeatMs;
  }

  /**
   * Takes the team's lease (false while another live holder has it); `sync`: the team's last sync start is recorded with
   * it. `beat` runs at every heartbeat (the sync's calls counted so far go to the store).
   */
  async take(teamId: string, o: { sync?: boolean; beat?: () => Promise<void> } = {}): Promise<HeldLease | undefined> {
    if (!(await this.store.lease(teamId, this.holder, this.leaseMs, o.sync))) return undefined;
    let lost = false;
    let beating = false;
    const timer = setInterval(() => {
      if (beating || lost) return;
      beating = true;
      void (async () => {
        try {
          if (!(await this.store.lease(teamId, this.holder, this.leaseMs))) lost = true;
          await o.beat?.();
        } catch {
          // the store out of reach: the next beat tries again (the lease may run out meanwhile)
        } finally {
          beating = false;
        }
      })();
    }, this.heartbeatMs);
    timer.unref();
    return {
      check: () => {
        if (lost) throw new Error('another instance took over the sync of this team');
      },
      release: async (syncedAt) => {
        clearInterval(timer);
        return !lost && (await this.store.release(teamId, this.holder, syncedAt));
      },
    };
  }
}
