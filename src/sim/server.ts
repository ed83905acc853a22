import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { SimClock } from './clock.js';
import { FaultInjector, type FaultRule } from './faults.js';
import { SCALES } from './generator.js';
import { openApiDocument } from './openapi.js';
import { DEFAULT_WEBHOOK_OPTIONS, WebhookDispatcher, type WebhookOptions } from './webhooks.js';
import { SimHttpError } from './errors.js';
import { WorldJournal, WorldJournalError, type WorldIdentity } from './journal.js';
import { SimFaultsBodySchema, World } from './world.js';
import type { SimPerson } from './model.js';

export interface SimulatorOptions {
  readonly seed?: number;
  readonly scale?: keyof typeof SCALES;
  /** `manual`: time moves only through POST /_sim/clock (tests). `real`: wall clock (demo). */
  readonly clock?: 'real' | 'manual';
  readonly webhooks?: Partial<WebhookOptions>;
  readonly urlTtlS?: number;
  readonly random?: () => number;
  /**
   * A file that keeps the world across restarts (the demo): the world it holds is generated again and its writes
   * replayed; every new write is appended. Without it, each simulator is a new world.
   */
  readonly journal?: string;
}

export interface Simulator {
  readonly app: FastifyInstance;
  readonly world: World;
  /** Which world this is (GET /_sim/world): a store filled from another world must not be used with this one. */
  readonly identity: WorldIdentity;
  /** The journal that keeps the world across restarts, when one was given. */
  readonly journal: WorldJournal | undefined;
  readonly clock: SimClock;
  readonly faults: FaultInjector;
  readonly webhooks: WebhookDispatcher;
  readonly stats: Map<string, number>;
  listen(port?: number, host?: string): Promise<string>;
  close(): Promise<void>;
}

const isLoopback = (addr: string | undefined) => !!addr && (addr === '::1' || addr.startsWith('127.') || addr.startsWith('::ffff:127.'));

