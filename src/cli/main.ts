#!/usr/bin/env node
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { AdminError, importIdMap } from '../admin/operations.js';
import type { Config } from '../config/schema.js';
import { loadMappings } from '../config/mappings.js';
import { createDeps, type Deps } from '../deps.js';
import { demoSecretsFile } from '../demo.js';
import { bindSimWorld } from '../store/sim-world.js';
import { request } from 'undici';
import { createLogger } from '../log/logger.js';
import { openDb } from '../store/db.js';
import { migrate } from '../store/migrations.js';
import { mappingReport, mappingReportText } from '../translate/coverage.js';
import { readRecords } from '../lib/csv.js';
import { reportLink } from '../compare/links.js';
import { startStandin } from './standin.js';
import { buildApp } from '../app.js';
import { buildMigrationReport } from '../admin/migration-report.js';
import { reportHtml, reportMarkdown } from '../migrate/render.js';
import { ClientShapeStore } from '../store/client-shapes.js';
import { ClientLabelStore, labelProblem } from '../store/client-labels.js';
import { indexCommand } from './index-command.js';
import { replayCommand } from './replay-command.js';
import { deprecationsCommand } from './deprecations-command.js';
import { secret, usersCommand } from './users-command.js';
import { out } from './out.js';
import { UsageError } from './usage-error.js';
import { groupCommands, helpFor, USAGE } from './help.js';
import { onStore, plainConfig, storeConfig } from './config.js';
import { listening, missingMappings, StartupError } from '../config/startup.js';

/** The v1 the command talks to, and where that URL came from (said when v1 cannot be reached). */
interface V1Target { readonly url: string; readonly source: string; readonly demoSimulator: boolean }
function v1Target(flag: string | undefined, config: Config): V1Target {
  if (flag) return { url: flag, source: '--v1', demoSimulator: false };
  if (config.V1_BASE_URL) return { url: config.V1_BASE_URL, source: 'V1_BASE_URL', demoSimulator: false };
  return { url: `http://127.0.0.1:${config.SIM_PORT}`, source: `V1_BASE_URL is unset: the demo's simulator, SIM_PORT=${config.SIM_PORT}`, demoSimulator: true };
}

/** What a running simulator says of its world (GET /_sim/world, loopback admin route); undefined when none answers. */
async function simulatorWorld(url: string): Promise<{ world: string; seed: number; scale: string } | undefined> {
  try {
    const res = await request(`${url}/_sim/world`, { signal: AbortSignal.timeout(2_000) });
    if (res.statusCode !== 200) { await res.body.dump(); return undefined; }
    const body = (await res.body.json()) as { world?: unknown; seed?: unknown; scale?: unknown };
    return typeof body.world === 'string' ? { world: body.world, seed: Number(body.seed), scale: String(body.scale) } : undefined;
  } catch {
    return undefined;
  }
}

/** v1 must answer (a v1 answers 401 to GET /v1/me without a key); otherwise an error naming the URL and its source. */
async function requireV1(target: V1Target, purpose: string): Promise<void> {
  let status: number;
  try {
    const res = await request(`${target.url}/v1/me`, { signal: AbortSignal.timeout(5_000) });
    status = res.statusCode;
    await res.body.dump();
  } catch (e) {
    const cause = (e as { code?: string }).code ?? (e as Error).message;
    const hint = target.demoSimulator ? ' — start the demo first (npm start), or set V1_BASE_URL or --v1' : '';
    throw new AdminError(`${purpose} needs a reachable v1: ${target.url} (${target.source}) did not answer (${cause})${hint}`);
  }
  if (status !== 401) throw new AdminError(`${purpose} needs a v1: ${target.url} (${target.source}) answered GET /v1/me without a key with ${status}, not 401`);
}

/**
 * How long a command waits for the write lock of a gateway serving the same SQLite file: a first backfill writes for
 * seconds (attack pass 17, L1: `users add` said "database is locked" after the gateway's 5 s).
 */
const STORE_WAIT_MS = 60_000;
const storeOptions = (config: Config) => ({
  sqliteSynchronous: config.SQLITE_SYNCHRONOUS,
  connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
  sqliteWaitMs: STORE_WAIT_MS,
});

async function withDeps<T>(v1: string | undefined, fn: (deps: Deps, target: V1Target) => Promise<T>): Promise<T> {
  const config = storeConfig();
  const target = v1Target(v1, config);
  const deps = await onStore(config, () => createDeps(config, createLogger('silent'), { v1BaseUrl: target.url, sqliteWaitMs: STORE_WAIT_MS }));
  try {
    // the demo's store is used only with the simulator world it was filled from (the running demo's)
    const world = target.demoSimulator ? await simulatorWorld(target.url) : undefined;
    if (world) {
      await bindSimWorld(deps.db.kysely, world, `The simulator on ${target.url} is not the one this store was filled from: ` +
        'run the command beside the demo started on this store (npm start), or point DATABASE_URL at the store of this simulator.');
    }
    return await fn(deps, target);
  } finally {
    await deps.close();
  }
}

