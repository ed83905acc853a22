import httpProxy from '@fastify/http-proxy';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { askLegacy, BackgroundWork, HOP_HEADERS, internalHeaders, isInternal } from '../compare/legacy-side.js';
import { parseBody, type Answer } from '../compare/service.js';
import { anyLegacyMode, routeMode, ROUTE_PREFIXES } from '../config/route-modes.js';
import type { Deps } from '../deps.js';
import { sha256 } from '../store/crypto.js';
import { routeFacts } from '../http/route-facts.js';
import { searchQuery } from '../query/search-body.js';

// SEARCH is a read (its question in the body): compared like GET, its body sent to both sides
const isWrite = (m: string) => m !== 'GET' && m !== 'HEAD' && m !== 'SEARCH';
/** @fastify/http-proxy's methods, and Directus's SEARCH. */
const PROXY_METHODS = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS', 'SEARCH'];
/** Which side produced an answer: `legacy` (proxy, shadow) or `gateway` (translated). */
export const ANSWERED_BY = 'x-gateway-answered-by';
const answeredByLegacy = { rewriteHeaders: (h: Record<string, unknown>) => ({ ...h, [ANSWERED_BY]: 'legacy' }) };
const templateOf = (req: FastifyRequest): string | undefined => routeFacts(req).url;
const routeOf = (req: FastifyRequest) => `${req.method} ${templateOf(req) ?? '(unmatched)'}`;
/** The request line a comparison records: a SEARCH's body (its question) follows its URL. */
const describeRequest = (req: FastifyRequest, body?: Buffer) =>
  `${req.method} ${req.url}${req.method === 'SEARCH' && body ? ` ${body.toString('utf8')}` : ''}`;
/** The question asked, before any preHandler: a SEARCH's body question, or the query string. */
function askedQuery(req: FastifyRequest, body?: Buffer): object {
  if (req.method !== 'SEARCH' || !body) return req.query as object;
  try { return searchQuery(JSON.parse(body.toString('utf8')), req.query).raw; } catch { return req.query as object; }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Resolves when every background comparison has ended (tests, shutdown). */
    comparisonsIdle: () => Promise<void>;
  }
}

/**
 * Per-route modes: translate (default), proxy (@fastify/http-proxy to LEGACY_BASE_URL), shadow (answer
 * from legacy byte for byte, translate and diff in the background), compare (answer translated, ask
 * legacy in the background and diff). Sampled, time-boxed, writes never mirrored unless COMPARE_WRITES.
 * Modes are decided by the route template the router matched, never by the raw URL.
 */
