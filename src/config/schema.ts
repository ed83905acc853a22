import { isIP } from 'node:net';
import { parseRouteModes, type RouteModes } from './route-modes.js';
import { lookalikeVariables, type Lookalike } from './lookalikes.js';
import { z } from 'zod';

const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');
const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
const duration = z
  .string()
  .regex(/^\d+(ms|s|m|h|d)?$/, 'a duration such as 900000, 15m, 7d')
  .transform(parseDurationMs);

/** `15m` → 900000. A bare number is milliseconds. */
export function parseDurationMs(v: string): number {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(v);
  if (!m) throw new TypeError(`bad duration ${v}`);
  const n = Number(m[1]);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] ?? 'ms'] ?? 1;
  return n * unit;
}

/**
 * Every environment variable the gateway reads, with its default. docs/configuration.md documents each one
 * (test/docs/configuration.test.ts fails when a variable here has no row there).
 */
export const ConfigSchema = z.object({
  PORT: int(0, 65535).default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  /** `production` forbids demo mode. */
  NODE_ENV: z.string().optional(),
  /**
   * Which hops' X-Forwarded-For to trust (the login limiter and the gate of anonymous requests count per client address):
   * `false`; the number of proxies you run in front (1: the address your proxy saw — what it appends); their addresses or
   * CIDRs, comma-separated; or `true`, every hop — the left-most entry, which the client writes itself (attack pass 19,
   * F7: a varying header dodged both), warned at start.
   */
  TRUST_PROXY: z.string().default('false').transform((v, ctx) => {
    const t = v.trim();
    if (/^(false|0|no|)$/i.test(t)) return false as const;
    if (/^(true|yes)$/i.test(t)) return true as const;
    if (/^\d+$/.test(t) && Number(t) >= 1 && Number(t) <= 20) return Number(t);
    const list = t.split(',').map((x) => x.trim()).filter(Boolean);
    // (an address, or one with a prefix length its family allows, or proxy-addr's names; `100` or `abc` are none)
    const trustable = (x: string) => {
      if (['loopback', 'linklocal', 'uniquelocal'].includes(x)) return true;
      const [address = '', bits, more] = x.split('/');
      const family = isIP(address);
      if (family === 0 || more !== undefined) return false;
      return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) >= 1 && Number(bits) <= (family === 4 ? 32 : 128));
    };
    if (list.length > 0 && !/^\d+$/.test(t) && list.every(trustable)) return list;
    ctx.addIssue({ code: 'custom', message: 'false, a number of proxies (1 to 20), their addresses or CIDRs (comma-separated), or true' });
    return z.NEVER;
  }),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Base URL of v1. Unset = demo mode: the built-in simulator starts on loopback. */
  V1_BASE_URL: z.url().optional(),
  V1_TIMEOUT_MS: int(1).default(10_000),
  V1_RETRIES: int(0, 10).default(3),
  V1_RETRY_BASE_MS: int(1).default(200),
  /** Spare GET attempts one legacy request may spend past V1_RETRIES on any call, shared by its calls (0: none). */
  V1_RETRY_BUDGET_PER_READ: int(0, 1000).default(20),
  /** Unit of v1 timestamps: auto-detect per value, or force seconds / milliseconds. */
  V1_TIMESTAMP_UNIT: z.enum(['auto', 's', 'ms']).default('auto'),
  DATABASE_URL: z.string().min(1).default('./data/gateway.db'),
  /**
   * SQLite only: `full` waits for the disk at every commit (each write durable at once; on a slow disk a commit holds
   * the event loop that long); `normal` (WAL) waits at checkpoints only: never corrupt, but the last commits may be lost
   * to a power cut or an OS crash (not to the gateway's own crash).
   */
  SQLITE_SYNCHRONOUS: z.enum(['full', 'normal']).default('full'),
  /** PostgreSQL only: how long opening a connection may take before it is given up (a host that never answers). */
  DATABASE_CONNECT_TIMEOUT_MS: int(100).default(10_000),
  /** 32 bytes, hex (64 chars) or base64; encrypts v1 keys at rest (AES-256-GCM). */
  ENCRYPTION_KEY: z.string().optional(),
  JWT_SECRET: z.string().min(32, 'JWT_SECRET must be at least 32 characters').optional(),
  /** PEM PKCS#8 private key; switches access tokens to an asymmetric algorithm (JWT_ALG). */
  JWT_PRIVATE_KEY: z.string().optional(),
  JWT_ALG: z.enum(['HS256', 'RS256', 'ES256', 'EdDSA']).default('HS256'),
  JWT_ISSUER: z.string().min(1).default('directus'),
  ACCESS_TOKEN_TTL: duration.default(900_000),
  REFRESH_TOKEN_TTL: duration.default(604_800_000),
  REFRESH_COOKIE_NAME: z.string().min(1).default('directus_refresh_token'),
  REFRESH_COOKIE_SECURE: bool.default(false),
  LOGIN_STALL_MS: int(0).default(500),
  LOGIN_MAX_FAILURES: int(1).default(25),
  LOGIN_FAILURE_WINDOW_MS: int(1).default(900_000),
  GATEWAY_ADMIN_TOKEN: z.string().min(16, 'GATEWAY_ADMIN_TOKEN must be at least 16 characters').optional(),
  MAPPINGS_DIR: z.string().min(1).default('./mappings'),
  QUERY_LIMIT_DEFAULT: int(1).default(100),
  QUERY_LIMIT_MAX: int(1).optional(),
  MAX_PAYLOAD_BYTES: int(1024).default(1_048_576),
  FANOUT_CONCURRENCY: int(1, 64).default(8),
  /**
   * How far V8 lets its heap grow past what is live before a full collection, in percent (V8 by itself
   * allows up to 300 % on a quiet heap). Long streamed answers produce garbage steadily: this bounds
   * the RSS they cost. 0 = V8's own heuristics.
   */
  HEAP_GROWTH_PERCENT: int(0, 300).default(40),
  UPSTREAM_CALL_BUDGET: int(1).default(5000),
  MAX_RELATIONAL_DEPTH: int(2, 100).default(10),
  SHUTDOWN_GRACE_MS: duration.default(10_000),
  WEBHOOK_TOLERANCE_MS: duration.default(300_000),
  // CORS, with Directus's names and defaults
  CORS_ENABLED: bool.default(false),
  CORS_ORIGIN: z.string().default('false'),
  // SEARCH beside Directus's own default list: the SDK's withSearch() reads with it from browsers too
  CORS_METHODS: z.string().default('GET,POST,PATCH,DELETE,SEARCH'),
  CORS_ALLOWED_HEADERS: z.string().default('Content-Type,Authorization'),
  CORS_EXPOSED_HEADERS: z.string().default('Content-Range'),
  CORS_CREDENTIALS: bool.default(true),
  CORS_MAX_AGE: int(0).default(18_000),
  REFRESH_TOKEN_COOKIE_SAME_SITE: z.enum(['strict', 'lax', 'none']).default('lax'),
  REFRESH_TOKEN_COOKIE_DOMAIN: z.string().min(1).optional(),
  // session mode (Directus 10.10): the access token in an httpOnly cookie
  SESSION_COOKIE_NAME: z.string().min(1).default('directus_session_token'),
  SESSION_COOKIE_TTL: duration.default(86_400_000),
  SESSION_REFRESH_GRACE_PERIOD: duration.default(10_000),
  SESSION_COOKIE_SECURE: bool.default(false),
  SESSION_COOKIE_SAME_SITE: z.enum(['strict', 'lax', 'none']).default('lax'),
  SESSION_COOKIE_DOMAIN: z.string().min(1).optional(),
  METRICS_PORT: int(1, 65535).optional(),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  MAX_RELATED_ITEMS: int(1).default(50_000),
  /** The most one item of an answer may be, as JSON (a render embedding a project's renders, each with its data). */
  MAX_ITEM_MB: z.coerce.number().positive().default(16),
  /** Heavy reads (exports, `limit=-1`, whole-scope aggregates) one key may run at once on an instance; the rest wait. */
  HEAVY_READS_PER_KEY: int(1).default(2),
  /** Heavy reads of one key that may wait for a place; past it: 503 SERVICE_UNAVAILABLE. */
  HEAVY_READS_QUEUE: int(0).default(64),
  /** A read whose answer may hold more items than this (rows × related items each row brings) is heavy (src/read/cost.ts). */
  HEAVY_READ_ITEMS: int(1).default(10_000),
  /** Bytes of answers built whole and not yet sent, per key and per instance; past them the rest of an answer streams (no refusal). */
  ANSWER_MEMORY_MB_PER_KEY: z.coerce.number().positive().default(64),
  ANSWER_MEMORY_MB: z.coerce.number().positive().default(256),
  /**
   * Render data being built into answers (its stored size), per key and per instance: an evaluation waits for room
   * before it reads the data it missed (src/read/data-room.ts). Per key at least one item's worth (MAX_ITEM_MB).
   */
  DATA_BUILD_MB_PER_KEY: z.coerce.number().positive().default(16),
  DATA_BUILD_MB: z.coerce.number().positive().default(64),
  /** The longest a read waits for that room (held by answers not yet read); past it: 503 with Retry-After. 0: no bound. */
  DATA_WAIT_MS: int(0).default(30_000),
  /**
   * A connection on which nothing moved for this long (a client that stopped reading its answer, or never sent its
   * request) is closed: what its answer held is given back. Above the worst v1 wait of a request; 0: never.
   */
  HTTP_IDLE_TIMEOUT_MS: int(0).default(300_000),
  /**
   * The longest a client may take to send one request, its body included; past it: 408 and the connection closed (checked
   * every few seconds). Bodies trickled in a byte a second held the places of a client address's requests (attack pass 20,
   * N3/N4). 0: no bound.
   */
  HTTP_REQUEST_TIMEOUT_MS: int(0).default(60_000),
  /**
   * Connections open at once from one client address (not counting trusted proxies, TRUST_PROXY); past it: 429 and the
   * connection closed. A flood on thousands of connections from one address held other users' reads for seconds. 0: none.
   */
  MAX_CONNECTIONS_PER_ADDRESS: int(0).default(256),
  /**
   * The bodies with a credential that a shadowed route holds at once, all callers together, in MB (the legacy side checks
   * credentials: a forged one per request had a bound of its own). Past it: 429.
   */
  SHADOW_BODY_MB: z.coerce.number().positive().default(256),
  /** Items one array body (POST, PATCH) or `keys` list may hold; past it: 400 INVALID_PAYLOAD. */
  MAX_BATCH_MUTATION: int(1).default(100),
  CACHE_MAX_ENTRIES: int(10).default(10_000),
  CACHE_TTL_METADATA_MS: int(0).default(60_000),
  CACHE_TTL_RENDER_ACTIVE_MS: int(0).default(2_000),
  CACHE_TTL_RENDER_FINAL_MS: int(0).default(300_000),
  SIGNED_URL_TTL_MS: int(0).default(300_000),
  // the render index (reads answered from a webhook-fed local copy of each team's metadata)
  INDEX_ENABLED: bool.default(true),
  /** A read finds a team fresh when its last sync is within this bound (else it syncs the head first). */
  INDEX_MAX_STALENESS_MS: duration.default(5_000),
  /** While webhooks for a team arrive, the background sync runs this often (a reconciliation). */
  INDEX_RECONCILE_MS: duration.default(60_000),
  /**
   * How often a polled team's templates are read again (they have no event): past INDEX_RECONCILE_MS, each full sync
   * reads those of the projects due since its last (each project at its phase of this period), not every project's.
   */
  TEMPLATES_RECONCILE_MS: duration.default(60_000),
  /** v1 calls per team per minute the background sync may make; past it the staleness bound loosens. */
  INDEX_SYNC_CALLS_PER_MIN: int(1).default(600),
  /**
   * v1 calls per minute the sync may make with one bound key, whatever teams it reaches (counted in the store, like the
   * per-team budget): a key reaching 10 teams does not carry 10 teams' budgets.
   */
  INDEX_SYNC_CALLS_PER_KEY_PER_MIN: int(1).default(1_200),
  /** How often an instance renews a team's sync lease while it syncs; the lease lasts twice this (a dead holder's team is taken over then). */
  INDEX_LEASE_HEARTBEAT_MS: duration.default(10_000),
  /** Page fetches the sync makes at once (request-path and write calls are never queued behind it). */
  INDEX_SYNC_CONCURRENCY: int(1, 32).default(2),
  /**
   * The longest a read waits for the teams of its key's reach to be read from the store (they are read at once); past
   * it the read is answered from the teams held (partial) or live, and the reads go on in the background.
   */
  INDEX_LOAD_WAIT_MS: duration.default(250),
  /** Teams beyond this estimate of memory are evicted from memory (read back from the store when read). */
  INDEX_MEMORY_MB: z.coerce.number().positive().default(512),
  /** A team is synced in the background while it was read within this window. */
  INDEX_ACTIVE_MS: duration.default(300_000),
  /** Memory for serialised answers of index reads, reused while nothing they were read from has changed; 0: none. */
  ANSWER_CACHE_MB: z.coerce.number().min(0).default(32),
  /** The longest a kept answer is given (it is exact until its data changes; this bounds what nothing tracks). */
  ANSWER_CACHE_MAX_AGE_MS: duration.default(10_000),
  /** How long a key's reach (its teams, from v1) is trusted; 0 checks it on every request. */
  KEY_RECHECK_MS: duration.default(60_000),
  /** JSON object `{ "team_…": "secret" }` of v1 webhook signing secrets. */
  WEBHOOK_SECRETS: z.string().optional(),
  /**
   * A team whose webhooks are registered (its secret in WEBHOOK_SECRETS) is not head-polled while the receivers answer:
   * it is reconciled this often (renders created and never moved, templates, members); 0 trusts no webhooks.
   */
  WEBHOOK_RECONCILE_MS: duration.default(1_200_000),
  /** The shortest span of v1's attempts of one delivery (five, 1, 2, 4 and 8 s apart): a shorter outage loses nothing. */
  WEBHOOK_RETRY_SPAN_MS: duration.default(15_000),
  EXPLAIN_ENABLED: bool.default(false),
  /** Client profiles (`legacy-gateway migrate report`): most query shapes kept per client; the least recently seen leave first. */
  MIGRATE_SHAPES_PER_CLIENT: int(1, 100_000).default(200),
  /** The migration report: the time its proofs may take together, shared among its clients (past it: `not run`, said why). */
  MIGRATE_PROOF_BUDGET_MS: duration.default(300_000),
  /** Client profiles: a (client, shape) not seen for this many days is dropped. */
  MIGRATE_RETENTION_DAYS: int(1, 3650).default(30),
  /** `?export=csv`: string cells a spreadsheet would run (`=`, `+`, `-`, `@`, tab, CR first) get a leading `'`; false: Directus's bytes. */
  EXPORT_CSV_ESCAPE_FORMULAS: bool.default(true),
  /** JSON `{ "team_…": {"amount":N,"remaining":N,"used":N} }`: render_credits figures (v1 has no source). */
  RENDER_CREDITS: z.string().optional(),
  /** Base URL of the legacy backend (proxy, shadow and compare modes). */
  LEGACY_BASE_URL: z.url().optional(),
  /** JSON object of legacy route prefix → mode, e.g. {"/renders":"shadow","/projects":"compare"}; default translate. */
  ROUTE_MODES: z.string().optional(),
  COMPARE_SAMPLE_RATE: z.coerce.number().min(0).max(1).default(1),
  COMPARE_TIMEOUT_MS: int(1).default(5000),
  /** Comparisons worked on at once in the background (shadow's translated side, compare's legacy side); past it, skipped. */
  COMPARE_IN_FLIGHT: int(1).default(4),
  /** Mirror writes (POST/PATCH) to the other side; never unless set. */
  COMPARE_WRITES: bool.default(false),
  /** Shadow mode: find the gateway user by the legacy user's email when none has its id (an email is not an identity). */
  COMPARE_MATCH_BY_EMAIL: bool.default(false),
  DEMO_EMAIL: z.email().default('demo@example.com'),
  DEMO_PASSWORD: z.string().min(8).default('demo-password'),
  SIM_SEED: int(0).default(1),
  SIM_SCALE: z.enum(['tiny', 'small', 'demo', 'bench']).default('demo'),
  SIM_PORT: int(0, 65535).default(4010),
});

