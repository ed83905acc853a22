import type { Mappings } from '../config/mappings.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { JwtService } from '../auth/jwt.js';
import type { Config } from '../config/schema.js';
import { routeMode } from '../config/route-modes.js';
import { errors, GatewayError } from '../errors/catalog.js';
import { routeFacts } from '../auth/route-facts.js';
import type { Metrics } from '../ops/metrics.js';
import { searchQuery } from '../query/search-body.js';
import { sha256 } from '../store/crypto.js';
import { peerKey } from '../lib/peer.js';
import type { UserStore } from '../store/users.js';
import { questionText, queryText } from '../query/querystring.js';
import { askLegacy, BackgroundWork, HOP_HEADERS, internalHeaders, isInternal } from '../compare/legacy-side.js';
import { requestLine } from '../compare/redact.js';
import { parseBody, type Answer, type Comparator } from '../compare/service.js';
import type { ShapeRecorder } from '../migrate/recorder.js';
import { comparedRequest } from '../migrate/seen.js';

/** Which side produced an answer: `legacy` (proxy, shadow) or `gateway` (translated). */
export const ANSWERED_BY = 'x-gateway-answered-by';
// SEARCH is a read (its question in the body): compared like GET, its body sent to both sides
const isWrite = (m: string) => m !== 'GET' && m !== 'HEAD' && m !== 'SEARCH';
const templateOf = (req: FastifyRequest): string | undefined => routeFacts(req).url;
const routeOf = (req: FastifyRequest) => `${req.method} ${templateOf(req) ?? '(unmatched)'}`;
/** The request line a comparison records: a SEARCH's body (its question, credentials redacted) follows its URL. */
const describeRequest = (req: FastifyRequest, body?: Buffer) => requestLine(req.method, req.url, req.method === 'SEARCH' ? body : undefined);
/** The question asked, before any preHandler: a SEARCH's body question, or the query string. */
function askedQuery(req: FastifyRequest, body?: Buffer): object {
  if (req.method !== 'SEARCH' || !body) return req.query as object;
  try { return searchQuery(JSON.parse(body.toString('utf8')), req.query).raw; } catch { return req.query as object; }
}

/**
 * A shadowed request's body, read before any parser (the route's body limit does not apply here): at most `max` bytes,
 * as on every other route; past it, 400 INVALID_PAYLOAD and nothing is sent on.
 */
async function bodyOf(req: FastifyRequest, max: number): Promise<Buffer | undefined> {
  const tooLarge = () => errors.invalidPayload('request entity too large');
  if (Number(req.headers['content-length'] ?? 0) > max) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req.raw) {
      size += (chunk as Buffer).length;
      if (size > max) throw tooLarge();
      chunks.push(chunk as Buffer);
    }
  } catch (e) {
    // a client that hung up mid-body is no unexpected error (attack pass 21, L-b: each was logged as one, with its stack)
    if (e instanceof Error && !(e instanceof GatewayError)) throw errors.invalidPayload('The request body ended early: the client closed the connection');
    throw e;
  }
  return chunks.length ? Buffer.concat(chunks) : undefined;
}

/** The credential a request carries to the legacy side: its Bearer token, `access_token`, or session cookie. */
function credentialOf(req: FastifyRequest, headers: Record<string, unknown>): string | undefined {
  // (as Directus and the gateway read one: an Authorization header counts only as a Bearer token — a site-wide Basic login
  // every caller sends was taken as one caller, the first user seen with it: others compared, and with COMPARE_WRITES
  // wrote, as that user for 10 minutes — attack pass 28, H-1)
  const bearer = typeof headers.authorization === 'string' ? /^Bearer\s+(.+)$/i.exec(headers.authorization.trim())?.[1]?.trim() : undefined;
  if (bearer) return `h ${bearer}`;
  const q = new URLSearchParams(queryText(req.url)).get('access_token');
  if (q) return `q ${q}`;
  const cookie = typeof headers.cookie === 'string' ? /(?:^|;\s*)directus_session_token=([^;]+)/.exec(headers.cookie)?.[1] : undefined;
  return cookie ? `c ${cookie}` : undefined;
}

