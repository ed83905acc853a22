import type { Logger } from 'pino';
import type { Clock } from '../../lib/clock.js';
import type { GapReason, WebhookGap, WebhookHealthStore } from '../../store/webhook-health.js';
import type { WebhookTrust } from '../team/team-replica.js';
import { lostWindow, type CatchUpWindow } from './webhook-trust.js';

export interface ReceiverHealthDeps {
  readonly store: WebhookHealthStore;
  readonly clock: Clock;
  readonly logger: Logger;
  /** This instance, as the receivers' rows name it. */
  readonly holder: string;
  /** Teams whose webhooks are registered (the operator configured their signing secret, WEBHOOK_SECRETS). */
  readonly registered: ReadonlySet<string>;
  /** WEBHOOK_RECONCILE_MS: 0 trusts no team's webhooks (every team is polled). */
  readonly reconcileMs: number;
  /** WEBHOOK_RETRY_SPAN_MS: the shortest span of v1's attempts of one delivery. */
  readonly retrySpanMs: number;
  /** How often this instance's receiver is recorded as answering (INDEX_LEASE_HEARTBEAT_MS). */
  readonly beatMs: number;
}

/** Windows and receivers older than this are dropped (a day: far past any catch-up). */
const KEEP_MS = 86_400_000;
/** A run of refusals moves its window's end in the store at most this often (an attacker's flood writes once a second). */
const WRITE_EVERY_MS = 1_000;

/**
 * The webhook receivers of every instance, as the store records them, and what follows for each team's trust: its
 * webhooks are trusted (it is not head-polled) while they are registered and no delivery may have been lost since its
 * last catch-up. Each instance records its receiver as answering every beat; a start that finds no receiver answered for
 * longer than v1's retries span records that window for every team; refused deliveries and failed ones record theirs
 * for the team. The sync walks a team again for its windows (`due`).
 *
 * A team holds at most one window of its own per kind until it is caught up (refusals grow that window however far
 * apart they come), and a team's windows are dropped once it is: however many deliveries are refused, a team's windows
 * stay a few rows, and a team's trust reads its own and the windows of every team only (attack pass 36, H-1: a window a
 * refusal 15 s apart, kept a day, re-read every beat and scanned for every team — 291 540 rows held others' reads 0.9 s).
 */
export class ReceiverHealth implements WebhookTrust {
  /** The windows, by team ('' for every team). */
  private gaps = new Map<string, WebhookGap[]>();
  private readonly checked = new Map<string, number>();
  /** The refusal windows this instance is writing, by team, and the end the store holds. */
  private readonly runs = new Map<string, { gap: WebhookGap; stored: number }>();
  private since = 0;
  private beatAt = -Infinity;
  private opened = false;

  constructor(private readonly deps: ReceiverHealthDeps) {}

  /** Whether any team's webhooks can be trusted here (registered teams and trust switched on). */
  get enabled(): boolean {
    return this.deps.reconcileMs > 0 && this.deps.registered.size > 0;
  }

  /**
   * At start, before the first read: the window no instance's receiver answered in (from the last one seen to now),
   * recorded for every team, then this receiver recorded as answering.
   */
  async open(): Promise<void> {
    if (!this.enabled || this.opened) return;
    const { store, clock, holder, logger } = this.deps;
    const now = clock.now();
    this.since = now;
    const others = await store.receiversElsewhere(holder);
    // another instance still running was seen within the retry span: had it died just after, v1's retries of what it
    // missed land here; else no receiver answered since the last one was seen (whatever the window's length: `lostIn`)
    const alive = others.some((o) => !o.stopped && now - o.seenAt < this.deps.retrySpanMs);
    const last = others.reduce<number | null>((m, o) => (m === null || o.seenAt > m ? o.seenAt : m), null);
    if (!alive && last !== null && now > last) {
      const gap = store.newGap('', last, now, 'receiver down');
      await store.putGap(gap);
      logger.warn({ from: new Date(last).toISOString(), to: new Date(now).toISOString() }, 'webhooks: no receiver answered in this window');
      this.put(gap);
    }
    await this.beat(now);
    this.opened = true;
  }

  /** Every tick: this receiver recorded as answering and the windows read again, once a beat. */
  async tick(now = this.deps.clock.now()): Promise<void> {
    if (!this.opened || now - this.beatAt < this.deps.beatMs) return;
    await this.beat(now);
  }

  /** At shutdown: the last moment this receiver answered. */
  async close(): Promise<void> {
    if (this.opened) await this.deps.store.beat(this.deps.holder, this.since, this.deps.clock.now(), true).catch(() => undefined);
  }

