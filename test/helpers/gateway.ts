import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { hashPassword } from '../../src/auth/passwords.js';
import { loadConfig, type Config } from '../../src/config/schema.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { DEFAULT_ROLE } from '../../src/store/users.js';
import { createLogger } from '../../src/log/logger.js';
import { startSim, type RunningSim } from './sim.js';
import type { Clock } from '../../src/lib/clock.js';

export const TEST_ENV = {
  ENCRYPTION_KEY: '11'.repeat(32),
  JWT_SECRET: 'test-secret-test-secret-test-secret-0123',
  GATEWAY_ADMIN_TOKEN: 'operator-token-0123456789',
  LOGIN_STALL_MS: '0',
  LOG_LEVEL: 'info',
};

export interface TestGateway {
  app: FastifyInstance;
  deps: Deps;
  config: Config;
  s: RunningSim;
  logs: string[];
  /** Creates a legacy user bound to the simulator person at `index`; returns its id. */
  addUser(index: number, email: string, password?: string): Promise<string>;
  login(email: string, password?: string): Promise<string>;
  get(url: string, token?: string, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Record<string, unknown> }>;
  close(): Promise<void>;
}

export interface GatewayOptions {
  readonly clock?: Clock;
  /** A running simulator to share (two instances over one v1); the gateway then does not close it. */
  readonly sim?: RunningSim;
  /** The gateway keeps the simulator's time (its manual clock): what v1 stamps and what the gateway reads agree. */
  readonly simClock?: boolean;
}

export async function startGateway(env: Record<string, string> = {}, simOptions: Parameters<typeof startSim>[0] = {}, options: GatewayOptions = {}): Promise<TestGateway> {
  const s = options.sim ?? await startSim(simOptions);
  const dir = mkdtempSync(join(tmpdir(), 'gw-'));
  const config = loadConfig({ ...TEST_ENV, V1_BASE_URL: s.url, DATABASE_URL: env.DATABASE_URL ?? join(dir, 'gateway.db'), V1_RETRY_BASE_MS: '5', ...env });
  const logs: string[] = [];
  const sink = new Writable({ write(chunk, _enc, cb) { logs.push(chunk.toString()); cb(); } });
  const logger = createLogger(config.LOG_LEVEL, sink);
  const clock = options.clock ?? (options.simClock ? { now: () => s.sim.world.clock.now() } : undefined);
  const deps = await createDeps(config, logger, clock ? { clock } : {});
  const app = await buildApp(deps);
  await app.ready();
  const gw: TestGateway = {
    app, deps, config, s, logs,
    async addUser(index, email, password = 'correct horse battery') {
      const person = s.keys[index]!;
      const u = await deps.users.create({ email, passwordHash: await hashPassword(password), firstName: `First${index}`, lastName: `Last${index}`, role: DEFAULT_ROLE, v1Key: person.api_key, v1UserId: person.user_id });
      await deps.idMap.importPairs([{ type: 'user', uuid: u.id, v1Id: person.user_id }]);
      await deps.ids.load();
      return u.id;
    },
    async login(email, password = 'correct horse battery') {
      const res = await app.inject({ method: 'POST', url: '/auth/login', payload: { email, password } });
      if (res.statusCode !== 200) throw new Error(`login failed ${res.statusCode} ${res.body}`);
      return res.json().data.access_token as string;
    },
    async get(url, token, headers = {}) {
      const res = await app.inject({ method: 'GET', url, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });
      return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined, headers: res.headers };
    },
    async close() {
      await app.close();
      await deps.close();
      if (!options.sim) await s.sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return gw;
}
