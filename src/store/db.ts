import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';
export interface Db { readonly kysely: Kysely<Database>; readonly dialect: Dialect; close(): Promise<void> }

/** One round trip to the store (health and readiness). */
export async function pingDb(db: Db): Promise<void> {
  await sql`select 1`.execute(db.kysely);
}

/**
 * Opens the store: PostgreSQL for a postgres:// URL, otherwise an SQLite file (libsql, prebuilt) at
 * the given path (`:memory:` for throwaway stores).
 */
export async function openDb(url: string, o: { sqliteSynchronous?: 'full' | 'normal' } = {}): Promise<Db> {
  if (/^postgres(ql)?:\/\//.test(url)) {
    const pg = (await import('pg')).default;
    pg.types.setTypeParser(20, (v: string) => Number(v)); // bigint → number (epoch ms fit safely)
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { kysely, dialect: 'postgres', close: () => kysely.destroy() };
  }
  const path = url.replace(/^sqlite:(\/\/)?/, '').replace(/^file:/, '');
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const Libsql = (await import('libsql')).default;
  const database = new Libsql(path);
  // (SQLite answers on the event loop: with `full`, every commit waits for the disk there — SQLITE_SYNCHRONOUS)
  const synchronous = o.sqliteSynchronous === 'normal' ? 'NORMAL' : 'FULL';
  database.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = ${synchronous}; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;`);
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
