import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, rmSync, statSync, utimesSync, writeSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { BEAT_MS, type Holder, heldHere, holderOf, lapsed, StoreClaimedError } from './instance-holder.js';
import { refuseIfOpenElsewhere } from './instance-lock.js';
import { claimRow, type RowClaim } from './instance-row.js';

/**
 * One gateway serves an SQLite store at a time. SQLite's driver answers on the event loop: a second gateway on the same
 * file waits for the first's write lock there (up to `busy_timeout`, 5 s) and reads the first's commits back at each of
 * its own — attack pass 15's re-check measured other users' reads stalled 10–21 s while one instance wrote 40 000 renders.
 * Several instances need PostgreSQL (docs/configuration.md); the command line (`node dist/src/cli/main.js`) is not a
 * gateway and opens the store beside one.
 *
 * The claim is a file beside the store's real path (`<store>.instance`, a symlink followed) and one named by the file's
 * device and inode in the host's temporary folder (and in /tmp, whatever TMPDIR says) (a hard link, another name of the same file: attack pass 16, M — a
 * second gateway started through a symlink or a hard link served beside the first, the hard link with a WAL of its own):
 * each made exclusively, naming the host, the process and a token; the holder touches them every `BEAT_MS`. A claim is
 * stale (taken over) when its process is gone from this host, or when it has not been touched for `STALE_MS` (another
 * host, a frozen process). A hard link in another folder with another temporary folder names neither file: SQLite's own
 * lock on the file (`instance-lock.ts`: any connection open to it, by any name) refuses it; the row inside the store
 * (`instance-row.ts`) refuses it where such locks are not shared (a network file system without them). A store file
 * that does not exist yet is created empty first (SQLite takes an empty file as a new database), and removed again at
 * release if no migration ran in it (a start that failed leaves nothing behind).
 */
export { BEAT_MS, STALE_MS, StoreClaimedError } from './instance-holder.js';

export interface StoreClaim { release(): void }

/** The temporary folder every process of a host shares, whatever its TMPDIR. */
const SHARED_TMP = '/tmp';

const claimPath = (store: string) => `${store}.instance`;

function readHolder(path: string): Holder | undefined {
  try {
    return holderOf(JSON.parse(readFileSync(path, 'utf8')));
  } catch {
    return undefined; // unreadable or half-written: judged by its age alone
  }
}

function stale(path: string, holder: Holder | undefined, now: number): boolean {
  try {
    return lapsed(holder, statSync(path).mtimeMs, now);
  } catch {
    return true; // gone meanwhile
  }
}

function tryCreate(path: string, holder: Holder): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    writeSync(fd, JSON.stringify(holder));
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Takes the claim file at `path` for `mine`, or throws naming its holder. */
function take(store: string, path: string, mine: Holder, now: () => number): void {
  if (tryCreate(path, mine)) return;
  const holder = readHolder(path);
  if (!stale(path, holder, now())) throw new StoreClaimedError(store, holder, path);
  // moved aside atomically: of two starts that both judged it stale, one renames it and the other's create decides
  const aside = `${path}.stale-${mine.token}`;
  try {
    renameSync(path, aside);
    rmSync(aside, { force: true });
  } catch {
    // the other start moved it first
  }
  if (!tryCreate(path, mine)) throw new StoreClaimedError(store, readHolder(path), path);
}

/**
 * Claims the SQLite file `store` for this gateway, or throws `StoreClaimedError` naming the holder: the files first (by
 * the real path, by the inode), then the row inside the store (`instance-row.ts`, whatever the name and temporary folder).
 * The claim is kept fresh until `release()` (at shutdown); a process that dies leaves a claim the next start takes over.
 */
export async function claimSqliteStore(store: string, now: () => number = Date.now): Promise<StoreClaim> {
  mkdirSync(dirname(store), { recursive: true });
  const created = !existsSync(store);
  if (created) closeSync(openSync(store, 'a'));
  const real = realpathSync(store);
  const { dev, ino } = statSync(real);
  // by the inode in the temporary folder, and in /tmp whatever TMPDIR says: two starts through two hard links, each with
  // a TMPDIR of its own, at the same moment, both took the row inside the store (attack pass 17, F5: read from the file
  // before either had written it through); an exclusive file in one folder they share decides
  const byInode = `legacy-gateway-sqlite-${dev}-${ino}.instance`;
  const paths = [...new Set([claimPath(real), join(tmpdir(), byInode), ...(existsSync(SHARED_TMP) ? [join(SHARED_TMP, byInode)] : [])])];
  const mine: Holder = { host: hostname(), pid: process.pid, token: randomBytes(12).toString('hex'), since: now() };
  const taken: string[] = [];
  let row: RowClaim | undefined;
  const give = (held: boolean) => {
    const bare = row?.release() ?? false;
    row = undefined;
    for (const p of taken) if (readHolder(p)?.token === mine.token) rmSync(p, { force: true });
    taken.length = 0;
    // the store this start made, when it held the claim and no migration ran in it (a start refused leaves the file to
    // its holder: two starts may both have made it, the winner about to open it)
    if (!held || !created) return;
    try {
      if (bare || statSync(real).size === 0) for (const p of [real, `${real}-wal`, `${real}-shm`]) rmSync(p, { force: true });
    } catch {
      // gone already
    }
  };
  try {
    for (const p of paths) {
      take(store, p, mine, now);
      taken.push(p);
    }
    await refuseIfOpenElsewhere(store);
    row = await claimRow(store, mine, now);
  } catch (e) {
    give(false);
    throw e;
  }
  heldHere.add(mine.token);
  const beat = setInterval(() => {
    const t = new Date(now());
    for (const p of paths) {
      try {
        utimesSync(p, t, t);
      } catch {
        // removed by hand: the next start may claim it; this one keeps serving
      }
    }
  }, BEAT_MS).unref();
  return {
    release() {
      clearInterval(beat);
      if (!heldHere.delete(mine.token)) return;
      taken.push(...paths);
      give(true);
    },
  };
}
