import Fastify from 'fastify';
import { uuidsIn } from '../../src/compare/diff.js';
import { uuidV5 } from '../../src/lib/uuid.js';
import { ID_TYPES, type IdType } from '../../src/translate/ids.js';
import type { TestGateway } from './gateway.js';

const LEGACY_NS = '0e3c1a6e-4f1b-5b6a-9d2e-7c8b9a0f1e2d';

export interface LegacyBackend {
  url: string;
  /** Raw bytes of every answer, in order (shadow mode must return them unchanged). */
  sent: { method: string; url: string; raw: string }[];
  /** Mutations applied to answers: planted differences. */
  plants: ((url: string, body: any) => void)[];
  close(): Promise<void>;
}

/**
 * A legacy-like backend: it answers legacy requests with what a reference gateway over the same v1 data
 * answers, but with the legacy system's own uuids (the pairs are given to the gateway under test's id
 * map, as a migration export would), a noisy `served_at` field, and any planted differences.
 */
export async function startLegacyBackend(ref: TestGateway, refToken: string, under: () => TestGateway, tokens: Record<string, string>): Promise<LegacyBackend> {
  const toLegacy = new Map<string, string>();
  const toRef = new Map<string, string>();
  const sent: LegacyBackend['sent'] = [];
  const plants: LegacyBackend['plants'] = [];
  const app = Fastify();
  const rewrite = (body: unknown, map: Map<string, string>): unknown => JSON.parse(JSON.stringify(body), (_k, v) => (typeof v === 'string' && map.has(v.toLowerCase()) ? map.get(v.toLowerCase()) : v));
  app.all('/*', async (req, reply) => {
    // Directus reads the token from the Authorization header or the access_token query parameter
    const queryToken = (req.query as Record<string, unknown>).access_token;
    const email = tokens[String(req.headers.authorization ?? '').replace(/^Bearer /, '') || (typeof queryToken === 'string' ? queryToken : '')];
    if (!email) return reply.status(401).send({ errors: [{ message: 'Invalid user credentials.', extensions: { code: 'INVALID_CREDENTIALS' } }] });
    // (the legacy system's user id: the gateway's users were imported with it, as `users import` keeps them)
    if (req.url.startsWith('/users/me')) return { data: { id: (await under().deps.users.byEmail(email))?.id ?? 'legacy-user', email } };
    if (req.method !== 'GET') {
      // writes get a recorded answer: the legacy system's data must not drift from the gateway's
      const raw = JSON.stringify({ data: { id: '9b2f8c0e-5d2a-4c3b-8f1e-2a6b7c8d9e0f', ...(req.body as object), status: 'draft' } });
      sent.push({ method: req.method, url: req.url, raw });
      return reply.status(200).type('application/json; charset=utf-8').header('x-legacy', 'yes').send(raw);
    }
    let url = req.url;
    for (const [legacy, refId] of toRef) url = url.split(legacy).join(refId);
    const res = await ref.app.inject({ method: req.method as 'GET', url, headers: { authorization: `Bearer ${refToken}` }, ...(req.body ? { payload: req.body as object } : {}) });
    const body = res.body ? JSON.parse(res.body) : null;
    // the legacy system's own uuids, paired to the v1 ids in the gateway's id map (a migration export)
    const pairs: { type: string; uuid: string; v1Id: string }[] = [];
    for (const u of uuidsIn(body)) {
      if (toLegacy.has(u)) continue;
      for (const type of Object.keys(ID_TYPES) as IdType[]) {
        const v1 = await ref.deps.ids.toV1(type, u);
        if (!v1) continue;
        const legacy = uuidV5(v1, LEGACY_NS);
        toLegacy.set(u, legacy);
        toRef.set(legacy, u);
        pairs.push({ type, uuid: legacy, v1Id: v1 });
        break;
      }
    }
    if (pairs.length) await under().deps.idMap.importPairs(pairs);
    const answer = rewrite(body, toLegacy) as any;
    for (const p of plants) p(req.url, answer);
    if (answer && typeof answer === 'object') answer.served_at = `${Date.now()}-${Math.random()}`;
    const raw = JSON.stringify(answer);
    sent.push({ method: req.method, url: req.url, raw });
    return reply.status(res.statusCode).type('application/json; charset=utf-8').header('x-legacy', 'yes').send(raw);
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, sent, plants, close: () => app.close() };
}
