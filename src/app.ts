import { createHash, randomUUID } from 'node:crypto';
import Fastify, {
  LogController, type FastifyBaseLogger, type FastifyServerOptions, type FastifyInstance, type FastifyReply, type FastifyRequest,
} from 'fastify';
import { authenticate, authenticateHeld } from './auth/authenticate.js';
import './auth/guards.js';
import { legacyAnswers, routeMode } from './config/route-modes.js';
import type { Deps } from './deps.js';
import { errorEnvelope, errors, type GatewayError } from './errors/catalog.js';
import { registerErrorHandling } from './errors/handler.js';
import { BODIES_IN_FLIGHT_BYTES, BodyGate, PRINCIPAL_BODY_BYTES, PRINCIPAL_BODY_LINE } from './http/body-gate.js';
import { answerEnd } from './read/answer-end.js';
import { AnonymousGate } from './http/anonymous-gate.js';
import { afterRequest, whenSent, trackRequestEnds } from './http/request-end.js';
import { capPipelines, PipelineCap } from './http/pipeline-cap.js';
import { SendWatch, watchSends } from './http/send-watch.js';
import { capConnections, trustedPeer } from './http/connection-cap.js';
import { isInternal } from './compare/legacy-side.js';
import { registerCors } from './http/cors.js';
import { limitJsonDepth } from './http/json-body.js';
import { enableSearch } from './http/search.js';
import { accessLogger, lazyChildLogger } from './log/logger.js';
import { requestToken } from './auth/request-token.js';
import { routeFacts } from './auth/route-facts.js';
import { deferQuery, parseQueries, queryRefusal, refusedQuery } from './http/deferred-query.js';
import { AUTH_BODY_BYTES, registerAuthRoutes } from './routes/auth.js';
import { registerGatewayRoutes } from './routes/gateway.js';
import { registerDeprecationRoutes } from './routes/deprecations.js';
import { registerDeprecations } from './http/deprecation-hook.js';
import { registerItemRoutes } from './routes/items.js';
import { registerWriteRoutes } from './routes/writes.js';
import { registerWebhookRoutes } from './routes/webhooks.js';
import { ANSWERED_BY, registerModes } from './routes/modes.js';
import { registerUserRoutes } from './routes/users.js';
import { registerServerRoutes } from './routes/server.js';
import { registerSpecRoutes } from './routes/server-specs.js';
import { registerSchemaRoutes } from './routes/schema.js';
import { V1UnauthorizedError } from './v1/errors.js';
import { seenRequest } from './migrate/seen.js';


/** A connection closed, or ended by its client (an HTTP/1.1 client closes; it does not half-close and wait). */
const clientGone = (socket: { destroyed?: boolean; readableEnded?: boolean } | null | undefined): boolean =>
  !socket || !!socket.destroyed || !!socket.readableEnded;

/** An incoming X-Request-Id is kept when it is short and plain (letters, digits, `._:-`, ≤ 128); otherwise a new uuid. */
export function requestIdOf(header: string | string[] | undefined): string {
  const v = Array.isArray(header) ? header[0] : header;
  return v && /^[A-Za-z0-9._:-]{1,128}$/.test(v) ? v : randomUUID();
}

/** The most bytes of a body read without a principal on a route that needs one (AUTH_BODY_BYTES, as a login's). */
const ANONYMOUS_BODY_BYTES = AUTH_BODY_BYTES;

/** What the authentication hook does for a request, by the route the router matched. */
function accessOf(request: FastifyRequest): 'legacy' | 'public' | 'operator' | 'signed' {
  return routeFacts(request).access;
}

/** TRUST_PROXY as Fastify takes it: a number of proxies trusts that many hops nearest the gateway (proxy-addr's rule). */
const trusted = (t: boolean | number | string[]) => (typeof t === 'number' ? (_address: string, hop: number) => hop < t : t);

/** A credential's name in the gates (never the credential itself). */
const digest = (token: string): string => createHash('sha256').update(token).digest('base64url').slice(0, 22);

