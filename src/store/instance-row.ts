import { existsSync, rmSync } from 'node:fs';
import { BEAT_MS, type Holder, holderOf, lapsed, StoreClaimedError } from './instance-holder.js';

/**
 * The claim inside the SQLite store itself: one row of `gateway_instance`, written at start-up and renewed every beat.
 * The files beside the store are found by its names; a hard link in another folder, with another temporary folder, named
 * neither (attack pass 16's re-check, M: a second gateway served the same file beside the first, each with a WAL of its
 * own). Whatever its name, a store holds its own row. Each name of a file has a WAL of its own, so the row is written
 * through to the file itself (a checkpoint) at each beat: a start by another name reads it there.
 *
 * Its own connection (libsql is synchronous): a beat never waits for a lock (the store's transactions hold it across
 * awaits on this same event loop) — a busy beat is tried again shortly, until the next.
 */
const TABLE = 'gateway_instance';
const RETRY_MS = 200;

interface Connection {
  exec(sql: string): void;
  prepare(sql: string): { get(...a: unknown[]): unknown; run(...a: unknown[]): { changes: number } };
  close(): void;
}

export interface RowClaim {
  /** Gives the row back; true when the store holds nothing but it (no migration ran: a start that failed early). */
  release(): boolean;
}

/** Where the refusal says the claim is. */
export const rowName = (store: string) => `the ${TABLE} row inside ${store}`;

/** Takes the store's row for `mine`, or throws `StoreClaimedError` naming its holder; `store` is the name the store opens. */
export async function claimRow(store: string, mine: Holder, now: () => number): Promise<RowClaim> {
  const Libsql = (await import('libsql')).default;
  // the WAL and index files a refused start made beside its own name (nobody else opens that name's)
  const made = ['-wal', '-shm'].map((s) => `${store}${s}`).filter((p) => !existsSync(p));
  const db = new Libsql(store) as unknown as Connection;
  let held = false;
  try {
    db.exec('PRAGMA busy_timeout = 5000');
    db.exec(
      `create table if not exists ${TABLE} (id integer primary key check (id = 1), host text not null, pid integer not null, ` +
        'token text not null, since integer not null, renewed integer not null)',
    );
    db.exec('begin immediate');
    try {
      const row = db.prepare(`select host, pid, token, since, renewed from ${TABLE} where id = 1`).get() as
        | (Holder & { renewed: number })
        | undefined;
      if (row && !lapsed(holderOf(row), row.renewed, now())) throw new StoreClaimedError(store, holderOf(row), rowName(store));
      db.prepare(`insert into ${TABLE} (id, host, pid, token, since, renewed) values (1, ?, ?, ?, ?, ?) on conflict (id) do update set ` +
        'host = excluded.host, pid = excluded.pid, token = excluded.token, since = excluded.since, renewed = excluded.renewed')
        .run(mine.host, mine.pid, mine.token, mine.since, now());
      db.exec('commit');
    } catch (e) {
      db.exec('rollback');
      throw e;
    }
    db.exec('PRAGMA wal_checkpoint(PASSIVE)');
    db.exec('PRAGMA busy_timeout = 0');
    held = true;
  } finally {
    if (!held) {
      db.close();
      for (const p of made) rmSync(p, { force: true });
    }
  }
  let retry: NodeJS.Timeout | undefined;
  // (by exec, never a prepared statement: one that fails busy is left unfinished, and keeps this connection's next writes
  // in a transaction that never commits — the store's own writes then wait on it)
  const token = `'${mine.token.replaceAll("'", "''")}'`;
  const renew = () => {
    retry = undefined;
    try {
      db.exec(`update ${TABLE} set renewed = ${Math.trunc(now())} where id = 1 and token = ${token}; PRAGMA wal_checkpoint(PASSIVE)`);
    } catch {
      retry = setTimeout(renew, RETRY_MS).unref(); // the store's write lock held: shortly again
    }
  };
  const beat = setInterval(() => {
    if (!retry) renew();
  }, BEAT_MS).unref();
  return {
    release() {
      clearInterval(beat);
      if (retry) clearTimeout(retry);
      let only = false;
      try {
        db.exec(`delete from ${TABLE} where token = ${token}`);
        const others = db.prepare(`select count(*) as n from sqlite_master where type = 'table' and name <> '${TABLE}'`).get() as { n: number };
        only = others.n === 0;
      } catch {
        // busy or gone: the row lapses with this process
      }
      try {
        // the WAL written through and emptied: a stopped gateway leaves the store whole in its file (attack pass 17, L2:
        // a 4 MB WAL was left beside it — another name of the file would read an older store)
        db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
      } catch {
        // a reader holds it: its last connection checkpoints
      }
      db.close();
      return only;
    },
  };
}
