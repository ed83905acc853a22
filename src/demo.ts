import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { hashPassword } from './auth/passwords.js';
import type { Config } from './config/schema.js';
import { listening } from './config/startup.js';
import type { Deps } from './deps.js';
import { createSimulator, type Simulator } from './sim/server.js';
import { bindSimWorld } from './store/sim-world.js';
import { DEFAULT_ROLE } from './store/users.js';

/** Where the demo keeps its files: beside the SQLite file (./data for a PostgreSQL store). */
export function demoDir(config: Config): string {
  return config.DATABASE_URL.startsWith('postgres') ? './data' : dirname(config.DATABASE_URL);
}

/** Where the demo keeps its secrets. */
export const demoSecretsFile = (config: Config): string => join(demoDir(config), 'demo-secrets.json');

/** The demo's secrets if the demo has made them (read only: the command line uses the running demo's). */
export function readDemoSecrets(config: Config): { ENCRYPTION_KEY: string; JWT_SECRET: string; GATEWAY_ADMIN_TOKEN: string } | undefined {
  const file = demoSecretsFile(config);
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}

/** Demo secrets kept beside the demo database so restarts keep tokens and encrypted keys valid. */
export function demoSecrets(config: Config): { ENCRYPTION_KEY: string; JWT_SECRET: string; GATEWAY_ADMIN_TOKEN: string } {
  const dir = demoDir(config);
  const kept = readDemoSecrets(config);
  if (kept) return kept;
  mkdirSync(dir, { recursive: true });
  const secrets = {
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    JWT_SECRET: randomBytes(32).toString('base64url'),
    GATEWAY_ADMIN_TOKEN: randomBytes(24).toString('base64url'),
  };
  writeFileSync(demoSecretsFile(config), JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}

/**
 * The demo's simulator keeps its world across restarts: the world's identity and every write made to it are kept in a
 * journal beside the store, and a restart generates the same world and makes the writes again — the store's ids and
 * render data keep naming the same objects, and the ids handed out next are new ones.
 */
export async function startDemoSimulator(config: Config, logger: Logger): Promise<{ sim: Simulator; url: string; world: string }> {
  const journal = join(demoDir(config), 'demo-v1-world.jsonl');
  const sim = createSimulator({ seed: config.SIM_SEED, scale: config.SIM_SCALE, clock: 'real', journal });
  const url = await listening('SIM_PORT', config.SIM_PORT, '127.0.0.1', () => sim.listen(config.SIM_PORT, '127.0.0.1'));
  const { world } = sim.identity;
  const kept = !sim.journal?.created;
  logger.info({ url, seed: config.SIM_SEED, scale: config.SIM_SCALE, world, kept, writes: sim.journal?.writes.length ?? 0, journal },
    'v1 simulator started (demo mode)');
  const store = config.DATABASE_URL.startsWith('postgres') ? 'the demo database' : config.DATABASE_URL;
  return {
    sim,
    url,
    world: kept
      ? `the world kept in ${journal} (${world}, seed ${config.SIM_SEED}, scale ${config.SIM_SCALE}), as the last run left it ` +
        `(${sim.journal?.writes.length ?? 0} writes made again); to start afresh, stop the demo and remove ${journal} and ${store}`
      : `a new world (${world}, seed ${config.SIM_SEED}, scale ${config.SIM_SCALE}), kept in ${journal} across restarts`,
  };
}

/** Records the simulator's world in the store, or refuses a store filled from another world (SimWorldMismatchError). */
export async function bindDemoStore(deps: Deps, sim: Simulator): Promise<void> {
  const journal = sim.journal?.file ?? 'its journal';
  const store = deps.config.DATABASE_URL.startsWith('postgres') ? 'empty the database' : `remove ${deps.config.DATABASE_URL} (and its -wal/-shm files)`;
  await bindSimWorld(deps.db.kysely, sim.identity,
    `Start the demo with the world the store was filled from (${journal} keeps it: it was removed or replaced), or start afresh: ` +
      `stop the demo, ${store} and ${journal}.`);
}

/** Registers the gateway's webhook receiver with every simulated team; returns WEBHOOK_SECRETS. */
export function registerDemoWebhooks(sim: Simulator, gatewayPort: number): string {
  const secrets: Record<string, string> = {};
  for (const team of sim.world.teams.values()) {
    const url = `http://127.0.0.1:${gatewayPort}/_gateway/webhooks/v1/${encodeURIComponent(team.id)}`;
    const hook = sim.webhooks.register(team.id, url, ['render.status_changed', 'render.complete', 'render.failed']);
    if (hook) secrets[team.id] = hook.secret;
  }
  return JSON.stringify(secrets);
}

/** The demo legacy user, bound to the simulator's first seeded person. */
export async function ensureDemoUser(deps: Deps, sim: Simulator): Promise<void> {
  const person = sim.world.listKeys()[0];
  if (!person) throw new Error('the simulator has no people');
  const existing = await deps.users.byEmail(deps.config.DEMO_EMAIL);
  if (existing) {
    await deps.users.rebind(existing.id, person.api_key, person.user_id);
    await deps.users.setPasswordHash(existing.id, await hashPassword(deps.config.DEMO_PASSWORD));
    await deps.idMap.importPairs([{ type: 'user', uuid: existing.id, v1Id: person.user_id }]).catch(() => undefined);
  } else {
    const u = await deps.users.create({
      email: deps.config.DEMO_EMAIL,
      passwordHash: await hashPassword(deps.config.DEMO_PASSWORD),
      firstName: 'Demo',
      lastName: 'User',
      role: DEFAULT_ROLE,
      v1Key: person.api_key,
      v1UserId: person.user_id,
    });
    await deps.idMap.importPairs([{ type: 'user', uuid: u.id, v1Id: person.user_id }]);
  }
  await deps.ids.load();
}
