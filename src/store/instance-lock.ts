import { StoreClaimedError } from './instance-holder.js';

/**
 * The last guard of `instance-claim.ts`, the one no name, folder or clock can miss: SQLite's own lock on the file. Every
 * connection to a WAL store holds a shared lock on the file (by its inode, in any process of the host, in any container
 * sharing the volume) from its first read until it closes. A connection that asks for an exclusive lock before its first
 * read is refused while any other holds one. Asked at start-up, before this gateway opens the store: a gateway serving the
 * file by any name — a hard link in another folder, with a temporary folder of its own and a reader holding a read
 * transaction, so that its row's renewals never reach the file (attack pass 18, F5: both served) — or paused, refuses it.
 *
 * The command line holds the file while it runs: a start waits `WAIT_MS` for it, then is refused too.
 */
const WAIT_MS = 3_000;

interface Connection { exec(sql: string): void; close(): void }

/** Throws `StoreClaimedError` when another connection (another process) has the SQLite file `store` open. */
export async function refuseIfOpenElsewhere(store: string, waitMs = WAIT_MS): Promise<void> {
  const Libsql = (await import('libsql')).default;
  const db = new Libsql(store) as unknown as Connection;
  try {
    db.exec(`PRAGMA busy_timeout = ${Math.trunc(waitMs)}; PRAGMA locking_mode = EXCLUSIVE`);
    try {
      db.exec('BEGIN EXCLUSIVE; COMMIT');
    } catch (e) {
      if ((e as { code?: string }).code !== 'SQLITE_BUSY') throw e;
      throw new StoreClaimedError(store, undefined, `SQLite's lock on ${store}`, 'it is freed when the process holding the file open stops');
    }
  } finally {
    db.close(); // (the lock goes with the connection)
  }
}