/** The gateway's own answer to a request (an in-process request through the translate path). */
export type Inject = (o: { method: string; url: string; headers: Record<string, string>; payload?: Buffer }) =>
  Promise<{ statusCode: number; body: string }>;

/** What the comparison modes use, given by the composition root (and the app's `inject`). */
export interface ModesDeps {
  readonly config: Pick<Config, 'routeModes' | 'LEGACY_BASE_URL' | 'COMPARE_SAMPLE_RATE' | 'COMPARE_TIMEOUT_MS' | 'COMPARE_WRITES' | 'V1_TIMEOUT_MS'
    | 'MAX_PAYLOAD_BYTES' | 'COMPARE_IN_FLIGHT' | 'COMPARE_MATCH_BY_EMAIL'>;
  readonly users: Pick<UserStore, 'byEmail' | 'byId'>;
  readonly jwt: Pick<JwtService, 'sign'>;
  readonly comparator: Comparator;
  readonly metrics: Pick<Metrics, 'comparisonDiffs' | 'comparisonsSkipped'>;
  /** Ask the legacy side twice, to tell noise from differences (mappings/comparison.json). */
  readonly noiseRepeat: boolean;
  /** The User-Agent families clients are named by (mappings/clients.json). */
  readonly mappings: Pick<Mappings, 'userAgentFamilies'>;
  readonly logger: Logger;
  /** Client profiles: each comparison counted per client and query shape (the migration report's diff rates). */
  readonly shapes?: Pick<ShapeRecorder, 'noteCompared'>;
}

/**
 * The shadow and compare modes: shadow answers from the legacy side byte for byte and diffs the translated answer in
 * the background; compare answers translated and asks the legacy side in the background. Sampled, time-boxed, writes
 * never mirrored unless COMPARE_WRITES; modes decided by the route template the router matched, never the raw URL.
 */
export class ComparisonModes {
  private readonly work: BackgroundWork;
  /** Who a legacy token belongs to, by its legacy user (per token digest). */
  private readonly people = new LRUCache<string, string>({ max: 10_000, ttl: 600_000 });

  constructor(private readonly deps: ModesDeps, private readonly legacyBase: string, private readonly inject: Inject) {
    // (a caller holds half the places, one at least: a lone client's requests in a row still overlap — a quarter skipped
    // the second of two sequential reads whose first comparison was still running)
    const most = deps.config.COMPARE_IN_FLIGHT;
    this.work = new BackgroundWork((e) => deps.logger.warn({ err: e }, 'comparison failed'), most, Math.ceil(most / 2));
    deps.metrics.comparisonsSkipped(this.work);
  }

  /** Resolves when every background comparison has ended. */
  idle(): Promise<void> { return this.work.idle(); }

  private sampled(): boolean { return Math.random() < this.deps.config.COMPARE_SAMPLE_RATE; }

  private ask(method: string, url: string, headers: Record<string, unknown>, body: Buffer | undefined, ms: number) {
    return askLegacy(this.legacyBase, method, url, headers, body, ms);
  }