/** Every variable the gateway and its command line read (the command line's secrets besides the schema's). */
export const SETTING_NAMES: readonly string[] = [...Object.keys(ConfigSchema.shape), 'LEGACY_GATEWAY_PASSWORD', 'LEGACY_GATEWAY_KEY'];

/** Variables of the environment that look like a setting but are not one (`INDEX_ENABLEDD`, `PROT`), each with the nearest. */
export const settingLookalikes = (env: Record<string, string | undefined>): Lookalike[] => lookalikeVariables(env, SETTING_NAMES);

/** The schemes DATABASE_URL may start with (anything else with `://` is refused rather than taken for a file path). */
const STORE_SCHEMES = new Set(['postgres', 'postgresql', 'sqlite', 'file']);

/** render_credits figures of one v1 team (RENDER_CREDITS). */
export interface RenderCredits { readonly amount: number; readonly remaining: number; readonly used: number }

/** The variables as parsed, and the JSON ones parsed once into what the gateway reads. */
export type Config = Readonly<z.infer<typeof ConfigSchema>> & {
  readonly demo: boolean;
  /** ROUTE_MODES, parsed. */
  readonly routeModes: RouteModes;
  /** WEBHOOK_SECRETS, parsed: team id → signing secret. */
  readonly webhookSecrets: Readonly<Record<string, string>>;
  /** RENDER_CREDITS, parsed: team id → figures. */
  readonly renderCredits: Readonly<Record<string, RenderCredits>>;
};

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parses the environment once; every problem is listed in one ConfigError — the schema's and the cross-variable
 * checks' together (the checks read the raw values, so a bad variable does not hide the others).
 */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = ConfigSchema.safeParse(cleaned);
  const problems: string[] = [];
  if (!parsed.success) for (const issue of parsed.error.issues) problems.push(`${issue.path.join('.') || '(root)'}: ${issue.message}`);
  const c = (parsed.success ? parsed.data : cleaned) as Partial<z.infer<typeof ConfigSchema>>;
  const demo = cleaned.V1_BASE_URL === undefined;
  if (demo && cleaned.NODE_ENV === 'production') {
    problems.push('V1_BASE_URL: required in production (NODE_ENV=production); without it the gateway would start the demo, with a known password');
  }
  if (!demo) {
    if (!c.ENCRYPTION_KEY) problems.push('ENCRYPTION_KEY: required when V1_BASE_URL is set');
    if (!c.JWT_SECRET && !c.JWT_PRIVATE_KEY) problems.push('JWT_SECRET: required when V1_BASE_URL is set (or JWT_PRIVATE_KEY)');
  }
  if (c.REFRESH_TOKEN_COOKIE_SAME_SITE === 'none' && !c.REFRESH_COOKIE_SECURE) {
    problems.push('REFRESH_TOKEN_COOKIE_SAME_SITE: "none" needs REFRESH_COOKIE_SECURE=true (browsers refuse SameSite=None without Secure)');
  }
  if (c.SESSION_COOKIE_SAME_SITE === 'none' && !c.SESSION_COOKIE_SECURE) {
    problems.push('SESSION_COOKIE_SAME_SITE: "none" needs SESSION_COOKIE_SECURE=true (browsers refuse SameSite=None without Secure)');
  }
  if (c.ENCRYPTION_KEY && decodeKey(c.ENCRYPTION_KEY) === undefined) {
    problems.push('ENCRYPTION_KEY: must be 32 bytes, as 64 hex characters or base64');
  }
  const scheme = typeof c.DATABASE_URL === 'string' ? /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(c.DATABASE_URL)?.[1] : undefined;
  if (scheme !== undefined && !STORE_SCHEMES.has(scheme)) {
    // (the URL itself is never repeated: it may carry a password)
    problems.push(`DATABASE_URL: ${scheme}:// is not a store the gateway serves (postgres:// or postgresql:// for PostgreSQL; a file path, ` +
      'sqlite: or file: for SQLite)');
  }
  if (c.JWT_ALG !== undefined && c.JWT_ALG !== 'HS256' && !c.JWT_PRIVATE_KEY) problems.push(`JWT_PRIVATE_KEY: required for JWT_ALG=${c.JWT_ALG}`);
  let webhookSecrets: Record<string, string> = {};
  if (c.WEBHOOK_SECRETS) {
    try {
      const o = JSON.parse(c.WEBHOOK_SECRETS) as unknown;
      if (!o || typeof o !== 'object' || Array.isArray(o) || !Object.values(o).every((s) => typeof s === 'string')) {
        problems.push('WEBHOOK_SECRETS: must be a JSON object of team id → secret string');
      } else webhookSecrets = Object.assign(Object.create(null) as Record<string, string>, o);
    } catch {
      problems.push('WEBHOOK_SECRETS: not valid JSON');
    }
  }
  let renderCredits: Record<string, RenderCredits> = {};
  if (c.RENDER_CREDITS) {
    try {
      const o = JSON.parse(c.RENDER_CREDITS) as Record<string, Record<string, unknown>>;
      for (const [team, f] of Object.entries(o)) {
        if (!['amount', 'remaining', 'used'].every((k) => Number.isInteger(f?.[k])))
          problems.push(`RENDER_CREDITS: "${team}" needs integers amount, remaining and used`);
      }
      renderCredits = Object.assign(Object.create(null) as Record<string, RenderCredits>, o);
    } catch {
      problems.push('RENDER_CREDITS: not valid JSON');
    }
  }
  const routeModes = parseRouteModes(c.ROUTE_MODES, c.LEGACY_BASE_URL);
  problems.push(...routeModes.problems);
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  // the demo listens on loopback unless HOST is set explicitly (it has a known password)
  const host = demo && cleaned.HOST === undefined ? '127.0.0.1' : parsed.data.HOST;
  return Object.freeze({ ...parsed.data, HOST: host, demo, routeModes: routeModes.modes, webhookSecrets: Object.freeze(webhookSecrets),
    renderCredits: Object.freeze(renderCredits) });
}

/** 32-byte key from hex or base64, or undefined. */
export function decodeKey(v: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(v)) return Buffer.from(v, 'hex');
  const b = Buffer.from(v, 'base64');
  return b.length === 32 ? b : undefined;
}

