import httpProxy from '@fastify/http-proxy';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { request as undiciRequest } from 'undici';
import { parseBody, type Answer } from '../compare/service.js';
import { routeMode, ROUTE_PREFIXES } from '../config/schema.js';
import type { Deps } from '../deps.js';
import { randomToken, sha256 } from '../store/crypto.js';

const INTERNAL = 'x-gateway-compare-internal';
/** A per-process secret marks the gateway's own translated-side requests; clients cannot forge it. */
const INTERNAL_SECRET = randomToken(24);
export const isInternal = (headers: Record<string, unknown>) => headers[INTERNAL] === INTERNAL_SECRET;

const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'host', 'content-length']);
const isWrite = (m: string) => m !== 'GET' && m !== 'HEAD';

/** Sends a request to the legacy backend as it came (the legacy token goes as it is). */
async function askLegacy(deps: Deps, method: string, url: string, headers: Record<string, unknown>, body: Buffer | undefined, timeoutMs: number): Promise<Answer & { raw: Buffer; headers: Record<string, string | string[] | undefined> }> {
  const started = performance.now();
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (!HOP.has(k) && k !== INTERNAL && typeof v === 'string') h[k] = v;
  const res = await undiciRequest(new URL(url, deps.config.LEGACY_BASE_URL), { method: method as 'GET', headers: h, body, signal: AbortSignal.timeout(timeoutMs) });
  const raw = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, raw, body: parseBody(raw.toString('utf8')), ms: performance.now() - started, headers: res.headers };
}

const routeOf = (req: FastifyRequest) => `${req.method} ${req.routeOptions.url ?? req.url.split('?')[0]}`;

/**
 * Per-route modes: translate (default), proxy (@fastify/http-proxy to LEGACY_BASE_URL), shadow (answer
 * from legacy byte for byte, translate and diff in the background), compare (answer translated, ask
 * legacy in the background and diff). Sampled, time-boxed, writes never mirrored unless COMPARE_WRITES.
 */
declare module 'fastify' {
  interface FastifyInstance {
    /** Resolves when every background comparison has ended (tests, shutdown). */
    comparisonsIdle: () => Promise<void>;
  }
}

export async function registerModes(app: FastifyInstance, deps: Deps): Promise<void> {
  const { config } = deps;
  if (!config.ROUTE_MODES || !config.LEGACY_BASE_URL) { app.decorate('comparisonsIdle', async () => {}); return; }
  for (const prefix of ROUTE_PREFIXES) {
    if (routeMode(config, prefix) === 'proxy') {
      await app.register(httpProxy, { upstream: config.LEGACY_BASE_URL, prefix, rewritePrefix: prefix, http2: false });
    }
  }
  const sampled = () => Math.random() < config.COMPARE_SAMPLE_RATE;
  const running = new Set<Promise<void>>();
  // after the answer is sent: never slows it down
  const background = (fn: () => Promise<void>) => setImmediate(() => {
    const p = fn().catch((e: unknown) => app.log.warn({ err: e }, 'comparison failed')).finally(() => running.delete(p));
    running.add(p);
  });
  const idle = async () => { await new Promise((r) => setImmediate(r)); while (running.size > 0) await Promise.allSettled([...running]); };
  app.decorate('comparisonsIdle', idle);
  app.addHook('onClose', idle);
  // who the legacy token belongs to, by email (cached per token digest)
  const people = new Map<string, string | null>();
  async function translatedSide(req: FastifyRequest, legacyHeaders: Record<string, unknown>): Promise<Answer | undefined> {
    const digest = sha256(String(legacyHeaders.authorization ?? ''));
    let userId = people.get(digest);
    if (userId === undefined) {
      const me = await askLegacy(deps, 'GET', '/users/me?fields=email', legacyHeaders, undefined, config.COMPARE_TIMEOUT_MS);
      const email = (me.body as { data?: { email?: string } })?.data?.email;
      userId = email ? (await deps.users.byEmail(email))?.id ?? null : null;
      people.set(digest, userId);
    }
    if (!userId) return undefined;
    const user = await deps.users.byId(userId);
    if (!user) return undefined;
    const token = await deps.jwt.sign({ id: user.id, role: user.role, app_access: true, admin_access: false });
    const started = performance.now();
    const res = await app.inject({ method: req.method as 'GET', url: req.url, headers: { authorization: `Bearer ${token}`, [INTERNAL]: INTERNAL_SECRET, 'content-type': 'application/json' } });
    return { status: res.statusCode, body: parseBody(res.body), ms: performance.now() - started };
  }

  app.addHook('onRequest', async (req, reply) => {
    // the translated side of a comparison (our own inject, with our own JWT) takes the translate path
    if (isInternal(req.headers)) return;
    if (routeMode(config, req.url) !== 'shadow') return;
    const chunks: Buffer[] = [];
    if (isWrite(req.method)) for await (const c of req.raw) chunks.push(c as Buffer);
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    const legacy = await askLegacy(deps, req.method, req.url, req.headers, body, Math.max(config.COMPARE_TIMEOUT_MS, config.V1_TIMEOUT_MS));
    for (const [k, v] of Object.entries(legacy.headers)) if (!HOP.has(k) && v !== undefined) void reply.header(k, v);
    void reply.status(legacy.status).send(legacy.raw);
    if ((!isWrite(req.method) || config.COMPARE_WRITES) && sampled()) {
      const headers = { ...req.headers };
      background(async () => {
        const translated = await translatedSide(req, headers);
        if (!translated) return;
        const again = deps.mappings.comparison.noiseRepeat ? await askLegacy(deps, req.method, req.url, headers, undefined, config.COMPARE_TIMEOUT_MS) : undefined;
        await deps.comparator.compare(routeOf(req), `${req.method} ${req.url}`, !('sort' in (req.query as object)), legacy, translated, again);
      });
    }
    return reply;
  });

  app.addHook('onSend', async (req, reply, payload) => {
    if (isInternal(req.headers) || routeMode(config, req.url) !== 'compare') return payload;
    if (isWrite(req.method) && !config.COMPARE_WRITES) return payload;
    if (!sampled() || typeof payload !== 'string') return payload;
    const translated: Answer = { status: reply.statusCode, body: parseBody(payload), ms: reply.elapsedTime };
    const headers = { ...req.headers };
    background(async () => {
      const legacy = await askLegacy(deps, req.method, req.url, headers, undefined, config.COMPARE_TIMEOUT_MS);
      const again = deps.mappings.comparison.noiseRepeat ? await askLegacy(deps, req.method, req.url, headers, undefined, config.COMPARE_TIMEOUT_MS) : undefined;
      await deps.comparator.compare(routeOf(req), `${req.method} ${req.url}`, !('sort' in (req.query as object)), legacy, translated, again);
    });
    return payload;
  });
}

/** True when the prefix is passed through to the legacy backend (no translated route is registered). */
export function proxied(deps: Deps, path: string): boolean {
  return !!deps.config.LEGACY_BASE_URL && routeMode(deps.config, path) === 'proxy';
}

/** True when a path's requests are answered by the legacy backend (our authentication does not apply). */
export function legacyAnswers(deps: Deps, path: string): boolean {
  const m = routeMode(deps.config, path);
  return m === 'proxy' || m === 'shadow';
}

