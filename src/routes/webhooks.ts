import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { WebhookLedger } from '../store/webhook-events.js';
import { WebhookReceiver } from '../webhooks/receiver.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The webhook receiver (listeners subscribe to applied render events). */
    webhooks: WebhookReceiver;
  }
}

/**
 * POST /_gateway/webhooks/v1/:team — one receiver URL per team (register it in the v1 dashboard with that team's
 * signing secret, and the secret in WEBHOOK_SECRETS). The route authenticates itself (signature), raw bytes kept.
 */
export function registerWebhookRoutes(app: FastifyInstance, deps: Deps): void {
  const receiver = new WebhookReceiver(deps, new WebhookLedger(deps.db.kysely, () => deps.clock.now()), deps.readers, deps.config.webhookSecrets,
    deps.config.WEBHOOK_TOLERANCE_MS);
  // an applied render replaces every cached copy of it (every key's partition)
  // this instance keeps the fresh copy the event carries; the others drop theirs (their next read fetches the fresh one)
  const me = randomUUID();
  // the index has the event's render before the 204 (on this instance at once, on the others through the bus)
  receiver.onRender((r) => deps.index?.applyRender(r, { webhook: true }));
  receiver.onRender((r) => {
    deps.cache.replaceEverywhere(`render:${r.id}`, r, deps.cache.renderTtl(r));
    void deps.bus.publish('render_cache', `${me} ${r.id}`).catch((e: unknown) => deps.logger.warn({ err: e }, 'could not tell the other instances'));
    deps.logger.debug({ render: r.id, status: r.status }, 'webhook applied to caches');
  });
  deps.bus.on('render_cache', (key) => {
    const [from, id] = key.split(' ');
    if (from !== me && id) deps.cache.deleteEverywhere(`render:${id}`);
  });
  app.decorate('webhooks', receiver);
  app.register(async (child) => {
    child.removeAllContentTypeParsers();
    child.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1_048_576 }, (_req, body, done) => done(null, body));
    child.post<{ Params: { team: string } }>('/_gateway/webhooks/v1/:team', { config: { access: 'signed' } }, async (request, reply) => {
      const sig = request.headers['x-webhook-signature'];
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const outcome = await receiver.receive({ team: request.params.team, raw, signature: Array.isArray(sig) ? sig[0] : sig });
      request.log.debug({ outcome, webhookId: request.headers['x-webhook-id'] }, 'webhook received');
      return reply.status(204).send();
    });
  });
}
