import { hostname } from 'node:os';

/**
 * Who holds an SQLite store (`instance-claim.ts`): a host, a process and a token, since a moment. A claim — a file beside
 * the store, one in the temporary folder, a row inside the store — is renewed every `BEAT_MS` and lapses when its process
 * is gone from this host, or when it has not been renewed for `STALE_MS` (another host, a frozen process).
 */
export const BEAT_MS = 10_000;
export const STALE_MS = 30_000;

export interface Holder { readonly host: string; readonly pid: number; readonly token: string; readonly since: number }

/** Tokens this process holds (two gateways built in one process are refused like two processes). */
export const heldHere = new Set<string>();

export class StoreClaimedError extends Error {
  constructor(
    readonly path: string,
    readonly holder: Holder | undefined,
    readonly claim: string,
    lapse = `it lapses ${STALE_MS / 1000} s after its last beat`,
  ) {
    const who = holder ? `process ${holder.pid} on ${holder.host}, since ${new Date(holder.since).toISOString()}` : 'another process';
    super(
      `DATABASE_URL: the SQLite store ${path} is already served by another gateway (${who}). One gateway serves an SQLite ` +
        'file; several instances need PostgreSQL (DATABASE_URL=postgres://…, docs/configuration.md). The command line ' +
        `may run beside it. A stopped gateway's claim (${claim}): ${lapse}.`,
    );
    this.name = 'StoreClaimedError';
  }
}

/** The fields of a holder, or undefined when a value is not one (unreadable, half-written). */
export function holderOf(v: unknown): Holder | undefined {
  const h = (v ?? {}) as Partial<Holder>;
  if (typeof h.host === 'string' && typeof h.pid === 'number' && typeof h.token === 'string' && typeof h.since === 'number') {
    return { host: h.host, pid: h.pid, token: h.token, since: h.since };
  }
  return undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by someone else
  }
}

/** Whether a claim last renewed at `renewed` (epoch ms) by `holder` may be taken over at `now`. */
export function lapsed(holder: Holder | undefined, renewed: number, now: number): boolean {
  if (now - renewed > STALE_MS) return true;
  if (!holder || holder.host !== hostname()) return false;
  if (heldHere.has(holder.token)) return false;
  // this process's own pid on a claim it does not hold: an earlier life of a restarted container (pid 1 again)
  return holder.pid === process.pid || !alive(holder.pid);
}
