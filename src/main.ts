import { createServer } from 'node:net';
import { join } from 'node:path';
import { buildApp } from './app.js';
import { applyRuntimeSettings } from './config/runtime.js';
import { lookalikeWarning } from './config/lookalikes.js';
import { ConfigError, loadConfig, settingLookalikes } from './config/schema.js';
import { listening, missingMappings, StartupError } from './config/startup.js';
import { MappingError } from './config/mappings.js';
import { createDeps } from './deps.js';
import { sqliteFile, storeFolderProblem, storeUnreachable } from './store/db.js';
import { claimSqliteStore, StoreClaimedError } from './store/instance-claim.js';
import { WrongEncryptionKeyError } from './store/key-check.js';
import { createLogger } from './log/logger.js';
import type { Simulator } from './sim/server.js';
import { startMetricsServer } from './ops/metrics-server.js';
import { shutdown } from './ops/shutdown.js';

type Demo = typeof import('./demo.js');

/** The gateway's entry point: reads process.env (as the CLI's entry points do), listens, and handles signals. */
async function main(): Promise<void> {
  let config = loadConfig(process.env);
  applyRuntimeSettings(config);
  const logger = createLogger(config.LOG_LEVEL);
  for (const l of settingLookalikes(process.env)) logger.warn({ variable: l.name, nearest: l.nearest }, lookalikeWarning(l));
  if (config.TRUST_PROXY === true) {
    logger.warn('TRUST_PROXY=true trusts every hop: the client address is the left-most X-Forwarded-For entry, which clients write ' +
      'themselves (the login limiter and the anonymous gate count per address) — set the number of proxies you run (1) or their addresses');
  }
  // a store in a folder that does not exist is a mistake, checked before the demo writes anything (its default ./data aside)
  const folder = process.env.DATABASE_URL ? storeFolderProblem(config.DATABASE_URL) : undefined;
  if (folder) throw new ConfigError([folder]);
  let sim: Simulator | undefined;
  let v1BaseUrl = config.V1_BASE_URL;
  let simWorld = '';
  // the simulator and demo set-up are loaded only in demo mode (a deployment never carries them in memory)
  const demo: Demo | undefined = config.demo ? await import('./demo.js') : undefined;
  // a port in use is said before the demo writes its secrets, store and world (a failed start leaves nothing behind)
  if (demo && config.PORT !== 0) await listening('PORT', config.PORT, config.HOST, () => portFree(config.PORT, config.HOST), 'HOST');
  // one gateway serves an SQLite file (claimed before the demo writes anything; several instances need PostgreSQL)
  const file = sqliteFile(config.DATABASE_URL);
  const claim = file ? await claimSqliteStore(file) : undefined;
  if (claim) process.once('exit', () => claim.release()); // a failed start or a stop leaves no claim behind
  if (demo) {
    const { demoSecrets, startDemoSimulator, registerDemoWebhooks } = demo;
    const secrets = demoSecrets(config);
    config = loadConfig({ ...secrets, ...process.env });
    const started = await startDemoSimulator(config, logger);
    sim = started.sim;
    v1BaseUrl = started.url;
    simWorld = started.world;
    if (!process.env.WEBHOOK_SECRETS) config = loadConfig({ ...secrets, ...process.env, WEBHOOK_SECRETS: registerDemoWebhooks(sim, config.PORT) });
  }
  const deps = await createDeps(config, logger, v1BaseUrl ? { v1BaseUrl } : {}).catch((e: unknown) => {
    const down = storeUnreachable(e, config.DATABASE_URL);
    throw down ? new StartupError(down) : e;
  });
  if (demo && sim) {
    await demo.bindDemoStore(deps, sim);
    await demo.ensureDemoUser(deps, sim);
  }
  const app = await buildApp(deps);
  await listening('PORT', config.PORT, config.HOST, () => app.listen({ port: config.PORT, host: config.HOST }), 'HOST');
  if (demo) {
    // the banner comes last: buffered log lines first
    await new Promise<void>((resolve) => logger.flush(() => resolve()));
    const base = `http://localhost:${config.PORT}`;
    process.stdout.write(
      `\nDemo mode: legacy API on ${base} over the built-in v1 simulator.\n` +
        `v1 simulator: ${simWorld}.\n` +
        `Demo user: ${config.DEMO_EMAIL} / ${config.DEMO_PASSWORD}\n` +
        `Log in:  curl -s -X POST ${base}/auth/login -H 'content-type: application/json' ` +
        `-d '{"email":"${config.DEMO_EMAIL}","password":"${config.DEMO_PASSWORD}"}'\n` +
        (process.env.GATEWAY_ADMIN_TOKEN
          ? 'Operator token (for /_gateway/*): the GATEWAY_ADMIN_TOKEN of your environment\n\n'
          : `Operator token (for /_gateway/*): GATEWAY_ADMIN_TOKEN in ${join(demo.demoDir(config), 'demo-secrets.json')}\n\n`),
    );
  }
  const metricsPort = config.METRICS_PORT;
  const metricsServer = metricsPort
    ? await listening('METRICS_PORT', metricsPort, config.METRICS_HOST, () => startMetricsServer(deps.metrics, metricsPort, config.METRICS_HOST),
      'METRICS_HOST')
    : undefined;
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    void shutdown(
      {
        drain: () => deps.lifecycle.drain(deps.clock.now()),
        close: async () => {
          await app.close();
          metricsServer?.close();
          await deps.close();
          await sim?.close();
          claim?.release();
        },
        graceMs: config.SHUTDOWN_GRACE_MS,
        exit: (code) => process.exit(code),
        log: (message, fields) => logger.info(fields ?? {}, message),
      },
      signal,
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((e: unknown) => {
  // (the simulator's errors by name: its modules are loaded only in demo mode)
  const world = ['WorldJournalError', 'SimWorldMismatchError'].includes((e as Error)?.name);
  const elsewhere = missingMappings(e, process.env.MAPPINGS_DIR || './mappings', process.cwd());
  if (elsewhere) {
    process.stderr.write(`${elsewhere}\n`);
    process.exit(78);
  }
  if (e instanceof ConfigError || e instanceof MappingError || e instanceof WrongEncryptionKeyError || e instanceof StoreClaimedError || world) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(78);
  }
  if (e instanceof StartupError) {
    process.stderr.write(`${e.message}\n`);
    process.exit(e.exitCode);
  }
  process.stderr.write(`gateway failed to start: ${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});

/** Listens on `port` and closes at once: throws (EADDRINUSE, EACCES) when the port cannot be had. */
function portFree(port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}
