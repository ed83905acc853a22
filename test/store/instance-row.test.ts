import { execFileSync } from 'node:child_process';
import { linkSync, mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openDb } from '../../src/store/db.js';
import { BEAT_MS, STALE_MS, type Holder } from '../../src/store/instance-holder.js';
import { claimRow } from '../../src/store/instance-row.js';

/**
 * The claim row inside an SQLite store, read through another name of the same file (a hard link in another folder: a WAL
 * and an index of its own). Each name sees only what reached the file itself, so the row and each renewal must be written
 * through to it while the store's own connection writes beside.
 */
let now = 1_800_000_000_000;
const ROW = resolve('dist/src/store/instance-row.js');

/**
 * Another process claims the row by the name `path` at `at` (SQLite shares one WAL index per file within a process,
 * whatever the name: only another process reads the file as a second gateway does).
 */
async function claimElsewhere(path: string, token: string, at: number): Promise<{ refused: Holder } | { taken: true; bare: boolean }> {
  const script = `
    const { claimRow } = await import(${JSON.stringify(pathToFileURL(ROW).href)});
    const h = { host: ${JSON.stringify(hostname())}, pid: ${process.ppid}, token: ${JSON.stringify(token)}, since: ${at} };
    try {
      const c = await claimRow(${JSON.stringify(path)}, h, () => ${at});
      console.log(JSON.stringify({ taken: true, bare: c.release() }));
    } catch (e) {
      if (e.name !== 'StoreClaimedError') throw e;
      console.log(JSON.stringify({ refused: e.holder }));
    }`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  return JSON.parse(out) as { refused: Holder } | { taken: true; bare: boolean };
}
const clock = () => now;
// a live process of this host that is not this one: its claim lapses by time alone
const holder = (token: string): Holder => ({ host: hostname(), pid: process.ppid, token, since: now });
afterEach(() => vi.useRealTimers());

describe('the claim row inside an SQLite store', () => {
  it('refuses another name of the file while renewed, through the store\'s own writes and a write lock held at a beat; lapses when not', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'setTimeout', 'clearInterval', 'clearTimeout'] });
    const dir = mkdtempSync(join(tmpdir(), 'gw-row-'));
    const store = join(dir, 'gateway.db');
    const db = await openDb(store); // the gateway's own connection, by the first name
    const mine = holder('first');
    const first = await claimRow(store, mine, clock);
    const other = join(mkdtempSync(join(tmpdir(), 'gw-row-other-')), 'hard.db');
    linkSync(store, other);
    const refused = () => claimElsewhere(other, 'second', now);
    expect(await refused()).toEqual({ refused: mine });

    // the store writes meanwhile (its WAL grows beside the row); a beat meets its write lock held, and is tried again
    await sql`create table scratch (x text)`.execute(db.kysely);
    for (let i = 0; i < 50; i++) await sql`insert into scratch (x) values (${'x'.repeat(4000)})`.execute(db.kysely);
    now += STALE_MS - 5_000;
    await db.kysely.transaction().execute(async (trx) => {
      await sql`update scratch set x = 'y'`.execute(trx);
      vi.advanceTimersByTime(BEAT_MS); // the beat: busy (the transaction holds the lock)
      vi.advanceTimersByTime(100);
    });
    vi.advanceTimersByTime(300); // tried again once the lock is free
    now += 20_000; // 45 s after the claim, 20 s after the renewal
    expect(await refused()).toEqual({ refused: mine });

    // not renewed for longer than STALE_MS: the other name takes it over
    now += STALE_MS + 1;
    expect(await refused()).toEqual({ taken: true, bare: false }); // (the store holds more than the row)
    first.release();
    await db.close();
  });

  it('a new store that no migration ran in holds only the row: its release says so', async () => {
    const store = join(mkdtempSync(join(tmpdir(), 'gw-row-new-')), 'gateway.db');
    const claim = await claimRow(store, holder('only'), clock);
    expect(claim.release()).toBe(true);
  });
});