/** The reason phrases of what the gateway answers on a bare socket. */
const REASONS: Record<number, string> = { 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/** Node checks its connections for HTTP_REQUEST_TIMEOUT_MS this often (its default, 30 s, doubles a short bound). */
const requestChecks = (timeoutMs: number) => (timeoutMs > 0
  ? { connectionsCheckingInterval: Math.max(250, Math.min(5_000, Math.floor(timeoutMs / 4))), headersTimeout: Math.min(60_000, timeoutMs) }
  : {});

/** Methods whose request body Fastify never reads. */
const BODYLESS = new Set(['GET', 'HEAD', 'TRACE']);

/** Builds the gateway (never listens): legacy routes, auth, operator routes, error envelope. */
export async function buildApp(deps: Deps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as unknown as FastifyBaseLogger,
    bodyLimit: deps.config.MAX_PAYLOAD_BYTES,
    // a socket idle this long is closed (a client that stopped reading no longer pins its answer's memory)
    connectionTimeout: deps.config.HTTP_IDLE_TIMEOUT_MS,
    // … and a request not sent whole in time is a 408 (a body trickled in held its places: attack pass 20, N3/N4)
    requestTimeout: deps.config.HTTP_REQUEST_TIMEOUT_MS,
    http: requestChecks(deps.config.HTTP_REQUEST_TIMEOUT_MS),
    trustProxy: trusted(deps.config.TRUST_PROXY),
    genReqId: (req) => requestIdOf(req.headers['x-request-id']),
    // one access-log line per request (onResponse below), not Fastify's two
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLogger as unknown as NonNullable<FastifyServerOptions['childLoggerFactory']>,
    routerOptions: { ignoreTrailingSlash: true, querystringParser: deferQuery },
    // a malformed URL (bad percent-encoding) answers in the Directus envelope too; a path segment past the router's
    // length (a collection or an id of thousands of characters) names nothing the key may read: 403, as Directus answers
    // an unknown collection or item — it echoed the whole URL in a 400 (attack pass 23, L2)
    frameworkErrors: (err, request, reply) => {
      const path = request.url.split('?')[0] ?? request.url;
      const ge = err.code === 'FST_ERR_BAD_URL' ? errors.routeNotFound(path)
        : err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? errors.forbidden() : errors.invalidPayload(err.message);
      void (reply as unknown as { status(n: number): { send(b: unknown): void } }).status(ge.status).send(errorEnvelope(ge));
    },
  });
  registerErrorHandling(app);
  enableSearch(app);
  limitJsonDepth(app);
  trackRequestEnds(app);
  // an answer whose reader took nothing for HTTP_IDLE_TIMEOUT_MS: its connection closed (Node's timer allowed twice that)
  watchSends(app, new SendWatch(deps.config.HTTP_IDLE_TIMEOUT_MS, Date.now,
    () => deps.logger.warn({ idleMs: deps.config.HTTP_IDLE_TIMEOUT_MS }, 'a reader took nothing of its answer for the idle bound: its connection is closed')));
  const accessLine = accessLogger(deps.logger);
  app.addHook('onClose', (_app, done) => { accessLine.flush(); done(); });
  // first of all (CORS preflights and shadow mode may answer from their own hooks): the request id goes back in every
  // answer, into every log line (reqId) and on every v1 call; the side that answered is the gateway unless proxy or
  // shadow mode says legacy (their answers set the header again)
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id).header(ANSWERED_BY, 'gateway');
    done();
  });
  // requests worked on at once per connection (pipelined ones wait their turn, the connection not read meanwhile)
  deps.metrics.pipelines(capPipelines(app, new PipelineCap({ exempt: trustedPeer(deps.config.TRUST_PROXY) })));
  // the query string parsed once the request's turn has come (a waiting one holds its raw text only)
  parseQueries(app);
  await registerCors(app, deps.config, deps.logger);
  const connections = capConnections(app.server, deps.config.MAX_CONNECTIONS_PER_ADDRESS, deps.config.TRUST_PROXY);
  // a connection whose request is being worked on (its body read, its handler running) is not the one a new connection
  // of its address evicts; one sending its answer is (256 readers that stopped reading shut their address out with 429s:
  // attack pass 22, P4)
  if (connections) {
    app.addHook('onRequest', (request, reply, done) => {
      afterRequest(reply, connections.begin(request.raw.socket));
      done();
    });
    app.addHook('preHandler', (request, reply, done) => {
      const end = connections.work(request.raw.socket);
      whenSent(reply, end);
      afterRequest(reply, end);
      done();
    });
  }
  // what Node's HTTP parser refuses before Fastify sees a request (malformed HTTP, oversized headers, a request not sent
  // in time) answers in the Directus envelope too, then the connection closes
  app.server.removeAllListeners('clientError');
  app.server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) { socket.destroy(); return; }
    const ge = err.code === 'HPE_HEADER_OVERFLOW' ? errors.headersTooLarge()
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? errors.requestTimeout() : errors.invalidPayload('The request is not valid HTTP');
    if (ge.status === 408) deps.logger.info({ ip: (socket as { remoteAddress?: string }).remoteAddress, res: { statusCode: 408 } }, 'request not sent in time');
    const body = JSON.stringify(errorEnvelope(ge));
    socket.end(`HTTP/1.1 ${ge.status} ${REASONS[ge.status] ?? 'Bad Request'}\r\n` +
      `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  });
  // where the legacy backend answers (proxy, compare, shadow) it checks the tokens: no principal here says nothing
  const legacyChecks = (request: FastifyRequest): boolean => {
    const template = routeFacts(request).url;
    return !!template && legacyAnswers(deps.config, template) && !isInternal(request.headers);
  };
  // … but a shadowed route holds each body whole until the legacy side answers: one that carries no credential at all
  // reads no large body (attack pass 19, F4: 1 500 anonymous 1 MB POSTs to a shadowed route, 2.8–3.4 GB), its bodies are
  // bounded in bytes per credential, and those without one are gated per address once read; a proxied one streams its
  // body on, nothing held
  const streamed = (request: FastifyRequest): boolean => {
    const template = routeFacts(request).url;
    return legacyChecks(request) && !!template && routeMode(deps.config, template) === 'proxy';
  };
  app.decorateRequest('principal', null);
  app.decorateRequest('routeFacts', null);
  app.decorateRequest('readContext', null);
  // requests without a principal: at most ANONYMOUS_IN_FLIGHT at once from one address (not the probes, quiet by design,
  // nor the operator's routes, which check their token first, nor a proxied route's, streamed on), counted once their
  // body is read: bodies trickled in a byte a second took every place of an address, logins and shadowed routes refused
  // to all its users (attack pass 20, N3/N4); what is read meanwhile is a few KB each (larger ones are refused unread)
  // and HTTP_REQUEST_TIMEOUT_MS ends a request not sent in time
  const anonymous = new AnonymousGate();
  // a place taken in a gate, given back once the request has ended; none left: 429
  const taken = (leave: (() => void) | undefined, reply: FastifyReply): GatewayError | undefined => {
    if (!leave) return errors.requestsExceeded(1);
    afterRequest(reply, leave);
    return undefined;
  };
  const gate = (request: FastifyRequest, reply: FastifyReply) => taken(anonymous.enter(request.ip), reply);
  // request bodies in flight, in bytes (by Content-Length; a chunked body counts as the largest allowed): on a shadowed
  // route (where the legacy side checks tokens), per credential
  const bodies = new BodyGate();
  // … and a shadowed route's bodies with a credential, all together (the gateway cannot tell a forged credential: one per
  // request had a bound each, 1.3 GB held — attack pass 21, R3)
  const shadowed = new BodyGate(deps.config.SHADOW_BODY_MB * 1_048_576);
  // (none for a method whose body Fastify never reads, and never more than it reads: a GET with a Content-Length of a TB,
  // its answer not read, held every user's second body back — attack pass 22, P1)
  const bodyBytes = (request: FastifyRequest): number => {
    if (BODYLESS.has(request.method)) return 0;
    const length = Number(request.headers['content-length']);
    const most = deps.config.MAX_PAYLOAD_BYTES;
    // (one larger than MAX_PAYLOAD_BYTES is refused 413 unread: nothing)
    return Number.isFinite(length) ? (length > most ? 0 : Math.max(0, length)) : request.headers['transfer-encoding'] !== undefined ? most : 0;
  };
  const heldBody = (key: string, request: FastifyRequest, reply: FastifyReply): GatewayError | undefined => {
    const bytes = bodyBytes(request);
    return bytes > 0 ? taken(bodies.enter(key, bytes), reply) : undefined;
  };
  // … and the logged-in users' bodies, in a line each, and all together (BODIES_IN_FLIGHT_BYTES)
  const principals = new BodyGate(PRINCIPAL_BODY_BYTES, BODIES_IN_FLIGHT_BYTES, PRINCIPAL_BODY_LINE);
  const waited = new WeakSet<FastifyRequest>();
  // (a body waits its turn at most half the time its request has to be sent: past it, a 503 with Retry-After, not the
  // request timeout's 408 to a client that sent in time)
  const bodyWaitMs = deps.config.HTTP_REQUEST_TIMEOUT_MS > 0 ? deps.config.HTTP_REQUEST_TIMEOUT_MS / 2 : 30_000;
  deps.metrics.bodies(principals);
  // (taken once the body is read, by its bytes: a trickled chunked body counted as the largest allowed from the start let
  // one address's 256 connections hold every caller's share — the review of R3's fix)
  const shadowedBody = (bytes: number, reply: FastifyReply) => (bytes > 0 ? taken(shadowed.enter('all', bytes), reply) : undefined);
  const token = (request: FastifyRequest) => requestToken(request.headers, request.query, deps.config.SESSION_COOKIE_NAME);
  // a shadowed route's request, before the shadow reads its body (its hook comes next)
  app.addHook('onRequest', (request, reply, done) => {
    if (!legacyChecks(request) || streamed(request)) { done(); return; }
    const credential = token(request);
    if (credential !== undefined) { done(heldBody(`credential:${digest(credential)}`, request, reply)); return; }
    const length = Number(request.headers['content-length']);
    const large = Number.isFinite(length) ? length > ANONYMOUS_BODY_BYTES : request.headers['transfer-encoding'] !== undefined;
    done(large ? errors.forbidden() : undefined);
  });
  await registerModes(app, deps, (request, reply, bytes) => (token(request) === undefined ? gate(request, reply) : shadowedBody(bytes, reply)));

  app.addHook('onRequest', (request, _reply, done) => {
    const refused = refusedQuery(request);
    if (refused) { done(queryRefusal(refused)); return; }
    const access = accessOf(request);
    if (access !== 'legacy' || legacyChecks(request)) { done(); return; }
    const credential = token(request);
    // a token verified before, of a user held in memory: no promise, no wait (most requests)
    const held = credential ? authenticateHeld(credential, deps.jwt, deps.users) : undefined;
    if (!credential || held) {
      request.principal = held ?? null;
      done();
      return;
    }
    authenticate(credential, deps.jwt, deps.users, deps.sessions).then((p) => { request.principal = p; done(); }, (e: Error) => done(e));
  });

  // a user's bodies past their bytes wait their turn, unread (a flood of one user's large bodies is its own wait, not a
  // stall of every user's reads: attack pass 21, R1); a full line is a 429
  app.addHook('onRequest', (request, reply, done) => {
    const user = request.principal?.user.id;
    const bytes = user ? bodyBytes(request) : 0;
    if (!user || bytes <= 0) { done(); return; }
    const now = principals.enter(user, bytes);
    if (now) { done(taken(now, reply)); return; }
    principals.wait(user, bytes, answerEnd(reply.raw).gone, bodyWaitMs)
      .then((leave) => { waited.add(request); done(taken(leave, reply)); }, (e: Error) => done(e))
      .catch((e: unknown) => deps.logger.error({ err: e }, 'a request let in after its body\'s wait failed'));
  });
  // a body that waited its turn may be a client's that left meanwhile (a paused connection sees its peer's close only
  // once its body is read): once read, two turns of the event loop (a read of the socket between them) let its end be
  // seen, and a request whose client has gone runs no question (attack pass 22, P3: 364 abandoned bodies were run for a
  // minute after their flood)
  app.addHook('preHandler', (request, _reply, done) => {
    if (!waited.has(request)) { done(); return; }
    // (by its connection: Node marks the request's stream destroyed once its body is read — every body that waited was
    // taken for gone, attack pass 27, N-4; and one turn did not let the peer's end be read)
    const gone = () => done(clientGone(request.raw.socket) ? errors.serviceUnavailable('The client has gone.', 'gateway') : undefined);
    setImmediate(() => setImmediate(gone));
  });
  app.addHook('preHandler', (request, reply, done) => {
    const access = accessOf(request);
    // (webhook deliveries too: their signature is checked only once the body is read; the legacy side's routes above)
    if (request.principal || access === 'operator' || routeFacts(request).quietLog || legacyChecks(request)) { done(); return; }
    done(gate(request, reply));
  });

  // a body sent without a principal to a route that needs one is not read past a few KB: the route answers 403 whatever it
  // holds, and a 60 000-key body cost ~65 ms to parse and walk — anyone's, four at once stalling every user for seconds
  // (attack pass 17, F6). (Where the legacy side checks tokens — proxy, compare, shadow — nothing is decided here.)
  app.addHook('preParsing', (request, _reply, payload, done) => {
    if (request.principal || accessOf(request) !== 'legacy') { done(null, payload); return; }
    if (legacyChecks(request)) { done(null, payload); return; }
    const length = Number(request.headers['content-length']);
    if (Number.isFinite(length) ? length <= ANONYMOUS_BODY_BYTES : request.headers['transfer-encoding'] === undefined) { done(null, payload); return; }
    done(errors.forbidden());
  });

  registerDeprecations(app, deps); // after authentication: a deprecated call's headers, brownouts and sunset (src/deprecate/)

  // v1 refused the bound key: forget the cached copy, so a rebind (from any process) takes effect at once
  app.addHook('onError', async (request, _reply, err) => {
    if (err instanceof V1UnauthorizedError && request.principal) {
      deps.forgetKey(request.principal.user.id);
      deps.replica?.forgetReach(); // and the index checks reach again (KEY_RECHECK_MS is an upper bound)
    }
  });

  // a client that left before its answer: no onResponse, so its line here (499, nginx's "client closed request"; attack
  // pass 21, L-a: such requests left no line and no metric)
  app.addHook('onRequestAbort', (request, done) => {
    request.log.info({ req: { method: request.method, url: request.url, ip: request.ip }, res: { statusCode: 499 } }, 'client closed the request');
    deps.metrics.request(routeFacts(request).url ?? 'unmatched', request.method, 499, 0);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const access = accessOf(request);
    const template = routeFacts(request).url;
    // webhook deliveries and probes are many and routine: their lines are debug (the demo's banner no longer scrolls away)
    const quiet = access === 'signed' || routeFacts(request).quietLog;
    const { id, method, url, ip } = request;
    accessLine({ reqId: id, method, url, ip, statusCode: reply.statusCode, responseTime: reply.elapsedTime }, quiet);
    deps.metrics.request(template ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000);
    // the usage ledger: who still calls which legacy route. Only matched legacy routes, and only callers we can name
    // (a principal, or one bounded "unverified" entry per route for tokens only the legacy side can check): random
    // paths and random tokens add nothing.
    if (template && access === 'legacy' && !isInternal(request.headers)) {
      const route = `${request.method} ${template}`;
      const p = request.principal;
      if (p) {
        deps.usage.note(route, p.via === 'static' ? `static:${p.tokenId}` : `user:${p.user.id}`, p.via);
        const seen = seenRequest(request, reply, template, deps.mappings.userAgentFamilies); // client profiles: shaped off the hot path
        if (seen) deps.shapes.note(seen);
      }
      else if (legacyAnswers(deps.config, template) && request.headers.authorization) deps.usage.note(route, 'legacy-token', 'legacy');
    }
    done();
  });

  registerServerRoutes(app, deps);
  registerSpecRoutes(app, deps);
  registerSchemaRoutes(app, deps);
  registerAuthRoutes(app, deps);
  registerUserRoutes(app, deps);
  registerItemRoutes(app, deps);
  registerWriteRoutes(app, deps);
  registerGatewayRoutes(app, deps);
  registerDeprecationRoutes(app, deps);
  registerWebhookRoutes(app, deps);
  if (deps.replica) {
    const replica = deps.replica;
    deps.metrics.replica(replica);
    // the window no webhook receiver answered in is known before the first read is answered
    app.addHook('onReady', async () => replica.openReceivers());
    replica.start();
  }
  return app;
}
