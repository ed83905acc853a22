import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import { decodeKey, type Config } from './config/schema.js';
import { JwtService } from './auth/jwt.js';
import { AuthService } from './auth/service.js';
import { LoginLimiter } from './auth/login-limiter.js';
import { openDb, type Db } from './store/db.js';
import { openChangeBus, type ChangeBus } from './store/changes.js';
import { migrate } from './store/migrations.js';
import { SecretBox } from './store/crypto.js';
import { verifyEncryptionKey } from './store/key-check.js';
import { UserStore } from './store/users.js';
import { SessionStore } from './store/sessions.js';
import { IdMapStore } from './store/idmap.js';
import { IdTranslator } from './translate/ids.js';
import { loadMappings, type Mappings } from './config/mappings.js';
import { OverlayStore, RenderDataStore } from './store/render-extras.js';
import { IdempotencyStore } from './store/idempotency.js';
import { CompareStore } from './store/compare.js';
import { UsageLedger } from './store/usage.js';
import { ClientShapeStore } from './store/client-shapes.js';
import { DeprecationStore } from './store/deprecations.js';
import { Deprecations } from './deprecate/service.js';
import { ShapeRecorder } from './migrate/recorder.js';
import { Comparator } from './compare/service.js';
import { V1Cache } from './live/v1-cache.js';
import { V1Client, type V1Meter, type V1Session } from './v1/client.js';
import { KeyRing } from './v1/keys.js';
import { HeavyReadGate } from './read/heavy.js';
import { AnswerMemory } from './read/in-flight.js';
import { DataRoom } from './read/data-room.js';
import { systemClock, type Clock } from './lib/clock.js';
import { Metrics } from './ops/metrics.js';
import { Lifecycle, V1Health } from './ops/v1-health.js';
import { TeamReaders } from './live/team-readers.js';
import { ReplicaService } from './replica/service.js';
import { WebhookLedger } from './store/webhook-events.js';
import { fanOut } from './webhooks/fan-out.js';
import { WebhookReceiver } from './webhooks/receiver.js';

/**
 * The composition root: every service built once, in dependency order, each given exactly what it uses; the assembled
 * set is handed to the edge only (the Fastify app's routes, the CLI, the demo). Services never take this bag.
 */
export interface Deps {
  readonly config: Config;
  readonly logger: Logger;
  /** The one source of time (tests inject a ManualClock). */
  /** The v1 base URL the gateway calls (V1_BASE_URL, or the demo's simulator). */
  readonly v1BaseUrl: string;
  readonly clock: Clock;
  readonly db: Db;
  /** Change notifications between instances sharing the store (what each keeps in memory follows it). */
  readonly bus: ChangeBus;
  readonly users: UserStore;
  readonly sessions: SessionStore;
  readonly idMap: IdMapStore;
  readonly ids: IdTranslator;
  readonly jwt: JwtService;
  /** Login, refresh and logout (Directus's shapes, codes and timing). */
  readonly auth: AuthService;
  readonly limiter: LoginLimiter;
  readonly v1: V1Client;
  readonly mappings: Mappings;
  readonly renderData: RenderDataStore;
  readonly overlays: OverlayStore;
  readonly cache: V1Cache;
  readonly idempotency: IdempotencyStore;
  readonly compareStore: CompareStore;
  readonly comparator: Comparator;
  readonly usage: UsageLedger;
  /** Per key, how many heavy reads (exports, limit=-1, whole-scope aggregates) run at once on this instance. */
  readonly heavyReads: HeavyReadGate;
  /** Bytes of answers built whole and not yet sent, per key and per instance (ANSWER_MEMORY_MB_PER_KEY, ANSWER_MEMORY_MB). */
  readonly answerMemory: AnswerMemory;
  /** Render data being built into answers, per key and per instance (DATA_BUILD_MB*). */
  readonly dataRoom: DataRoom;
  /** Client profiles: (client, query shape) counts for the migration guide (src/migrate/). */
  readonly shapes: ShapeRecorder;
  /** The deprecation rules every instance applies, and the calls they match (src/deprecate/). */
  readonly deprecations: Deprecations;
  readonly metrics: Metrics;
  /** v1 reachability as the gateway's own recent calls show it. */
  readonly v1Health: V1Health;
  /** Draining (shutdown begun) or serving. */
  readonly lifecycle: Lifecycle;
  /** render_credits figures per v1 team id (RENDER_CREDITS, parsed once). */
  readonly credits: Config['renderCredits'];
  /** Bound keys the gateway reads a team with, for work no request asks for (webhook checks, the replica's sync). */
  readonly readers: TeamReaders;
  /** v1 render events, checked and applied (to the replica and the caches). */
  readonly webhooks: WebhookReceiver;
  /** The replica (null when INDEX_ENABLED=false: every read is answered live). */
  readonly replica: ReplicaService | null;
  /** The v1 API as this legacy user's bound key sees it. */
  v1For(userId: string, meter?: V1Meter, requestId?: string): Promise<V1Session>;
  /** The cache partition of the user's key when the key is held in memory (undefined otherwise). */
  partitionHeld(userId: string): string | undefined;
  /** Forget a cached key (after a rebind). */
  forgetKey(userId: string): void;
  close(): Promise<void>;
}

