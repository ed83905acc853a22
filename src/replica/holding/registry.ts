import type { Clock } from '../../lib/clock.js';
import type { ReplicaStore } from '../../store/replica-store.js';
import type { V1Team } from '../../v1/schemas.js';
import { evict, type EvictionOptions } from './eviction.js';
import type { RecordInputs } from './record-inputs.js';
import { LoadQueue } from './load-queue.js';
import { TeamReplica, type WebhookTrust } from '../team/team-replica.js';

/** Renders read from the store applied between two turns of the event loop. */
const LOAD_SLICE = 250;

const turn = () => new Promise<void>((r) => setImmediate(r));

/** Teams read from the store at once; the others wait in order (see `LoadQueue`). */
const LOADS_AT_ONCE = 2;

export interface TeamRegistryDeps {
  readonly store: ReplicaStore;
  readonly clock: Clock;
  readonly inputs: RecordInputs;
  readonly eviction: EvictionOptions;
  /** Whether a team's webhooks are trusted, given to each team held (`sync/receiver-health.ts`). */
  readonly trust?: WebhookTrust;
}

/**
 * The teams of the replica held in memory, by id: read from the store on first use (concurrent readers share one
 * load), a team new to the store adopted empty, a team's row and projects read again after another instance's change,
 * and the memory bound kept as teams arrive.
 */
export class TeamRegistry {
  private readonly teams = new Map<string, TeamReplica>();
  private readonly loading = new Map<string, Promise<TeamReplica | undefined>>();
  /** Teams read from the store two at a time (`load-queue.ts`): a read of ten teams' reach does not hold the loop ten times longer. */
  private readonly queue = new LoadQueue(LOADS_AT_ONCE);

  constructor(private readonly deps: TeamRegistryDeps) {}

  get(teamId: string): TeamReplica | undefined {
    return this.teams.get(teamId);
  }

  values(): IterableIterator<TeamReplica> {
    return this.teams.values();
  }

  ids(): string[] {
    return [...this.teams.keys()];
  }

  /** The team leaves memory (it is read whole from the store on its next read). */
  forget(teamId: string): void {
    this.teams.delete(teamId);
  }

  /** Loads under way (close waits for them). */
  pending(): Promise<TeamReplica | undefined>[] {
    return [...this.loading.values()];
  }

  /** Teams beyond INDEX_MEMORY_MB leave memory, least recently read first (`keep` stays). */
  evict(keep?: string): void {
    evict(this.teams, this.deps.eviction, keep);
  }

  /** The team's replica in memory, read from the store when it is not (undefined: never filled). */
  async load(teamId: string): Promise<TeamReplica | undefined> {
    const t = this.teams.get(teamId);
    if (t) return t;
    let p = this.loading.get(teamId);
    if (!p) {
      p = this.queue.run(() => this.read(teamId)).finally(() => this.loading.delete(teamId));
      this.loading.set(teamId, p);
    }
    return p;
  }

  private async read(teamId: string): Promise<TeamReplica | undefined> {
    const { store, clock, inputs } = this.deps;
    const mark = await store.changeMark(); // before reading: a change made meanwhile is caught up from it
    const row = await store.team(teamId);
    if (!row) return undefined;
    const version = inputs.version;
    const fresh = new TeamReplica(row, inputs.builder);
    fresh.trust = this.deps.trust ?? null;
    fresh.changeMark = mark;
    fresh.readAt = clock.now(); // loaded to be read: not the first to leave memory
    for (const pr of await store.projects(teamId)) fresh.setProject(pr, clock.now());
    // applied a slice at a time, the event loop given a turn between slices (a large team does not hold it)
    await store.eachRenders(teamId, async (rows) => {
      for (let i = 0; i < rows.length; i += LOAD_SLICE) {
        fresh.load(rows.length <= LOAD_SLICE ? rows : rows.slice(i, i + LOAD_SLICE));
        await turn();
      }
    });
    fresh.compact();
    // new overlays or imported ids arrived while it was read
    if (inputs.version !== version) fresh.invalidateRecords();
    // a backfill or sync that started meanwhile holds the newer copy
    const current = this.teams.get(teamId);
    if (current) return current;
    this.teams.set(teamId, fresh);
    this.evict(teamId);
    return fresh;
  }

  /** A team new to the store: an empty replica in memory. */
  adopt(team: V1Team): TeamReplica {
    const t = new TeamReplica({ team, members: [], state: 'backfilling', backfilledAt: null, syncedAt: null, webhookAt: null }, this.deps.inputs.builder);
    t.readAt = this.deps.clock.now();
    t.trust = this.deps.trust ?? null;
    this.teams.set(team.id, t);
    return t;
  }

  /** The team's row and projects read again (another instance synced it); a team backfilled elsewhere leaves memory. */
  async refreshRow(t: TeamReplica): Promise<void> {
    const { store, clock } = this.deps;
    const row = await store.team(t.id);
    if (!row) return;
    if (row.state === 'ready' && t.state !== 'ready') {
      this.teams.delete(t.id); // backfilled elsewhere: read whole on next use
      return;
    }
    t.setRow(row);
    const projects = await store.projects(t.id);
    const live = new Set(projects.map((p) => p.project.id));
    for (const id of [...t.projects.keys()]) if (!live.has(id)) t.dropProject(id);
    for (const p of projects) {
      const prev = t.projects.get(p.project.id);
      const same = prev && JSON.stringify(prev.project) === JSON.stringify(p.project) && JSON.stringify(prev.templates) === JSON.stringify(p.templates);
      // a checkpoint written by another instance's walk is not this copy's: its renders were not read here (partial
      // answers trust a checkpointed project whole)
      const row = t.state === 'ready' ? p : { ...p, backfilled: prev?.backfilled ?? false };
      if (!same) t.setProject(row, clock.now());
      else if (p.headMark !== undefined && p.headMark !== null) { // another instance's walk
        t.setHeadMark(p.project.id, p.headMark);
        t.storedMarks.set(p.project.id, p.headMark);
      }
    }
  }
}
