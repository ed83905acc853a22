import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { LRUCache } from 'lru-cache';
import { webhookSecrets } from '../config/schema.js';
import type { Deps } from '../deps.js';
import { errors } from '../errors/catalog.js';
import { WebhookEventSchema } from '../v1/schemas.js';

/** HMAC-SHA256 of the exact raw bytes, `sha256=<hex>`, compared in constant time. */
export function verifySignature(raw: Buffer, header: string | undefined, secret: string): boolean {
  if (!header || !header.startsWith('sha256=')) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
  const given = Buffer.from(header);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/**
 * POST /_gateway/webhooks/v1: v1 render events keep the caches fresh. The signature (per-team secret)
 * authenticates the call; duplicates are dropped on X-Webhook-ID; the answer is a fast 204 and the
 * cache work happens after it.
 */
export function registerWebhookRoutes(app: FastifyInstance, deps: Deps): void {
  const secrets = webhookSecrets(deps.config);
  const seen = new LRUCache<string, true>({ max: 50_000, ttl: 86_400_000 });
  app.register(async (child) => {
    child.removeAllContentTypeParsers();
    child.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1_048_576 }, (_req, body, done) => done(null, body));
    child.post('/_gateway/webhooks/v1', { config: { access: 'signed' } }, async (request, reply) => {
      const raw = request.body as Buffer | undefined;
      if (!Buffer.isBuffer(raw) || raw.length === 0) throw errors.invalidPayload('An empty webhook body.');
      const signature = request.headers['x-webhook-signature'];
      const id = request.headers['x-webhook-id'];
      const sig = Array.isArray(signature) ? signature[0] : signature;
      let parsed: unknown;
      try { parsed = JSON.parse(raw.toString('utf8')); } catch { parsed = undefined; }
      const event = WebhookEventSchema.safeParse(parsed);
      // The secret is chosen by the team the payload names, but only a matching signature is believed.
      const team = event.success ? event.data.data.project.team : undefined;
      const secret = team ? secrets[team] : undefined;
      if (!event.success || !secret || !verifySignature(raw, sig, secret)) {
        request.log.warn({ webhookId: id }, 'webhook rejected: signature does not match');
        throw errors.invalidCredentials('Invalid webhook signature.');
      }
      const deliveryId = String(id ?? event.data.id);
      if (seen.has(deliveryId)) return reply.status(204).send();
      seen.set(deliveryId, true);
      void reply.status(204).send();
      setImmediate(() => {
        const r = event.data.data;
        const ttl = deps.cache.renderTtl(r);
        deps.cache.replaceEverywhere(`render:${r.id}`, r, ttl);
        request.log.info({ render: r.id, status: r.status, event: event.data.event }, 'webhook applied to caches');
      });
      return reply;
    });
  });
}