export interface DepsOverrides {
  readonly v1BaseUrl?: string;
  readonly dispatcher?: Dispatcher;
  readonly clock?: Clock;
  readonly mappings?: Mappings;
  /** An SQLite write's wait for another process's lock (the command line's, longer than the gateway's: `openDb`). */
  readonly sqliteWaitMs?: number;
}

export async function createDeps(config: Config, logger: Logger, o: DepsOverrides = {}): Promise<Deps> {
  const mappings = o.mappings ?? loadMappings(config.MAPPINGS_DIR);
  const encryptionKey = config.ENCRYPTION_KEY ? (decodeKey(config.ENCRYPTION_KEY) as Buffer) : undefined;
  if (!encryptionKey) throw new TypeError('ENCRYPTION_KEY missing (main.ts generates one in demo mode)');
  const jwtSecret = config.JWT_SECRET;
  const db = await openDb(config.DATABASE_URL, {
    sqliteSynchronous: config.SQLITE_SYNCHRONOUS,
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
    ...(o.sqliteWaitMs ? { sqliteWaitMs: o.sqliteWaitMs } : {}),
  });
  await migrate(db.kysely);
  const box = new SecretBox(encryptionKey);
  try {
    await verifyEncryptionKey(db.kysely, box);
  } catch (e) {
    await db.close();
    throw e;
  }
  const clock = o.clock ?? systemClock;
  const now = () => clock.now();
  const bus = await openChangeBus(db, config.DATABASE_URL);
  const users = new UserStore(db.kysely, box, now, bus);
  const sessions = new SessionStore(db.kysely, config.REFRESH_TOKEN_TTL, now, config.SESSION_REFRESH_GRACE_PERIOD);
  const idMap = new IdMapStore(db.kysely, now, bus);
  const ids = new IdTranslator(idMap);
  await ids.load();
  const jwt = await JwtService.create({
    clock,
    issuer: config.JWT_ISSUER,
    ttlMs: config.ACCESS_TOKEN_TTL,
    alg: config.JWT_ALG,
    ...(jwtSecret ? { secret: jwtSecret } : {}),
    ...(config.JWT_PRIVATE_KEY ? { privateKeyPem: config.JWT_PRIVATE_KEY } : {}),
  });
  const limiter = new LoginLimiter(db.kysely, config.LOGIN_MAX_FAILURES, config.LOGIN_MAX_FAILURES * 4, config.LOGIN_FAILURE_WINDOW_MS, now);
  const baseUrl = o.v1BaseUrl ?? config.V1_BASE_URL;
  if (!baseUrl) throw new TypeError('no v1 base URL');
  const v1Health = new V1Health(clock);
  const cache = new V1Cache(
    {
      metadataMs: config.CACHE_TTL_METADATA_MS,
      renderActiveMs: config.CACHE_TTL_RENDER_ACTIVE_MS,
      renderFinalMs: config.CACHE_TTL_RENDER_FINAL_MS,
      signedUrlMs: config.SIGNED_URL_TTL_MS,
    },
    config.CACHE_MAX_ENTRIES,
  );
  const metrics = new Metrics({ cache });
  const observer = {
    onCall: (i: Parameters<Metrics['v1Call']>[0]) => {
      metrics.v1Call(i);
      v1Health.record(i);
    },
  };
  const v1 = new V1Client({
    observer,
    baseUrl,
    timeoutMs: config.V1_TIMEOUT_MS,
    retries: config.V1_RETRIES,
    retryBaseMs: config.V1_RETRY_BASE_MS,
    ...(o.dispatcher ? { dispatcher: o.dispatcher } : {}),
  });
  const keys = new KeyRing(users, v1, { onUserChanged: (fn) => bus.on('users', fn), onAnythingChanged: (fn) => bus.onResync(fn) });
  const compareStore = new CompareStore(db.kysely, now);
  const usage = new UsageLedger(db.kysely, now);
  const shapes = new ShapeRecorder(new ClientShapeStore(db.kysely), {
    schemas: mappings.schemas, limitDefault: config.QUERY_LIMIT_DEFAULT, perClient: config.MIGRATE_SHAPES_PER_CLIENT,
    retentionMs: config.MIGRATE_RETENTION_DAYS * 86_400_000, now,
  });
  const deprecations = new Deprecations(new DeprecationStore(db.kysely, bus), bus, metrics.registry, { now });
  await deprecations.load();
  const renderData = new RenderDataStore(db.kysely, now, bus);
  const overlays = new OverlayStore(db.kysely, now, bus);
  const v1For = (userId: string, meter?: V1Meter, requestId?: string) => keys.v1For(userId, meter, requestId);
  const readers = new TeamReaders({ config, users, cache, v1For });
  const replica = config.INDEX_ENABLED
    ? new ReplicaService({ config, logger, clock, bus, db, ids, mappings, overlays, renderData, credits: config.renderCredits }, readers)
    : null;
  const webhooks = new WebhookReceiver({ config, clock, logger, metrics, readers, ledger: new WebhookLedger(db.kysely, now), owners: replica?.store });
  fanOut(webhooks, { replica, cache, bus, logger });
  // answers not yet sent past their bounds hold back the building of more render data (their readers stopped reading)
  const answerMemory = new AnswerMemory(config.ANSWER_MEMORY_MB_PER_KEY * 1_048_576, config.ANSWER_MEMORY_MB * 1_048_576);
  const dataRoom = new DataRoom(config.DATA_BUILD_MB_PER_KEY * 1_048_576, config.DATA_BUILD_MB * 1_048_576, answerMemory, config.DATA_WAIT_MS);
  answerMemory.onFree(() => dataRoom.recheck());
  const deps: Deps = {
    readers,
    webhooks,
    replica,
    metrics,
    v1Health,
    lifecycle: new Lifecycle(),
    bus,
    config,
    logger,
    clock,
    v1BaseUrl: baseUrl,
    db,
    users,
    sessions,
    idMap,
    ids,
    jwt,
    auth: new AuthService({ config, clock, users, sessions, jwt, limiter }),
    limiter,
    v1,
    mappings,
    renderData,
    overlays,
    cache,
    idempotency: new IdempotencyStore(db.kysely, now),
    compareStore,
    comparator: new Comparator(ids, compareStore, mappings.comparison),
    usage,
    heavyReads: new HeavyReadGate(config.HEAVY_READS_PER_KEY, config.HEAVY_READS_QUEUE),
    answerMemory,
    dataRoom,
    shapes,
    deprecations,
    credits: config.renderCredits,
    v1For,
    partitionHeld: (userId) => keys.partitionHeld(userId),
    forgetKey: (userId) => keys.forget(userId),
    async close() {
      await replica?.close();
      await usage.close();
      await shapes.close();
      await deprecations.close();
      await v1.close();
      await bus.close();
      await db.close();
    },
  };
  return deps;
}
