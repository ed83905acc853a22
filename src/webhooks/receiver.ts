import { createHmac, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { Clock } from '../lib/clock.js';
import type { Metrics } from '../ops/metrics.js';
import type { ReplicaStore } from '../store/replica-store.js';
import { errors, type GatewayError } from '../errors/catalog.js';
import type { TeamReaders } from '../live/team-readers.js';
import type { WebhookLedger } from '../store/webhook-events.js';
import { epochMs } from '../translate/time.js';
import { V1NotFoundError } from '../v1/errors.js';
import { LIFECYCLE_RANK, WebhookEventSchema, type V1Render, type WebhookEvent } from '../v1/schemas.js';

/** HMAC-SHA256 of the exact raw bytes, `sha256=<hex>`, compared in constant time. */
export function verifySignature(raw: Buffer, header: string | undefined, secret: string): boolean {
  if (!header || !header.startsWith('sha256=')) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
  const given = Buffer.from(header);
  return expected.length === given.length && timingSafeEqual(expected, given);
}


export type Outcome = 'applied' | 'duplicate' | 'older';

/** What the receiver uses, given by the composition root. */
export interface WebhookReceiverDeps {
  readonly config: Pick<Config, 'V1_TIMESTAMP_UNIT' | 'WEBHOOK_TOLERANCE_MS' | 'webhookSecrets'>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly ledger: WebhookLedger;
  readonly readers: TeamReaders;
  /** The replica's store, when there is one: the owners of the renders it holds. */
  readonly owners: Pick<ReplicaStore, 'ownerOf'> | undefined;
}
export interface Delivery { readonly team: string; readonly raw: Buffer; readonly signature: string | undefined }

/**
 * Receives v1 render events for one team, at that team's own URL: the secret is the team's (chosen by where the delivery
 * arrived, never by what the body claims); the event must be within the tolerance window and its render not updated
 * after it; its render's project must belong to that team by the gateway's own project data (read with a key that
 * reaches the team), and the render itself to that project (the owner the store holds, or v1's answer); it is applied once
 * (deduplicated on the signed body id, in the store) and never over newer state. Listeners get every applied render.
 */
export class WebhookReceiver {
  private readonly listeners: ((render: V1Render, event: WebhookEvent) => void | Promise<void>)[] = [];
  private received = 0;
  /** render id → "team project", as v1 answered (owners never change), for renders the store does not hold. */
  private readonly confirmed = new LRUCache<string, string>({ max: 100_000 });

  private readonly ledger: WebhookLedger;
  private readonly readers: TeamReaders;
  private readonly secrets: Readonly<Record<string, string>>;
  private readonly toleranceMs: number;

  constructor(private readonly deps: WebhookReceiverDeps) {
    this.ledger = deps.ledger;
    this.readers = deps.readers;
    this.secrets = deps.config.webhookSecrets;
    this.toleranceMs = deps.config.WEBHOOK_TOLERANCE_MS;
  }

  onRender(fn: (render: V1Render, event: WebhookEvent) => void | Promise<void>): void { this.listeners.push(fn); }

  /** Checks and applies one delivery; throws the error to answer when it is refused. */
  async receive(d: Delivery): Promise<Outcome> {
    const secret = Object.hasOwn(this.secrets, d.team) ? this.secrets[d.team] : undefined;
    if (!secret || d.raw.length === 0 || !verifySignature(d.raw, d.signature, secret)) throw this.refuse('Invalid webhook signature.', 'signature');
    let parsed: unknown;
    try { parsed = JSON.parse(d.raw.toString('utf8')); } catch { throw this.refuse('The webhook body is not JSON.', 'body'); }
    const event = WebhookEventSchema.safeParse(parsed);
    if (!event.success) throw this.refuse('The webhook body is not a render event.', 'body');
    const e = event.data;
    const now = this.deps.clock.now();
    if (Math.abs(now - epochMs(e.timestamp, 'ms')) > this.toleranceMs) {
      throw this.refuse(`The webhook timestamp is outside the tolerance window (${this.toleranceMs} ms).`, 'stale');
    }
    const render = e.data;
    if (render.project.team !== d.team || !(await this.projectOfTeam(render.project.id, d.team))) {
      throw this.refuse('The render of this event does not belong to the team of this endpoint.', 'foreign');
    }
    // a state from the future would pin the render (no genuine event or sync could ever be newer)
    const updatedAt = epochMs(render.updated_at ?? render.created_at, this.deps.config.V1_TIMESTAMP_UNIT);
    if (updatedAt > epochMs(e.timestamp, 'ms') + this.toleranceMs) {
      throw this.refuse('The render\'s updated_at lies after the delivery\'s timestamp.', 'future');
    }
    await this.checkOwner(render, d.team);
    if (!(await this.ledger.firstDelivery(e.id, d.team))) { this.deps.metrics.webhook('duplicate'); return 'duplicate'; }
    if (++this.received % 1000 === 0) await this.ledger.prune(Math.max(86_400_000, this.toleranceMs * 2));
    if (!(await this.ledger.newer(render.id, updatedAt, LIFECYCLE_RANK[render.status]))) {
      this.deps.metrics.webhook('accepted');
      return 'older';
    }
    this.deps.metrics.webhook('accepted');
    try {
      for (const fn of this.listeners) await fn(render, e);
    } catch (err) {
      await this.ledger.forget(e.id); // not applied: v1's retry of this delivery must be taken
      throw err;
    }
    return 'applied';
  }

  /**
   * A render belongs to one team and project for life, fixed when v1 first showed it: a render the store holds must
   * name the same owner; one it does not is asked of v1 (by id, with a key of the endpoint's team) before anything is
   * applied — v1 out of reach answers 503, so v1 delivers again. v1's answers are remembered (owners never change).
   */
  private async checkOwner(render: V1Render, team: string): Promise<void> {
    const held = await this.deps.owners?.ownerOf(render.id);
    let owner = held ? `${held.team} ${held.project}` : this.confirmed.get(render.id);
    if (owner === undefined) {
      owner = await this.ownerInV1(render.id, team);
      if (owner) this.confirmed.set(render.id, owner);
      // v1 may not show a render born a moment ago yet (read after create): deliver again rather than refuse for good
      else if (this.deps.clock.now() - epochMs(render.created_at, this.deps.config.V1_TIMESTAMP_UNIT) < this.toleranceMs) {
        throw this.unavailable('v1 does not show this new render yet');
      }
    }
    if (owner !== `${team} ${render.project.id}`) {
      this.deps.metrics.webhookOwnerRefused();
      throw this.refuse('The render of this event belongs to another team or project.', 'owner');
    }
  }

  private async ownerInV1(renderId: string, team: string): Promise<string> {
    const reader = await this.readers.sessionFor(team, { onCall: () => undefined }, 'gateway-webhook-check');
    if (!reader) throw this.unavailable('no key of this team could confirm the render');
    try {
      const live = await reader.session.render(renderId);
      return `${live.project.team} ${live.project.id}`;
    } catch (err) {
      if (err instanceof V1NotFoundError) return ''; // v1 does not show it to this team: not the team's
      throw this.unavailable('v1 could not confirm the render');
    }
  }

  private unavailable(reason: string): GatewayError {
    this.deps.metrics.webhook('rejected');
    this.deps.logger.warn({ reason: 'unconfirmed' }, `webhook refused for now: ${reason}`);
    return errors.serviceUnavailable(`${reason}; deliver again later.`);
  }

  /** The project is the team's by the gateway's own data (fetched with a key that reaches the team; cached). */
  private async projectOfTeam(projectId: string, team: string): Promise<boolean> {
    const catalog = await this.readers.catalogFor(team);
    if (!catalog) return false;
    const p = await catalog.project(projectId);
    return !!p && p.team.id === team;
  }

  private refuse(message: string, reason: string): GatewayError {
    this.deps.metrics.webhook('rejected');
    this.deps.logger.warn({ reason }, `webhook rejected: ${message}`);
    if (reason === 'signature') return errors.invalidCredentials(message);
    return reason === 'foreign' || reason === 'owner' ? errors.forbidden(message) : errors.invalidPayload(message);
  }
}