export async function registerModes(app: FastifyInstance, deps: Deps): Promise<void> {
  const { config } = deps;
  const legacyBase = config.LEGACY_BASE_URL;
  if (!anyLegacyMode(config) || !legacyBase) { app.decorate('comparisonsIdle', async () => {}); return; }
  for (const prefix of ROUTE_PREFIXES) {
    if (routeMode(config, prefix) === 'proxy') {
      await app.register(httpProxy, {
        upstream: legacyBase, prefix, rewritePrefix: prefix, http2: false, replyOptions: answeredByLegacy, httpMethods: PROXY_METHODS,
      });
      if (['/renders', '/projects', '/accounts', '/templates'].includes(prefix)) {
        const items = `/items${prefix}`;
        await app.register(httpProxy, {
          upstream: legacyBase, prefix: items, rewritePrefix: items, http2: false, replyOptions: answeredByLegacy, httpMethods: PROXY_METHODS,
        });
      }
    }
  }
  const sampled = () => Math.random() < config.COMPARE_SAMPLE_RATE;
  // which side answered: proxied and shadowed answers say legacy (app.ts marks everything else gateway)
  const work = new BackgroundWork((e) => app.log.warn({ err: e }, 'comparison failed'));
  app.decorate('comparisonsIdle', () => work.idle());
  app.addHook('onClose', () => work.idle());
  const ask = (method: string, url: string, headers: Record<string, unknown>, body: Buffer | undefined, ms: number) =>
    askLegacy(legacyBase, method, url, headers, body, ms);

  // who the legacy token belongs to, by email (cached per token digest)
  const people = new Map<string, string | null>();
  async function translatedSide(req: FastifyRequest, legacyHeaders: Record<string, unknown>, body?: Buffer): Promise<Answer | undefined> {
    const digest = sha256(String(legacyHeaders.authorization ?? ''));
    let userId = people.get(digest);
    if (userId === undefined) {
      const me = await ask('GET', '/users/me?fields=email', legacyHeaders, undefined, config.COMPARE_TIMEOUT_MS);
      const email = (me.body as { data?: { email?: string } })?.data?.email;
      userId = email ? (await deps.users.byEmail(email))?.id ?? null : null;
      people.set(digest, userId);
    }
    if (!userId) return undefined;
    const user = await deps.users.byId(userId);
    if (!user) return undefined;
    const token = await deps.jwt.sign({ id: user.id, role: user.role, app_access: true, admin_access: false });
    const started = performance.now();
    const res = await app.inject({
      method: req.method as 'GET', url: req.url, headers: { authorization: `Bearer ${token}`, ...internalHeaders(), 'content-type': 'application/json' },
      ...(req.method === 'SEARCH' && body ? { payload: body } : {}),
    });
    return { status: res.statusCode, body: parseBody(res.body), ms: performance.now() - started };
  }

  app.addHook('onRequest', async (req, reply) => {
    // the translated side of a comparison (our own inject, with our own JWT) takes the translate path
    const template = templateOf(req);
    if (isInternal(req.headers) || !template || routeMode(config, template) !== 'shadow') return;
    const chunks: Buffer[] = [];
    if (isWrite(req.method) || req.method === 'SEARCH') for await (const c of req.raw) chunks.push(c as Buffer);
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    const legacy = await ask(req.method, req.url, req.headers, body, Math.max(config.COMPARE_TIMEOUT_MS, config.V1_TIMEOUT_MS));
    for (const [k, v] of Object.entries(legacy.headers)) if (!HOP_HEADERS.has(k) && v !== undefined) void reply.header(k, v);
    void reply.header(ANSWERED_BY, 'legacy');
    void reply.status(legacy.status).send(legacy.raw);
    if ((!isWrite(req.method) || config.COMPARE_WRITES) && sampled()) {
      const headers = { ...req.headers };
      work.run(async () => {
        const translated = await translatedSide(req, headers, body);
        if (!translated) return;
        const resend = req.method === 'SEARCH' ? body : undefined;
        const again = deps.mappings.comparison.noiseRepeat ? await ask(req.method, req.url, headers, resend, config.COMPARE_TIMEOUT_MS) : undefined;
        const unsorted = !('sort' in askedQuery(req, body));
        const diffs = await deps.comparator.compare(routeOf(req), describeRequest(req, body), unsorted, legacy, translated, again);
        deps.metrics.comparisonDiffs(routeOf(req), diffs.length);
      });
    }
    return reply;
  });

  app.addHook('onSend', async (req, reply, payload) => {
    const template = templateOf(req);
    if (isInternal(req.headers) || !template || routeMode(config, template) !== 'compare') return payload;
    if (isWrite(req.method) && !config.COMPARE_WRITES) return payload;
    // answers are strings (or bytes); streams are not compared
    const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
    if (!sampled() || text === null) return payload;
    const translated: Answer = { status: reply.statusCode, body: parseBody(text), ms: reply.elapsedTime };
    const headers = { ...req.headers };
    // a SEARCH's question (its body) goes to the legacy side too; req.query is already the body's question
    const body = req.method === 'SEARCH' && req.body !== undefined ? Buffer.from(JSON.stringify(req.body)) : undefined;
    work.run(async () => {
      const legacy = await ask(req.method, req.url, headers, body, config.COMPARE_TIMEOUT_MS);
      const again = deps.mappings.comparison.noiseRepeat ? await ask(req.method, req.url, headers, body, config.COMPARE_TIMEOUT_MS) : undefined;
      const unsorted = !('sort' in (req.query as object));
      const diffs = await deps.comparator.compare(routeOf(req), describeRequest(req, body), unsorted, legacy, translated, again);
      deps.metrics.comparisonDiffs(routeOf(req), diffs.length);
    });
    return payload;
  });
}