/** Why `migrate report --client` found nothing: the clients the store has recorded (a few named), or none yet. */
async function unknownClient(deps: Deps, client: string): Promise<string> {
  const known = [...new Set((await new ClientShapeStore(deps.db.kysely).list()).map((r) => r.client))].sort();
  if (known.length === 0) return `no client ${client}: no client has been recorded yet (the gateway records each client's query shapes as it serves them)`;
  const named = known.length > 10 ? `${known.slice(0, 10).join(', ')} and ${known.length - 10} more` : known.join(', ');
  return `no client ${client} among the recorded ones: ${named} (legacy-gateway migrate report without --client reports them all)`;
}

/**
 * Words a command does not take are refused, never ignored: `migrate reprot` ran the store's migrations, `index sync
 * team_…` synced every team and `migrate report user:…` reported every client.
 */
function refuseLeftovers(group: string | undefined, action: string | undefined, arg: string | undefined, rest: readonly string[]): void {
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
  if (group === 'migrate' && action !== undefined && action !== 'report' && action !== 'label') {
    throw new UsageError(`unknown migrate command "${action}" (migrate alone applies the store's migrations; migrate report [--client ID]; ` +
      'migrate label CLIENT --label TEXT)');
  }
  if ((group === 'migrate' || group === 'index') && action !== 'label' && arg !== undefined) {
    throw new UsageError(`unexpected argument "${arg}"${group === 'index' ? ' (a team is named with --team)' : ' (a client is named with --client)'}`);
  }
}

/** `migrate label CLIENT --label TEXT | --clear`: the operator's name for a client in the migration report (store only). */
async function labelCommand(client: string | undefined, label: string | undefined, clear: boolean): Promise<number> {
  if (!client) throw new UsageError('migrate label needs a client: migrate label user:<id>~<family> --label TEXT (or --clear)');
  if ((label === undefined) === !clear) throw new UsageError('migrate label takes one of --label TEXT and --clear');
  const problem = labelProblem(client, label ?? null);
  if (problem) throw new UsageError(problem);
  const config = storeConfig();
  const db = await onStore(config, async () => {
    const d = await openDb(config.DATABASE_URL, storeOptions(config));
    await migrate(d.kysely);
    return d;
  });
  try {
    const done = await new ClientLabelStore(db.kysely).set(client, label ?? null);
    out(label !== undefined ? `${client} is labelled "${label.trim()}"` : done ? `${client} has no label now` : `${client} had no label`);
  } finally {
    await db.close();
  }
  return 0;
}

