import Fastify, { type FastifyInstance } from 'fastify';
import { RECORD_RESOURCES } from '../query/resources.js';
import { uuidV5 } from '../lib/uuid.js';
import type { IdTranslator } from '../translate/ids.js';
import { uuidsIn } from './diff.js';

/** The namespace of the stand-in's own uuids (a legacy system numbers its objects its own way). */
const LEGACY_NS = '0e3c1a6e-4f1b-5b6a-9d2e-7c8b9a0f1e2d';

export interface StandinParts {
  /** A reference gateway over the same v1 data, answering as the old system would (its own store). */
  readonly reference: FastifyInstance;
  /** The reference's id translator (which v1 object a reference uuid names). */
  readonly referenceIds: IdTranslator;
  /** Tells the gateway under comparison the stand-in's uuid pairs, as a migration's id export would. */
  readonly importPairs: (pairs: { type: string; uuid: string; v1Id: string }[]) => Promise<unknown>;
  /** Changes applied to answers before they are sent (planted differences, in tests). */
  readonly plants?: ((url: string, body: unknown) => void)[];
}

export interface Standin { readonly app: FastifyInstance; readonly sent: { method: string; url: string; raw: string }[] }

/**
 * A runnable stand-in for the legacy system, to try proxy, shadow and compare modes locally: every legacy request is
 * answered by a reference gateway over the same v1, under the legacy system's own uuids (their pairs handed to the
 * gateway's id map), with a noisy `served_at` field; writes get a recorded answer and never reach v1. Authorization is
 * passed to the reference as it came, so tokens issued by either side work on both when they share JWT_SECRET.
 */
export function legacyStandin(p: StandinParts): Standin {
  const toLegacy = new Map<string, string>();
  const toRef = new Map<string, string>();
  const sent: Standin['sent'] = [];
  const app = Fastify();
  // Directus 10.10 answers SEARCH on its collection routes (a query in the body): a read, as GET is
  app.addHttpMethod('SEARCH', { hasBody: true });
  const reads = new Set(['GET', 'HEAD', 'SEARCH']);
  const rewrite = (body: unknown, map: Map<string, string>): unknown =>
    JSON.parse(JSON.stringify(body), (_k, v) => (typeof v === 'string' && map.has(v.toLowerCase()) ? map.get(v.toLowerCase()) : v));
  app.all('/*', async (req, reply) => {
    const headers = typeof req.headers.authorization === 'string' ? { authorization: req.headers.authorization } : {};
    if (!reads.has(req.method) && !req.url.startsWith('/auth/')) {
      const raw = JSON.stringify({ data: { id: '9b2f8c0e-5d2a-4c3b-8f1e-2a6b7c8d9e0f', ...(req.body as object), status: 'draft' } });
      sent.push({ method: req.method, url: req.url, raw });
      return reply.status(200).type('application/json; charset=utf-8').header('x-legacy', 'yes').send(raw);
    }
    let url = req.url;
    for (const [legacy, refId] of toRef) url = url.split(legacy).join(refId);
    const res = await p.reference.inject({ method: req.method as 'GET', url, headers, ...(req.body ? { payload: req.body as object } : {}) });
    const type = String(res.headers['content-type'] ?? '');
    if (!type.includes('json')) {
      // not JSON (`/server/ping` answers `pong` as text): passed on as the reference answered it
      sent.push({ method: req.method, url: req.url, raw: res.body });
      return reply.status(res.statusCode).type(type || 'text/plain; charset=utf-8').header('x-legacy', 'yes').send(res.body);
    }
    const body: unknown = res.body ? JSON.parse(res.body) : null;
    const pairs: { type: string; uuid: string; v1Id: string }[] = [];
    for (const u of uuidsIn(body)) {
      if (toLegacy.has(u)) continue;
      // (the record resources: users keep their uuids, imported from the legacy system)
      for (const type of RECORD_RESOURCES) {
        const v1 = await p.referenceIds.toV1(type, u);
        if (!v1) continue;
        const legacy = uuidV5(v1, LEGACY_NS);
        toLegacy.set(u, legacy);
        toRef.set(legacy, u);
        pairs.push({ type, uuid: legacy, v1Id: v1 });
        break;
      }
    }
    if (pairs.length) await p.importPairs(pairs);
    const answer = rewrite(body, toLegacy) as Record<string, unknown> | null;
    for (const plant of p.plants ?? []) plant(req.url, answer);
    if (answer && typeof answer === 'object' && !req.url.startsWith('/auth/')) answer.served_at = `${Date.now()}-${Math.random()}`;
    const raw = JSON.stringify(answer);
    sent.push({ method: req.method, url: req.url, raw });
    return reply.status(res.statusCode).type('application/json; charset=utf-8').header('x-legacy', 'yes').send(raw);
  });
  return { app, sent };
}
