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
 * longer than v1's retries span records that window for every team; refused deliveries (bad signature) and failed ones
 * (the gateway answered 5xx) record theirs for the team. The sync walks a team again for each such window (`due`).
 */
export class ReceiverHealth implements WebhookTrust {
  private gaps: WebhookGap[] = [];
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
      const gap = await store.addGap('', last, now, 'receiver down');
      logger.warn({ from: new Date(last).toISOString(), to: new Date(now).toISOString() }, 'webhooks: no receiver answered in this window');
      this.gaps.push(gap);
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
    return lostWindow(this.gaps, teamId, this.checked.get(teamId) ?? 0, this.deps.retrySpanMs, now) === null;
  }

  pending(teamId: string, now: number): boolean {
    return this.registered(teamId) && lostWindow(this.gaps, teamId, this.checked.get(teamId) ?? 0, this.deps.retrySpanMs, now) !== null;
  }

  /** Whether the team's webhooks are registered and trust is on (its status says so). */
  registered(teamId: string): boolean {
    return this.enabled && this.deps.registered.has(teamId);
  }

  /** The window the team's renders must be walked again for now (null: none, or one still under way). */
  due(teamId: string, now: number): CatchUpWindow | null {
    if (!this.registered(teamId)) return null;
    return lostWindow(this.gaps, teamId, this.checked.get(teamId) ?? 0, this.deps.retrySpanMs, now, true);
  }

  /** The team was walked again for the windows up to `to`. */
  async caughtUp(teamId: string, w: CatchUpWindow): Promise<void> {
    await this.deps.store.setCheckedTo(teamId, w.to);
    this.checked.set(teamId, Math.max(this.checked.get(teamId) ?? 0, w.to));
    this.deps.logger.info({ team: teamId, from: new Date(w.from).toISOString(), to: new Date(w.to).toISOString() }, 'webhooks: team caught up');
  }

  /** The gateway refused (bad signature) or failed (5xx) a delivery for a registered team: its window grows. */
  refusal(teamId: string, reason: Exclude<GapReason, 'receiver down'>, now = this.deps.clock.now()): void {
    if (!this.opened || !this.registered(teamId)) return;
    const open = this.runs.get(teamId);
    if (open && open.gap.reason === reason && now - open.gap.to <= this.deps.retrySpanMs) {
      const gap = { ...open.gap, to: Math.max(open.gap.to, now) };
      this.gaps = this.gaps.map((g) => (g.id === gap.id ? gap : g));
      open.gap = gap;
      if (gap.to - open.stored >= WRITE_EVERY_MS) {
        open.stored = gap.to;
        void this.deps.store.extendGap(gap.id, gap.to).catch((e: unknown) => this.failed(e));
      }
      return;
    }
    const gap: WebhookGap = { id: '', team: teamId, from: now, to: now, reason };
    const entry = { gap, stored: now };
    this.runs.set(teamId, entry);
    this.gaps.push(gap);
    void this.deps.store.addGap(teamId, now, now, reason).then((stored) => {
      const named = { ...entry.gap, id: stored.id };
      this.gaps = this.gaps.map((g) => (g === entry.gap ? named : g));
      entry.gap = named;
    }).catch((e: unknown) => this.failed(e));
  }

  private async beat(now: number): Promise<void> {
    const { store, holder, registered } = this.deps;
    this.beatAt = now;
    try {
      await store.beat(holder, this.since, now);
      const [gaps, checked] = await Promise.all([store.gapsAfter(now - KEEP_MS), store.checkedTo([...registered])]);
      // this instance's refusal windows as it knows them (the store holds their end once a second)
      const mine = new Map([...this.runs.values()].map((o) => [o.gap.id, o.gap]));
      this.gaps = [...gaps.map((g) => mine.get(g.id) ?? g), ...[...mine.values()].filter((g) => g.id === '')];
      for (const [team, to] of checked) this.checked.set(team, Math.max(this.checked.get(team) ?? 0, to));
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
