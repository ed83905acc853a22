import { createHmac, randomBytes } from 'node:crypto';
import { request } from 'undici';
import type { SimTeam } from './model.js';
import type { Transition, World } from './world.js';

export interface DeliveryAttempt { attempt: number; at: number; status: number | null; error?: string }
export interface DeliveryRecord { id: string; event: string; url: string; team_id: string; render_id: string; attempts: DeliveryAttempt[]; delivered: boolean }

export interface WebhookOptions {
  /** First retry delay; doubles each retry (v1: 1000 ms). */
  readonly backoffMs: number;
  /** Per-attempt timeout (v1: 15 s). */
  readonly timeoutMs: number;
  readonly attempts: number;
  readonly userAgent: string;
  /** How the dispatcher waits between attempts (tests pass one that records the delays instead of sleeping). */
  readonly sleep?: (ms: number) => Promise<void>;
}

export const DEFAULT_WEBHOOK_OPTIONS: WebhookOptions = { backoffMs: 1000, timeoutMs: 15_000, attempts: 5, userAgent: 'VideoRenderingService-Webhooks/1.0' };

/** Signs and delivers render events to each team's endpoints, with retries and a stable X-Webhook-ID. */
export class WebhookDispatcher {
  readonly deliveries: DeliveryRecord[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly world: World, private readonly options: WebhookOptions = DEFAULT_WEBHOOK_OPTIONS) {
    world.onTransition((t) => this.onTransition(t));
  }

  static sign(secret: string, rawBody: string): string {
    return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
  }

  register(teamId: string, url: string, events: string[], secret?: string): { id: string; secret: string } | undefined {
    const team = this.world.teams.get(teamId);
    if (!team) return undefined;
    const hook = { id: `whe_${randomBytes(8).toString('hex')}`, url, secret: secret ?? `whsec_${randomBytes(24).toString('hex')}`, events };
    team.webhooks.push(hook);
    return { id: hook.id, secret: hook.secret };
  }

  private onTransition(t: Transition): void {
    const team = this.world.teams.get(t.render.teamId) as SimTeam;
    const events = ['render.status_changed'];
    if (t.to === 'complete') events.push('render.complete');
    if (t.to === 'failed') events.push('render.failed');
    for (const hook of team.webhooks) {
      for (const event of events) {
        if (!hook.events.includes(event)) continue;
        const timestamp = this.world.clock.now();
        const id = `hook_${randomBytes(12).toString('hex')}`;
        const raw = JSON.stringify({ id, event, data: this.world.renderView(t.render), timestamp });
        const record: DeliveryRecord = { id, event, url: hook.url, team_id: team.id, render_id: t.render.id, attempts: [], delivered: false };
        this.deliveries.push(record);
        if (this.deliveries.length > 5000) this.deliveries.shift();
        const p = this.deliver(record, raw, hook.secret, timestamp).finally(() => this.inFlight.delete(p));
        this.inFlight.add(p);
      }
    }
  }

  private async deliver(record: DeliveryRecord, raw: string, secret: string, timestamp: number): Promise<void> {
    const headers = {
      'content-type': 'application/json',
      'x-webhook-signature': WebhookDispatcher.sign(secret, raw),
      'x-webhook-id': record.id,
      'x-webhook-timestamp': String(timestamp),
      'user-agent': this.options.userAgent,
    };
    for (let attempt = 1; attempt <= this.options.attempts && !this.stopped; attempt++) {
      const a: DeliveryAttempt = { attempt, at: this.world.clock.now(), status: null };
      record.attempts.push(a);
      try {
        const res = await request(record.url, { method: 'POST', body: raw, headers, signal: AbortSignal.timeout(this.options.timeoutMs) });
        a.status = res.statusCode;
        await res.body.dump();
        if (res.statusCode >= 200 && res.statusCode < 300) { record.delivered = true; return; }
      } catch (e) {
        a.error = (e as Error).name === 'TimeoutError' ? 'timeout' : (e as Error).message;
      }
      if (attempt < this.options.attempts) await (this.options.sleep ?? sleep)(this.options.backoffMs * 2 ** (attempt - 1));
    }
  }

  /** Resolves when every delivery under way has ended (tests). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  stop(): void {
    this.stopped = true;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms).unref?.());
