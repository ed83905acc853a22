import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Deps } from '../deps.js';
import { errors, type GatewayError } from '../errors/catalog.js';
import type { TeamReaders } from '../plan/team-readers.js';
import type { WebhookLedger } from '../store/webhook-events.js';
import { epochMs } from '../translate/time.js';
import { LIFECYCLE_RANK, WebhookEventSchema, type V1Render, type WebhookEvent } from '../v1/schemas.js';

/** HMAC-SHA256 of the exact raw bytes, `sha256=<hex>`, compared in constant time. */
export function verifySignature(raw: Buffer, header: string | undefined, secret: string): boolean {
  if (!header || !header.startsWith('sha256=')) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
  const given = Buffer.from(header);
  return expected.length === given.length && timingSafeEqual(expected, given);
}


export type Outcome = 'applied' | 'duplicate' | 'older';
export interface Delivery { readonly team: string; readonly raw: Buffer; readonly signature: string | undefined }

/**
 * Receives v1 render events for one team, at that team's own URL: the secret is the team's (chosen by where the delivery
 * arrived, never by what the body claims); the event must be within the tolerance window; its render's project must
 * belong to that team by the gateway's own project data (read with a key that reaches the team); it is applied once
 * (deduplicated on the signed body id, in the store) and never over newer state. Listeners get every applied render.
 */
export class WebhookReceiver {
  private readonly listeners: ((render: V1Render, event: WebhookEvent) => void | Promise<void>)[] = [];
  private received = 0;

  constructor(
    private readonly deps: Deps, private readonly ledger: WebhookLedger, private readonly readers: TeamReaders,
    private readonly secrets: Readonly<Record<string, string>>, private readonly toleranceMs: number,
  ) {}

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
    if (!(await this.ledger.firstDelivery(e.id, d.team))) { this.deps.metrics.webhook('duplicate'); return 'duplicate'; }
    if (++this.received % 1000 === 0) await this.ledger.prune(Math.max(86_400_000, this.toleranceMs * 2));
    const updatedAt = render.updated_at ?? render.created_at;
    if (!(await this.ledger.newer(render.id, epochMs(updatedAt, this.deps.config.V1_TIMESTAMP_UNIT), LIFECYCLE_RANK[render.status]))) {
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
    return reason === 'signature' ? errors.invalidCredentials(message) : reason === 'foreign' ? errors.forbidden(message) : errors.invalidPayload(message);
  }
}