/** Builds the v1 simulator: every v1 endpoint and rule, plus loopback-only /_sim admin routes. */
export function createSimulator(options: SimulatorOptions = {}): Simulator {
  const clock = new SimClock(options.clock ?? 'manual');
  const scaleName = options.scale ?? 'tiny';
  const scale = SCALES[scaleName];
  if (!scale) throw new TypeError(`unknown simulator scale ${String(options.scale)}`);
  const seed = options.seed ?? 1;
  const fresh = (): WorldIdentity => ({ world: randomUUID(), seed, scale: scaleName, origin: clock.now() });
  const journal = options.journal ? WorldJournal.open(options.journal, { seed, scale: scaleName }, fresh) : undefined;
  const identity = journal?.identity ?? fresh();
  const world = new World(clock, seed, scale, { urlTtlS: options.urlTtlS ?? 300, cdnBase: 'https://cdn.sim.invalid', origin: identity.origin });
  if (journal) {
    try {
      world.replay(journal.writes);
    } catch (e) {
      const why = e instanceof SimHttpError ? JSON.stringify(e.body) : (e as Error).message;
      throw new WorldJournalError(`${journal.file}: its writes cannot be made again on the world it names (${why}); the file was changed or is damaged`);
    }
    world.onWrite((w) => journal.append(w));
  }
  const faults = new FaultInjector(options.random);
  const webhooks = new WebhookDispatcher(world, { ...DEFAULT_WEBHOOK_OPTIONS, ...options.webhooks });
  const stats = new Map<string, number>();
  /** The last 200 v1 requests (their query at most 512 characters): which calls a test's sync made, and for what. */
  const recent: { method: string; path: string; query: string; request_id: string | null }[] = [];
  const app = Fastify({ logger: false, bodyLimit: 1_048_576 });
  let ticker: NodeJS.Timeout | undefined;
  if ((options.clock ?? 'manual') === 'real') ticker = setInterval(() => world.tick(), 200).unref();

  app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => {
    if (err instanceof SimHttpError) {
      for (const [k, v] of Object.entries(err.headers)) void reply.header(k, v);
      return reply.status(err.status).send(err.body);
    }
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    return reply.status(status).send({ error: status === 500 ? 'Internal server error.' : err.message });
  });
  app.setNotFoundHandler((req, reply) => reply.status(404).send({ error: `No route ${req.method} ${req.url.split('?')[0]}.` }));

  // Lifecycle is evaluated lazily on each request as well as by the real-time ticker.
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    world.tick();
    // decided by the route the router matched (never the raw URL: /%5Fsim/keys is /_sim/keys); unmatched → 404
    const route = req.routeOptions.url ?? '';
    if (route.startsWith('/_sim')) {
      if (!isLoopback(req.socket.remoteAddress)) return reply.status(403).send({ error: 'Simulator admin routes answer loopback only.' });
      return;
    }
    if (!route.startsWith('/v1')) return;
    const statKey = `${req.method} ${route}`;
    stats.set(statKey, (stats.get(statKey) ?? 0) + 1);
    const rid = req.headers['x-request-id'];
    const [path = '', query = ''] = req.url.split('?');
    recent.push({ method: req.method, path, query: query.slice(0, 512), request_id: typeof rid === 'string' ? rid : null });
    if (recent.length > 200) recent.shift();
    if (faults.settings.latency_ms > 0) await new Promise((r) => setTimeout(r, faults.settings.latency_ms));
    const fault = faults.pick(req.method, route, path);
    if (!fault) return;
    switch (fault.kind) {
      case 'error500':
        return reply.status(500).send({ error: 'Simulated server fault.' });
      case 'rate_limit':
        return reply
          .status(429)
          .header('retry-after', String(fault.retry_after_s ?? 1))
          .send({ error: 'Too many requests.' });
      case 'reset':
        req.raw.socket.destroy();
        return reply.hijack();
      case 'lost_response':
        (req as FastifyRequest & { loseResponse?: boolean }).loseResponse = true;
        return;
    }
  });
  app.addHook('onSend', async (req, _reply, payload) => {
    if ((req as FastifyRequest & { loseResponse?: boolean }).loseResponse) req.raw.socket.destroy();
    return payload;
  });

  const person = (req: FastifyRequest): SimPerson => world.authenticate(req.headers.authorization);
  type Q = Record<string, unknown>;
  type P = { id: string };

  app.get('/openapi.json', async (req) => openApiDocument(`${req.protocol}://${req.headers.host ?? 'localhost'}`));
  app.get('/v1/me', async (req) => world.me(person(req)));
  app.get('/v1/teams', async (req) => world.listTeams(person(req)));
  app.get<{ Params: P }>('/v1/teams/:id', async (req) => world.getTeam(person(req), req.params.id));
  app.get<{ Querystring: Q }>('/v1/users', async (req) => world.listMembers(person(req), req.query.team_id));
  app.get<{ Params: P }>('/v1/users/:id', async (req) => world.getUser(person(req), req.params.id));
  app.get<{ Querystring: Q }>('/v1/projects', async (req) => world.listProjects(person(req), req.query.team_id, req.query));
  app.get<{ Params: P }>('/v1/projects/:id', async (req) => world.getProject(person(req), req.params.id));
  app.get<{ Querystring: Q }>('/v1/templates', async (req) => world.listTemplates(person(req), req.query.project_id));
  app.get<{ Params: P; Querystring: Q }>('/v1/templates/:id', async (req) => world.getTemplate(person(req), req.params.id, req.query.project_id));
  app.get<{ Querystring: Q }>('/v1/renders', async (req) => world.listRenders(person(req), req.query.project_id, req.query));
  app.get<{ Params: P }>('/v1/renders/:id', async (req) => world.getRender(person(req), req.params.id));
  app.post('/v1/renders', async (req, reply) => {
    const p = person(req);
    return reply.status(201).send(world.createRender(p, req.body));
  });

  // ---- admin (loopback only, no key)
  app.get('/_sim/world', async () => identity);
  app.get('/_sim/keys', async () => world.listKeys());
  app.post<{ Body: { api_key?: string } }>('/_sim/keys/revoke', async (req, reply) =>
    world.revokeKey(String(req.body?.api_key ?? '')) ? { revoked: true } : reply.status(404).send({ error: 'No such key.' }),
  );
  app.post<{ Body: { user_id?: string } }>('/_sim/keys/rotate', async (req, reply) => {
    const key = world.rotateKey(String(req.body?.user_id ?? ''));
    return key ? { api_key: key } : reply.status(404).send({ error: 'No such user.' });
  });
  app.get('/_sim/stats', async () => ({ total: [...stats.values()].reduce((a, b) => a + b, 0), requests: Object.fromEntries(stats) }));
  app.post('/_sim/stats/reset', async () => {
    stats.clear();
    recent.length = 0;
    return { reset: true };
  });
  app.get('/_sim/requests', async () => recent);
  app.get('/_sim/faults', async () => faults.settings);
  app.post('/_sim/faults', async (req, reply) => {
    const parsed = SimFaultsBodySchema.safeParse(req.body ?? {});
    if (!parsed.success) return reply.status(400).send({ error: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') });
    faults.set({ latency_ms: parsed.data.latency_ms, rules: parsed.data.rules as FaultRule[] | undefined });
    return faults.settings;
  });
  app.delete('/_sim/faults', async () => {
    faults.clear();
    return faults.settings;
  });
  app.post<{ Body: { advance_ms?: number } }>('/_sim/clock', async (req, reply) => {
    const ms = Number(req.body?.advance_ms ?? 0);
    if (!Number.isFinite(ms) || ms < 0) return reply.status(400).send({ error: 'advance_ms must be a non-negative number.' });
    const transitions = world.advance(ms);
    return { now: clock.now(), transitions };
  });
  app.post<{ Body: { team_id?: string; url?: string; events?: string[]; secret?: string } }>('/_sim/webhooks', async (req, reply) => {
    const b = req.body ?? {};
    if (!b.team_id || !b.url) return reply.status(400).send({ error: 'team_id and url are required.' });
    const events = b.events ?? ['render.status_changed', 'render.complete', 'render.failed'];
    const hook = webhooks.register(b.team_id, b.url, events, b.secret);
    return hook ?? reply.status(404).send({ error: 'No such team.' });
  });
  app.get('/_sim/webhooks/deliveries', async () => webhooks.deliveries);
  app.post<{ Body: { team_id?: string; credits?: number } }>('/_sim/credits', async (req, reply) =>
    world.setCredits(String(req.body?.team_id), Number(req.body?.credits)) ? { ok: true } : reply.status(404).send({ error: 'No such team.' }),
  );
  app.get<{ Params: P }>(
    '/_sim/renders/:id/config',
    async (req, reply) => world.renderConfig(req.params.id) ?? reply.status(404).send({ error: 'No such render.' }),
  );

  return {
    app,
    world,
    identity,
    journal,
    clock,
    faults,
    webhooks,
    stats,
    async listen(port = 0, host = '127.0.0.1') {
      await app.listen({ port, host });
      const addr = app.server.address();
      return typeof addr === 'object' && addr ? `http://${host}:${addr.port}` : `http://${host}:${port}`;
    },
    async close() {
      if (ticker) clearInterval(ticker);
      webhooks.stop();
      await app.close();
    },
  };
}