  trusted(teamId: string, now: number): boolean {
    if (!this.opened || !this.deps.registered.has(teamId)) return false;
    return lostWindow(this.gapsOf(teamId), teamId, this.checked.get(teamId) ?? 0, this.deps.retrySpanMs, now) === null;
  }

  pending(teamId: string, now: number): boolean {
    return this.registered(teamId) && lostWindow(this.gapsOf(teamId), teamId, this.checked.get(teamId) ?? 0, this.deps.retrySpanMs, now) !== null;
  }

  /** Whether the team's webhooks are registered and trust is on (its status says so). */
  registered(teamId: string): boolean {
    return this.enabled && this.deps.registered.has(teamId);
  }

  /** The window the team's renders must be walked again for now (null: none, or one still under way). */
  due(teamId: string, now: number): CatchUpWindow | null {
    if (!this.registered(teamId)) return null;
    return lostWindow(this.gapsOf(teamId), teamId, this.checked.get(teamId) ?? 0, this.deps.retrySpanMs, now, true);
  }

  /** The windows a team's trust reads: its own and those of every team. */
  private gapsOf(teamId: string): readonly WebhookGap[] {
    const own = this.gaps.get(teamId);
    const every = this.gaps.get('');
    if (!own) return every ?? [];
    return every ? [...every, ...own] : own;
  }

  /** A window added, or its end moved (by id). */
  private put(g: WebhookGap): void {
    const list = this.gaps.get(g.team) ?? [];
    const at = list.findIndex((x) => x.id === g.id);
    if (at >= 0) list[at] = g;
    else list.push(g);
    this.gaps.set(g.team, list);
  }

  /** The team was walked again for the windows up to `to`. */
  async caughtUp(teamId: string, w: CatchUpWindow): Promise<void> {
    await this.deps.store.setCheckedTo(teamId, w.to);
    await this.deps.store.dropCaughtUp(teamId, w.to);
    this.checked.set(teamId, Math.max(this.checked.get(teamId) ?? 0, w.to));
    const left = (this.gaps.get(teamId) ?? []).filter((g) => g.to > w.to);
    if (left.length > 0) this.gaps.set(teamId, left);
    else this.gaps.delete(teamId);
    this.deps.logger.info({ team: teamId, from: new Date(w.from).toISOString(), to: new Date(w.to).toISOString() }, 'webhooks: team caught up');
  }

  /**
   * The gateway refused a delivery (4xx) or failed it (5xx) for a registered team: the team's window of that kind grows
   * while it is not caught up, however far apart the refusals (a new one only after its catch-up).
   */
  refusal(teamId: string, reason: Exclude<GapReason, 'receiver down'>, now = this.deps.clock.now()): void {
    if (!this.opened || !this.registered(teamId)) return;
    const key = `${teamId} ${reason}`;
    const run = this.runs.get(key);
    if (run && run.gap.to > (this.checked.get(teamId) ?? 0)) {
      if (now <= run.gap.to) return;
      run.gap = { ...run.gap, to: now };
      this.put(run.gap);
      if (now - run.stored >= WRITE_EVERY_MS) this.write(run);
      return;
    }
    const fresh = { gap: this.deps.store.newGap(teamId, now, now, reason), stored: now };
    this.runs.set(key, fresh);
    this.put(fresh.gap);
    this.write(fresh);
  }

  /** A run's window written as this instance knows it (its end the store holds, once a second at most). */
  private write(run: { gap: WebhookGap; stored: number }): void {
    run.stored = run.gap.to;
    void this.deps.store.putGap(run.gap).catch((e: unknown) => this.failed(e));
  }

  private async beat(now: number): Promise<void> {
    const { store, holder, registered } = this.deps;
    this.beatAt = now;
    try {
      await store.beat(holder, this.since, now);
      const [gaps, checked] = await Promise.all([store.gapsAfter(now - KEEP_MS), store.checkedTo([...registered])]);
      for (const [team, to] of checked) this.checked.set(team, Math.max(this.checked.get(team) ?? 0, to));
      this.gaps = new Map();
      for (const g of gaps) this.put(g);
      // this instance's refusal runs not caught up, as it knows them (the store holds their end once a second)
      for (const [key, run] of this.runs) {
        if (run.gap.to > (this.checked.get(run.gap.team) ?? 0)) this.put(run.gap);
        else this.runs.delete(key);
      }
      await store.pruneGaps(now - KEEP_MS);
      await store.forgetReceivers(now - KEEP_MS);
    } catch (e) {
      this.failed(e);
    }
  }

  private failed(e: unknown): void {
    this.deps.logger.warn({ err: e instanceof Error ? e.message : String(e) }, 'webhooks: the receivers\' health could not be written');
  }
}
