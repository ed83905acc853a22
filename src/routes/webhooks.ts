import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { GatewayError } from '../errors/catalog.js';
import type { WebhookReceiver } from '../webhooks/receiver.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The webhook receiver (listeners subscribe to applied render events). */
    webhooks: WebhookReceiver;
  }
}

/** The most bytes of a webhook delivery (the whole render, its output's signed URLs: a few KB; 16 times that). */
export const WEBHOOK_BODY_BYTES = 64 * 1024;

/**
 * POST /_gateway/webhooks/v1/:team — one receiver URL per team (register it in the v1 dashboard with that team's
 * signing secret, and the secret in WEBHOOK_SECRETS). The route authenticates itself (signature), raw bytes kept.
 */
export function registerWebhookRoutes(app: FastifyInstance, deps: Deps): void {
  const receiver = deps.webhooks;
  app.decorate('webhooks', receiver);
  app.register(async (child) => {
    child.removeAllContentTypeParsers();
    // (a v1 render event is a few KB: a body is read, before its signature can be checked, up to WEBHOOK_BODY_BYTES —
    // 1 500 unsigned 1 MB posts at once held other users' reads 10–20 s, attack pass 18)
    child.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_BYTES }, (_req, body, done) => done(null, body));
    child.post<{ Params: { team: string } }>('/_gateway/webhooks/v1/:team', { config: { access: 'signed' } }, async (request, reply) => {
      const sig = request.headers['x-webhook-signature'];
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      let outcome;
      try {
        outcome = await receiver.receive({ team: request.params.team, raw, signature: Array.isArray(sig) ? sig[0] : sig });
      } catch (e) {
        // a delivery refused (its signature, or — signed, so v1's — its body, time or owner) is not retried by v1, one
        // failed (5xx) is: either may be lost — the team's window grows, its renders walked again once it is over
        // (`replica/sync/receiver-health.ts`)
        const status = e instanceof GatewayError ? e.status : 500;
        if (status >= 400) deps.replica?.health.refusal(request.params.team, status < 500 ? 'refused' : 'failed');
        throw e;
      }
      request.log.debug({ outcome, webhookId: request.headers['x-webhook-id'] }, 'webhook received');
      return reply.status(204).send();
    });
  });
}