  /** A shadowed route: the legacy answer is sent (true); false when the request is not the shadow's to answer. */
  async shadow(
    req: FastifyRequest, reply: FastifyReply, admit: (req: FastifyRequest, reply: FastifyReply, bytes: number) => GatewayError | undefined,
  ): Promise<boolean> {
    const c = this.deps.config;
    // the translated side of a comparison (our own inject, with our own JWT) takes the translate path
    const template = templateOf(req);
    if (isInternal(req.headers) || !template || routeMode(c, template) !== 'shadow') return false;
    const body = isWrite(req.method) || req.method === 'SEARCH' ? await bodyOf(req, c.MAX_PAYLOAD_BYTES) : undefined;
    // (a request without a credential takes its address's place once its body is read: a trickled body holds none)
    const refused = admit(req, reply, body?.length ?? 0);
    if (refused) throw refused;
    // (a legacy side down or silent is a 503 in the envelope, as v1's is: attack pass 19, F4 — a 500 each)
    const legacy = await this.ask(req.method, req.url, req.headers, body, Math.max(c.COMPARE_TIMEOUT_MS, c.V1_TIMEOUT_MS)).catch((e: unknown) => {
      const why = (e as { code?: unknown; name?: unknown }).code ?? (e as { name?: unknown }).name ?? 'no answer';
      throw errors.serviceUnavailable(`The legacy backend did not answer (${String(why)}).`, 'legacy');
    });
    for (const [k, v] of Object.entries(legacy.headers)) if (!HOP_HEADERS.has(k) && v !== undefined) void reply.header(k, v);
    void reply.header(ANSWERED_BY, 'legacy');
    void reply.status(legacy.status).send(legacy.raw);
    // (a request with no credential is not compared: see translatedSide)
    const credential = credentialOf(req, req.headers);
    if ((!isWrite(req.method) || c.COMPARE_WRITES) && credential && this.sampled()) {
      const headers = { ...req.headers };
      // (the caller: the gateway user its credential was found to be — many tokens of one user are one caller —, or, not
      // known yet, its address: a client rotating credentials, each a caller of its own, took every place — the review
      // of attack pass 27)
      const known = this.people.get(sha256(credential));
      this.work.run(known ? `u ${known}` : `a ${peerKey(req.ip)}`, async () => {
        const translated = await this.translatedSide(req, headers, body);
        if (!translated) return;
        // the noise check asks the legacy side again for reads only: a write asked again would be a second write
        const again = this.deps.noiseRepeat && !isWrite(req.method) ? await this.ask(req.method, req.url, headers, body, c.COMPARE_TIMEOUT_MS) : undefined;
        await this.record(req, body, !('sort' in askedQuery(req, body)), legacy, translated, again, translated.userId);
      });
    }
    return true;
  }

  /** A compared route: the translated answer (`payload`) is diffed with the legacy side's in the background. */
  compareAfter(req: FastifyRequest, status: number, elapsedMs: number, payload: unknown): void {
    try {
      this.compareLater(req, status, elapsedMs, payload);
    } catch (e) {
      // (an onSend hook: nothing here may change the answer already made)
      this.deps.logger.warn({ err: e }, 'comparison not started');
    }
  }

  private compareLater(req: FastifyRequest, status: number, elapsedMs: number, payload: unknown): void {
    const c = this.deps.config;
    const template = templateOf(req);
    if (isInternal(req.headers) || !template || routeMode(c, template) !== 'compare') return;
    // only requests the gateway authenticated: refused ones would be compared refusal to refusal (flooding a route
    // towards a 0 % diff rate, and doubling anonymous traffic to the legacy backend)
    if (!req.principal) return;
    if (isWrite(req.method) && !c.COMPARE_WRITES) return;
    // answers are strings (or bytes); streams are not compared
    const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
    if (!this.sampled() || text === null) return;
    const translated: Answer = { status, body: parseBody(text), ms: elapsedMs };
    const headers = { ...req.headers };
    // a SEARCH's question (its body) and a write's body go to the legacy side too; req.query is already the body's question
    const body = (req.method === 'SEARCH' || isWrite(req.method)) && req.body !== undefined ? Buffer.from(JSON.stringify(req.body)) : undefined;
    this.work.run(`u ${req.principal.user.id}`, async () => {
      const legacy = await this.ask(req.method, req.url, headers, body, c.COMPARE_TIMEOUT_MS);
      // (reads only: a write asked again would be a second write)
      const again = this.deps.noiseRepeat && !isWrite(req.method) ? await this.ask(req.method, req.url, headers, body, c.COMPARE_TIMEOUT_MS) : undefined;
      await this.record(req, body, !('sort' in (req.query as object)), legacy, translated, again);
    });
  }

