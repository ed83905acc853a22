import type { Clock } from '../../lib/clock.js';
import { minuteOf, type SyncCallStore } from '../../store/sync-calls.js';
import type { V1Meter } from '../../v1/client.js';
import { SpareRetries } from '../../v1/spare-retries.js';
import { syncCallsOf } from './freshness.js';
import type { MinuteRoom } from './minute-room.js';
import type { TeamReplica } from '../team/team-replica.js';

/** Spare GET attempts one walk of a team may take (a walk of 1 700 pages under 25 % faults needs about ten). */
const WALK_SPARE_RETRIES = 200;

/** The calls of one walk of a team: reserved in the store before, counted as they are made, settled after. */
export class Spend {
  /** Calls made so far. */
  calls = 0;
  /** Calls the store holds for this walk (reserved, then what was added since). */
  counted = 0;
  /** The bound key's partition the walk runs with (its per-key budget), once known. */
  key: string | null = null;
  /** Whether the calls of a sync were reserved (a backfill reserves none). */
  reserved = false;

  constructor(readonly teamId: string, readonly minute: number) {}

  /**
   * Spare attempts for the walk's GETs past V1_RETRIES (`SpareRetries`: at most V1_RETRIES a call, once v1 has answered
   * the walk): a backfill of thousands of pages under a fault rate v1 lives with is not undone by one unlucky call.
   */
  private readonly spares = new SpareRetries(WALK_SPARE_RETRIES);

  readonly meter: V1Meter = {
    onCall: (info) => {
      this.calls++;
      this.spares.seen(info);
    },
    spareRetry: () => this.spares.take(),
  };

  get scopes(): string[] {
    return this.key === null ? [`team:${this.teamId}`] : [`team:${this.teamId}`, `key:${this.key}`];
  }
}

export interface SyncBudgetLimits {
  /** INDEX_SYNC_CALLS_PER_MIN */
  readonly perTeam: number;
  /** INDEX_SYNC_CALLS_PER_KEY_PER_MIN */
  readonly perKey: number;
}

/**
 * The sync's v1 calls, per team (INDEX_SYNC_CALLS_PER_MIN) and per bound key (INDEX_SYNC_CALLS_PER_KEY_PER_MIN) a
 * minute, counted in the store and shared by every instance (`SyncCallStore`): a sync reserves the calls it needs
 * before it makes them and is not run when they do not fit (the team's bound loosens rather than v1 be starved);
 * what it really made is settled after. A backfill is counted, never refused. What this instance learnt (a team's
 * budget spent until the minute's end, the teams a key syncs) saves the store a question.
 */
export class SyncBudget {
  private readonly spentUntil = new Map<string, number>();
  /** Teams synced lately with each key (a key's budget is shared by them): key → team → last use. */
  private readonly keyTeams = new Map<string, Map<string, number>>();
  private readonly keyOf = new Map<string, string>();
  /** What each team's budget had left of a minute at its last reservation (or backfill) here. */
  private readonly rooms = new Map<string, MinuteRoom>();

  constructor(private readonly clock: Clock, readonly limits: SyncBudgetLimits, private readonly store: SyncCallStore) {}

  /** A walk's spend (its calls counted from now on, nothing reserved yet). */
  open(teamId: string): Spend {
    return new Spend(teamId, minuteOf(this.clock.now()));
  }

  /**
   * Reserves the calls one sync of the team needs — `calls`, its plan's (the heads it checks, `rotation.ts`), or one of
   * every project's — and `fullCalls`, the periodic full sync's (the team, its members, the templates due) for the team
   * and the key (capped at a minute's budget: a team larger than that is synced at most once a minute); false when they
   * do not fit this minute, in the store's count.
   */
  async reserve(t: TeamReplica, spend: Spend, fullCalls = 0, calls = syncCallsOf(t)): Promise<boolean> {
    if (spend.key !== null) this.noteKey(t.id, spend.key);
    const need = this.need(calls + fullCalls);
    const scopes = [{ scope: `team:${t.id}`, limit: this.limits.perTeam }];
    if (spend.key !== null) scopes.push({ scope: `key:${spend.key}`, limit: this.limits.perKey });
    const used = await this.store.reserve(scopes, need, spend.minute);
    if (!used) {
      this.spentUntil.set(t.id, (spend.minute + 1) * 60_000);
      return false;
    }
    this.noteRoom(t.id, used, spend.minute);
    spend.counted = need;
    spend.reserved = true;
    return true;
  }

  /** Calls made beyond what the store holds go to it now (a heartbeat of a long walk, and its end). */
  async flush(spend: Spend): Promise<void> {
    const extra = spend.calls - spend.counted;
    if (extra <= 0) return;
    spend.counted = spend.calls;
    await this.store.add(spend.scopes, extra, minuteOf(this.clock.now()));
  }