export async function run(argv: string[]): Promise<number> {
  // (the deprecations commands parse their own options: --file)
  if (argv[0] === 'deprecations' && !argv.includes('--help') && !argv.includes('-h')) {
    return withDeps(undefined, (deps) => deprecationsCommand(deps, argv.slice(1)));
  }
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      password: { type: 'string' },
      key: { type: 'string' },
      first: { type: 'string' },
      last: { type: 'string' },
      role: { type: 'string' },
      id: { type: 'string' },
      name: { type: 'string' },
      out: { type: 'string' },
      json: { type: 'boolean' },
      v1: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      legacy: { type: 'string' },
      gateway: { type: 'string' },
      'gateway-token': { type: 'string' },
      threshold: { type: 'string' },
      writes: { type: 'boolean' },
      'password-stdin': { type: 'boolean' },
      'skip-existing': { type: 'boolean' },
      minutes: { type: 'string' },
      port: { type: 'string' },
      base: { type: 'string' }, update: { type: 'boolean' }, check: { type: 'boolean' },
      'key-stdin': { type: 'boolean' },
      team: { type: 'string', multiple: true },
      debug: { type: 'boolean' },
      repair: { type: 'boolean' },
      client: { type: 'string' },
      format: { type: 'string' },
      'skip-proof': { type: 'boolean' },
      label: { type: 'string' },
      clear: { type: 'boolean' },
    },
  });
  const [group, action, arg] = positionals;
  if (values.help) {
    out(helpFor(group, action));
    return 0;
  }
  if (!group) {
    out(USAGE);
    return 2;
  }
  const commands = action === undefined ? groupCommands(group) : undefined;
  if (commands) throw new UsageError(`"${group}" needs a command: ${commands.join(', ')} (legacy-gateway ${group} --help)`);
  if (values['password-stdin'] && values['key-stdin']) throw new UsageError('only one of --password-stdin and --key-stdin can read standard input');
  const password = await secret(values.password, values['password-stdin'], 'LEGACY_GATEWAY_PASSWORD');
  const key = await secret(values.key, values['key-stdin'], 'LEGACY_GATEWAY_KEY');
  refuseLeftovers(group, action, arg, positionals.slice(3));
  if (group === 'migrate' && action === 'label') return labelCommand(arg, values.label, values.clear === true);
  if (group === 'migrate' && action !== 'report') {
    const config = storeConfig();
    const db = await openDb(config.DATABASE_URL, storeOptions(config));
    try {
      const applied = await onStore(config, () => migrate(db.kysely));
      out(applied.length ? `applied: ${applied.join(', ')}` : 'up to date');
    } finally {
      await db.close();
    }
    return 0;
  }
  if (group === 'compare' && action === 'link') {
    const config = plainConfig();
    if (!config.GATEWAY_ADMIN_TOKEN) {
      throw new AdminError(config.demo
        ? `compare link signs with the demo's GATEWAY_ADMIN_TOKEN, kept in ${demoSecretsFile(config)}, which does not exist yet: start the demo ` +
          'first (npm start) in this folder, or set GATEWAY_ADMIN_TOKEN'
        : 'compare link needs GATEWAY_ADMIN_TOKEN (the links are signed with it)');
    }
    const minutes = values.minutes === undefined ? 60 : Number(values.minutes);
    if (!(minutes > 0 && minutes <= 7 * 24 * 60)) throw new UsageError('--minutes must be between 1 and 10080');
    const base = (values.base ?? `http://localhost:${config.PORT}`).replace(/\/$/, '');
    out(`${base}/_gateway/compare/view?link=${encodeURIComponent(reportLink(config.GATEWAY_ADMIN_TOKEN, Date.now(), minutes * 60_000))}`);
    return 0;
  }
  if (group === 'mappings' && action === 'report') {
    const m = loadMappings(plainConfig().MAPPINGS_DIR);
    out(values.json ? JSON.stringify(mappingReport(m), null, 2) : mappingReportText(m));
    return 0;
  }
  return withDeps(values.v1, async (deps, target) => {
    if (group === 'replay') return replayCommand(deps, action, values);
    if (group === 'legacy-standin') {
      const port = values.port === undefined ? 8070 : Number(values.port);
      if (!(Number.isInteger(port) && port >= 0 && port <= 65535)) throw new UsageError(`--port must be a port number (got "${values.port}")`);
      // without v1 every answer would be a 503 the gateway passes on as the legacy side's
      await requireV1(target, 'the legacy stand-in');
      const { url, close } = await listening('--port', port, '127.0.0.1', () => startStandin(deps, port));
      process.stderr.write(`legacy stand-in on ${url}: start the gateway with LEGACY_BASE_URL=${url} and ROUTE_MODES (see docs/operations.md)\n`);
      await new Promise<void>((resolve) => { process.once('SIGINT', resolve); process.once('SIGTERM', resolve); });
      await close();
      return 0;
    }
    if (group === 'index') {
      const hint = target.demoSimulator ? ' — start the demo first (npm start), or set V1_BASE_URL or --v1' : '';
      return indexCommand(deps, action, values.team, values.repair === true, { v1: { where: `${target.url} (${target.source})`, hint } });
    }
    if (group === 'migrate') {
      const format = values.format ?? 'md';
      if (format !== 'md' && format !== 'json' && format !== 'html') throw new UsageError(`--format is md, json or html (got "${format}")`);
      // proofs read v1: without it every proof would fail and the report look ready to be acted on
      if (values['skip-proof'] !== true) await requireV1(target, 'migrate report (its proofs; --skip-proof for the equivalents alone)');
      // the proofs ask the gateway's own legacy answers, in process
      const app = await buildApp(deps);
      try {
        await app.ready();
        const report = await buildMigrationReport(deps, (o) => app.inject(o), {
          ...(values.client ? { client: values.client } : {}), prove: values['skip-proof'] !== true,
        });
        if (values.client && report.clients.length === 0) throw new AdminError(await unknownClient(deps, values.client));
        const text = format === 'json' ? JSON.stringify(report, null, 2) : format === 'html' ? reportHtml(report) : reportMarkdown(report);
        if (values.out) {
          writeFileSync(values.out, text);
          out(`wrote the migration report (${report.clients.length} clients) to ${values.out}`);
        } else out(text);
      } finally {
        await app.close();
      }
      return 0;
    }
    if (group === 'users' || group === 'tokens') return usersCommand(deps, group, action, arg, values, password, key);
    switch (`${group} ${action}`) {
      case 'ids import': {
        if (!arg) throw new UsageError('ids import needs a file');
        const r = await importIdMap(deps, readRecords(readFileSync(arg, 'utf8'), arg));
        for (const p of r.problems) out(`  ! ${p}`);
        out(`imported ${r.imported}, unchanged ${r.unchanged}`);
        return r.problems.length ? 1 : 0;
      }
      case 'ids export': {
        const rows = (await deps.idMap.all()).map((p) => `${p.uuid},${p.v1Id},${p.type},${p.source}`);
        const csv = ['legacy_id,v1_id,type,source', ...rows].join('\n') + '\n';
        if (values.out) {
          writeFileSync(values.out, csv);
          out(`wrote ${rows.length} pairs to ${values.out}`);
        } else process.stdout.write(csv);
        return 0;
      }
      default:
        throw new UsageError(`unknown command "${[group, action].filter(Boolean).join(' ')}" (legacy-gateway --help lists the commands)`);
    }
  });
}

