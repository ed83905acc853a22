import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';
export interface Db { readonly kysely: Kysely<Database>; readonly dialect: Dialect; close(): Promise<void> }

/** One round trip to the store (health and readiness). */
export async function pingDb(db: Db): Promise<void> {
  await sql`select 1`.execute(db.kysely);
}

const isPostgres = (url: string) => /^postgres(ql)?:\/\//.test(url);
/**
 * The file an SQLite URL names, every `sqlite:`/`file:` prefix taken off (libsql would read a `file:` left in the path as
 * a URI of its own: `file:file:gateway.db` opened gateway.db while the instance claim went to a file named
 * `file:gateway.db` — attack pass 16's re-check, M).
 */
function sqlitePath(url: string): string {
  let p = url;
  for (;;) {
    const next = p.replace(/^sqlite:(\/\/)?/, '').replace(/^file:/, '');
    if (next === p) return p;
    p = next;
  }
}

/** The SQLite file a store URL names; undefined for PostgreSQL and `:memory:`. */
export function sqliteFile(url: string): string | undefined {
  if (isPostgres(url)) return undefined;
  const path = sqlitePath(url);
  return path === ':memory:' || path === '' ? undefined : path;
}

/**
 * Checked before anything is created (start-up and the command line): an SQLite file whose folder does not exist is a
 * mistake to name, not a folder to create (openDb would create it). Undefined when the location is usable.
 */
export function storeFolderProblem(url: string): string | undefined {
  if (isPostgres(url)) return undefined;
  const path = sqlitePath(url);
  if (path === ':memory:' || path === '') return undefined;
  const folder = dirname(path);
  try {
    if (statSync(folder).isDirectory()) return undefined;
    return `DATABASE_URL: ${folder} is not a folder (the SQLite file ${path} would be in it)`;
  } catch {
    return `DATABASE_URL: the folder ${folder} does not exist (create it first: the SQLite file ${path} goes in it)`;
  }
}

/** Where a PostgreSQL URL points, without its user or password: `host:port/database`. */
export function storeAddress(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname || 'localhost'}:${u.port || '5432'}${u.pathname || ''}`;
  } catch {
    return 'an unparsable URL';
  }
}

/** What a failure to reach PostgreSQL means, in one line naming DATABASE_URL (never its password); undefined for other errors. */
export function storeUnreachable(e: unknown, url: string): string | undefined {
  if (!isPostgres(url)) return undefined;
  const code = (e as { code?: unknown })?.code;
  const causes: Record<string, string> = {
    ECONNREFUSED: 'refused the connection (ECONNREFUSED): is PostgreSQL running there?',
    ENOTFOUND: 'has a host name that does not resolve (ENOTFOUND)',
    EAI_AGAIN: 'has a host name that does not resolve now (EAI_AGAIN)',
    ETIMEDOUT: 'did not answer (ETIMEDOUT)',
    ECONNRESET: 'closed the connection (ECONNRESET)',
    EHOSTUNREACH: 'is unreachable (EHOSTUNREACH)',
    '28P01': 'refused the user or password (28P01)',
    '28000': 'refused the connection for this user (28000)',
    '3D000': 'has no such database (3D000)',
  };
  // (pg's own connection timeout has no code: DATABASE_CONNECT_TIMEOUT_MS passed while connecting)
  const timedOut = /timeout exceeded when trying to connect|connection timeout/i.test(String((e as { message?: unknown })?.message));
  const cause = typeof code === 'string' ? causes[code] : timedOut ? 'did not answer in time (DATABASE_CONNECT_TIMEOUT_MS)' : undefined;
  return cause ? `DATABASE_URL: PostgreSQL at ${storeAddress(url)} ${cause}` : undefined;
}

/**
 * Opens the store: PostgreSQL for a postgres:// URL, otherwise an SQLite file (libsql, prebuilt) at
 * the given path (`:memory:` for throwaway stores).
 */
export interface OpenOptions {
  readonly sqliteSynchronous?: 'full' | 'normal';
  readonly connectTimeoutMs?: number;
  /**
   * How long an SQLite write waits for another process's write lock (`busy_timeout`). The gateway waits 5 s: SQLite
   * waits on the event loop. The command line, beside a gateway whose first backfill writes for seconds, waits longer.
   */
  readonly sqliteWaitMs?: number;
}

export async function openDb(url: string, o: OpenOptions = {}): Promise<Db> {
  if (isPostgres(url)) {
    const pg = (await import('pg')).default;
    pg.types.setTypeParser(20, (v: string) => Number(v)); // bigint → number (epoch ms fit safely)
    const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: o.connectTimeoutMs ?? 10_000 });
    const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { kysely, dialect: 'postgres', close: () => kysely.destroy() };
  }
  const path = sqlitePath(url);
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const Libsql = (await import('libsql')).default;
  const database = new Libsql(path);
  // (SQLite answers on the event loop: with `full`, every commit waits for the disk there — SQLITE_SYNCHRONOUS)
  const synchronous = o.sqliteSynchronous === 'normal' ? 'NORMAL' : 'FULL';
  const wait = Math.trunc(o.sqliteWaitMs ?? 5_000);
  database.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = ${synchronous}; PRAGMA busy_timeout = ${wait}; PRAGMA foreign_keys = ON;`);
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: preparedOnce(database) as never }) });
  return { kysely, dialect: 'sqlite', close: () => kysely.destroy() };
}

interface SqliteDatabase { prepare(sql: string): unknown; close(): void }

/**
 * Each distinct SQL text is prepared once and its statement reused (Kysely prepares per query; preparation was
 * the top cost of the hot path). The connection is one and synchronous, so a statement is never used twice at once.
 */
function preparedOnce(db: SqliteDatabase): SqliteDatabase {
  const statements = new Map<string, unknown>();
  return {
    prepare(sql: string) {
      let st = statements.get(sql);
      if (st === undefined) {
        if (statements.size >= 1000) statements.clear(); // texts with many `in (?, ?, …)` lengths must not grow it forever
        st = db.prepare(sql);
        statements.set(sql, st);
      }
      return st;
    },
    close: () => db.close(),
  };
}
