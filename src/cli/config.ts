import { existsSync } from 'node:fs';
import { lookalikeWarning } from '../config/lookalikes.js';
import { ConfigError, loadConfig, settingLookalikes, type Config } from '../config/schema.js';
import { StartupError } from '../config/startup.js';
import { demoSecrets, readDemoSecrets } from '../demo.js';
import { storeFolderProblem, storeUnreachable } from '../store/db.js';

let warned = false;

/** Variables that look like settings but are not, said once on stderr (before anything else can fail). */
function warnLookalikes(): void {
  if (warned) return;
  warned = true;
  for (const l of settingLookalikes(process.env)) process.stderr.write(`warning: ${lookalikeWarning(l)}\n`);
}

/**
 * The command line's configuration, checked before anything is created: the environment parsed, a store in a folder
 * that does not exist refused (the default ./data aside), and in demo mode the demo's secrets (created on first use, as
 * the gateway does).
 */
export function storeConfig(): Config {
  warnLookalikes();
  const config = loadConfig(process.env);
  const folder = process.env.DATABASE_URL ? storeFolderProblem(config.DATABASE_URL) : undefined;
  if (folder) throw new ConfigError([folder]);
  // the demo's store is the demo's to create: a command run where the demo never ran says so (it made an empty store and
  // new demo secrets there, which the next start then refused to pair with another simulator world)
  if (config.demo && !process.env.DATABASE_URL && !existsSync(config.DATABASE_URL)) {
    throw new StartupError(`no demo store at ${config.DATABASE_URL}: start the demo here first (npm start), or set DATABASE_URL and V1_BASE_URL`);
  }
  return config.demo ? loadConfig({ ...demoSecrets(config), ...process.env }) : config;
}

/**
 * The configuration of a command that uses no store: in demo mode the demo's secrets as the gateway keeps them, read
 * and never created (undefined values when the demo has not run yet).
 */
export function plainConfig(): Config {
  warnLookalikes();
  const config = loadConfig(process.env);
  const kept = config.demo ? readDemoSecrets(config) : undefined;
  return kept ? loadConfig({ ...kept, ...process.env }) : config;
}

/** Opens something on the store, saying in one line (naming DATABASE_URL) when its PostgreSQL cannot be reached. */
export async function onStore<T>(config: Config, open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (e) {
    const down = storeUnreachable(e, config.DATABASE_URL);
    throw down ? new StartupError(down) : e;
  }
}