  /** The walk is over: calls beyond its reservation are counted, reserved calls it did not make given back. */
  async settle(spend: Spend): Promise<void> {
    if (spend.calls >= spend.counted) return this.flush(spend);
    const back = spend.counted - spend.calls;
    spend.counted = spend.calls;
    await this.store.add(spend.scopes, -back, spend.minute);
  }

  /**
   * After a walk counted without a reservation (a backfill): when the calls the team or its key made this minute leave
   * no room for a sync of `calls`, its syncs wait for the next minute — known now, so the bound it states says so
   * (`waitMs`) rather than be passed by a sync refused later.
   */
  async noteSpent(teamId: string, calls: number, key: string | null = null): Promise<void> {
    // (a backfill reserves nothing: the key it ran with is learnt here, its budget shared by the teams it syncs)
    if (key !== null) this.noteKey(teamId, key);
    const minute = minuteOf(this.clock.now());
    const used = await this.store.used(minute);
    const need = this.need(calls);
    const keyOf = this.keyOf.get(teamId);
    const over = (used.get(`team:${teamId}`) ?? 0) + need > this.limits.perTeam
      || (keyOf !== undefined && (used.get(`key:${keyOf}`) ?? 0) + need > this.limits.perKey);
    this.noteRoom(teamId, used, minute);
    if (over) this.spentUntil.set(teamId, Math.max(this.spentUntil.get(teamId) ?? 0, (minute + 1) * 60_000));
  }

  /**
   * What the team's budget has left of the minute `now` falls in, as the store counted it at its last reservation here
   * (its own budget's, or its share of its key's, whichever is smaller); undefined when none was made this minute.
   */
  room(teamId: string, now: number): MinuteRoom | undefined {
    const r = this.rooms.get(teamId);
    if (r === undefined || now < r.minuteEnd) return r;
    this.rooms.delete(teamId);
    return undefined;
  }

  /** The room the store's counts of `minute` leave the team (each scope's limit less its calls; a key's shared). */
  private noteRoom(teamId: string, used: ReadonlyMap<string, number>, minute: number): void {
    const key = this.keyOf.get(teamId);
    const sharing = key === undefined ? 1 : Math.max(1, this.keyTeams.get(key)?.size ?? 1);
    const team = this.limits.perTeam - (used.get(`team:${teamId}`) ?? 0);
    const keyLeft = key === undefined ? Infinity : (this.limits.perKey - (used.get(`key:${key}`) ?? 0)) / sharing;
    this.rooms.set(teamId, { left: Math.max(0, Math.min(team, keyLeft)), minuteEnd: (minute + 1) * 60_000 });
  }

  /** How long the team's syncs still wait for its budget at `now`, as far as this instance knows (0: they do not). */
  waitMs(teamId: string, now: number): number {
    return Math.max(0, (this.spentUntil.get(teamId) ?? 0) - now);
  }

  /** The calls a sync wanting `calls` reserves: a team larger than a minute's budget is synced at most once a minute. */
  private need(calls: number): number {
    return Math.min(calls, this.limits.perTeam, this.limits.perKey);
  }

  /** Whether a sync of the team may be tried now (false: its budget was found spent for this minute). */
  fits(t: TeamReplica): boolean {
    return this.clock.now() >= (this.spentUntil.get(t.id) ?? 0);
  }

  /**
   * The calls a minute the team's syncs may spend: its own budget, or its key's share (the key's budget over the teams
   * it syncs), whichever is smaller.
   */
  callsPerMin(teamId: string): number {
    const key = this.keyOf.get(teamId);
    const sharing = key === undefined ? 1 : Math.max(1, this.keyTeams.get(key)?.size ?? 1);
    return Math.min(this.limits.perTeam, this.limits.perKey / sharing);
  }

  /** v1 calls of every team's syncs this minute, every instance's (by team id). */
  async callsThisMinute(): Promise<Map<string, number>> {
    const used = await this.store.used(minuteOf(this.clock.now()));
    const out = new Map<string, number>();
    for (const [scope, n] of used) if (scope.startsWith('team:')) out.set(scope.slice(5), n);
    return out;
  }

  private noteKey(teamId: string, key: string): void {
    const now = this.clock.now();
    const before = this.keyOf.get(teamId);
    if (before !== undefined && before !== key) this.keyTeams.get(before)?.delete(teamId);
    this.keyOf.set(teamId, key);
    let teams = this.keyTeams.get(key);
    if (!teams) this.keyTeams.set(key, (teams = new Map()));
    teams.set(teamId, now);
    // a team not synced with the key for 10 minutes no longer shares it
    for (const [id, at] of teams) if (now - at > 600_000) teams.delete(id);
  }
}