/** True when this module is the program being run (directly, through the `legacy-gateway` bin link, or by tsx). */
function isEntryPoint(): boolean {
  const argv1 = process.argv[1];
  if (!argv1) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(argv1)).href;
  } catch {
    return false;
  }
}

/** Set by the first error writing standard output (a closed pipe included). */
let outputError: NodeJS.ErrnoException | undefined;

/**
 * Exits only once everything written to stdout has been handed to the OS: piped output (`| wc -l`, `> file`) is never
 * cut short. A closed pipe (EPIPE: `| head`) ends quietly; any other write error (`> /dev/full`: ENOSPC) exits 1.
 */
function exitAfterOutput(code: number): void {
  process.stdout.write('', (e?: Error | null) => {
    const failed = outputError ?? (e as NodeJS.ErrnoException | null | undefined) ?? undefined;
    if (!failed) process.exit(code);
    if (failed.code === 'EPIPE') process.exit(code);
    process.stderr.write(`cannot write the output: ${failed.message}\n`);
    process.exit(1);
  });
}

const CONFIGURATION = new Set(['ConfigError', 'MappingError', 'WrongEncryptionKeyError', 'SimWorldMismatchError', 'WorldJournalError', 'ReplayModeError']);
const FILE_ERRORS: Record<string, string> = {
  ENOENT: 'no such file or directory', EACCES: 'permission denied', EISDIR: 'is a directory', ENOTDIR: 'not a directory', EPERM: 'not permitted',
};

/**
 * A failure as the operator sees it: one line on stderr (no stack trace unless --debug) and the exit code — 78 for
 * configuration, 2 for a command called wrongly, 1 for anything else.
 */
function failure(e: unknown): { code: number; message: string } {
  const err = e instanceof Error ? e : new Error(String(e));
  const oneLine = (s: string) => s.split('\n').map((l) => l.trim()).filter(Boolean).join(' ');
  const problems = (err as { problems?: readonly string[] }).problems;
  const elsewhere = missingMappings(err, process.env.MAPPINGS_DIR || './mappings', process.cwd());
  if (elsewhere) return { code: 78, message: elsewhere };
  if (CONFIGURATION.has(err.name)) {
    const what = err.name === 'ConfigError' ? 'invalid configuration' : err.name === 'MappingError' ? 'invalid mappings' : undefined;
    return { code: 78, message: what && problems ? `${what}: ${problems.join('; ')}` : oneLine(err.message) };
  }
  const code = (err as NodeJS.ErrnoException).code;
  if (err instanceof UsageError || code?.startsWith('ERR_PARSE_ARGS')) {
    const message = oneLine(err.message).replace(/\. To specify a positional argument.*$/, '');
    return { code: 2, message: err instanceof UsageError ? message : `${message} (legacy-gateway --help lists the commands and options)` };
  }
  if (err instanceof AdminError) return { code: 1, message: oneLine(err.message) };
  if (err instanceof StartupError) return { code: err.exitCode, message: oneLine(err.message) };
  const path = (err as NodeJS.ErrnoException).path;
  if (code && path && FILE_ERRORS[code]) return { code: 1, message: `cannot open ${path}: ${FILE_ERRORS[code]}` };
  return { code: 1, message: `${oneLine(err.message) || err.name} (--debug prints the stack trace)` };
}

if (isEntryPoint()) {
  const debug = process.argv.includes('--debug');
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    outputError ??= e;
    if (e.code === 'EPIPE') process.exit(0);
    process.stderr.write(`cannot write the output: ${e.message}\n`);
    process.exit(1);
  });
  run(process.argv.slice(2)).then(exitAfterOutput, (e: unknown) => {
    const f = failure(e);
    process.stderr.write(`${f.message}\n${debug && e instanceof Error && e.stack ? `${e.stack}\n` : ''}`);
    exitAfterOutput(f.code);
  });
}