  private async record(
    req: FastifyRequest, body: Buffer | undefined, unsorted: boolean, legacy: Answer, translated: Answer, again?: Answer, userId?: string,
  ) {
    // the client the comparison is counted for (client profiles) and its samples name
    const who = req.principal?.user.id ?? userId;
    const question = req.method === 'SEARCH' ? `\u0000${body?.toString('utf8') ?? ''}` : questionText(req.url);
    const asked = askedQuery(req, body);
    const seen = who ? comparedRequest(req, who, asked, question, this.deps.mappings.userAgentFamilies) : undefined;
    const about = { ...(seen ? { client: seen.client } : {}), alias: (asked as { alias?: unknown }).alias };
    const diffs = await this.deps.comparator.compare(routeOf(req), describeRequest(req, body), unsorted, legacy, translated, again, about);
    this.deps.metrics.comparisonDiffs(routeOf(req), diffs.length);
    if (seen) this.deps.shapes?.noteCompared(seen, diffs.length > 0);
  }

  /**
   * The gateway user the legacy side's user is: the one with its id (`users import` keeps the legacy uuids, `users add
   * --id` sets one). By the email only when COMPARE_MATCH_BY_EMAIL says so: an email is not an identity — one changed on
   * either side made a caller compare (and, with COMPARE_WRITES, write) as whoever holds that email on the gateway.
   */
  private async sameUser(legacy: { id?: unknown; email?: unknown } | undefined): Promise<string | undefined> {
    if (typeof legacy?.id === 'string' && legacy.id.length > 0 && legacy.id.length <= 128) {
      const byId = await this.deps.users.byId(legacy.id);
      if (byId) return byId.id;
    }
    if (!this.deps.config.COMPARE_MATCH_BY_EMAIL || typeof legacy?.email !== 'string' || legacy.email.length > 254) return undefined;
    return (await this.deps.users.byEmail(legacy.email))?.id;
  }

  private async translatedSide(req: FastifyRequest, legacyHeaders: Record<string, unknown>, body?: Buffer): Promise<(Answer & { userId: string }) | undefined> {
    // who the legacy side knows this caller as, by the credential the request really carries (header, access_token or
    // session cookie): requests without one are not compared (they would all share one cached identity)
    const credential = credentialOf(req, legacyHeaders);
    if (!credential) return undefined;
    const digest = sha256(credential);
    let userId = this.people.get(digest);
    if (userId === undefined) {
      // (with the credential the request carries: a token in the query goes in the query — the look-up went without it)
      const inQuery = credential.startsWith('q ') ? `&access_token=${encodeURIComponent(credential.slice(2))}` : '';
      const me = await this.ask('GET', `/users/me?fields=id,email${inQuery}`, legacyHeaders, undefined, this.deps.config.COMPARE_TIMEOUT_MS);
      userId = await this.sameUser((me.body as { data?: { id?: unknown; email?: unknown } } | null)?.data);
      if (!userId) return undefined; // (not remembered: a legacy hiccup must not stop this caller's comparisons for good)
      this.people.set(digest, userId);
    }
    const user = await this.deps.users.byId(userId);
    if (!user) return undefined;
    const token = await this.deps.jwt.sign({ id: user.id, role: user.role, app_access: true, admin_access: false });
    const started = performance.now();
    // the question of a SEARCH and the body of a write (COMPARE_WRITES) as the client sent them
    const type = typeof req.headers['content-type'] === 'string' ? req.headers['content-type'] : 'application/json';
    const res = await this.inject({
      method: req.method, url: req.url, headers: { authorization: `Bearer ${token}`, ...internalHeaders(), 'content-type': type },
      ...(body ? { payload: body } : {}),
    });
    return { status: res.statusCode, body: parseBody(res.body), ms: performance.now() - started, userId: user.id };
  }
}
