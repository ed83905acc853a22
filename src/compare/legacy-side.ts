import { request as undiciRequest } from 'undici';
import { randomToken } from '../store/crypto.js';
import { parseBody, type Answer } from './service.js';

/** Hop-by-hop headers (and ours) never forwarded to or from the legacy backend. */
export const HOP_HEADERS = new Set([
  'connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'host', 'content-length',
]);

const INTERNAL = 'x-gateway-compare-internal';
/** A per-process secret marks the gateway's own translated-side requests; clients cannot forge it. */
const INTERNAL_SECRET = randomToken(24);
export const isInternal = (headers: Record<string, unknown>): boolean => headers[INTERNAL] === INTERNAL_SECRET;
export const internalHeaders = (): Record<string, string> => ({ [INTERNAL]: INTERNAL_SECRET });

export type LegacyAnswer = Answer & { raw: Buffer; headers: Record<string, string | string[] | undefined> };

/** Sends a request to the legacy backend as it came (the legacy token goes as it is). */
export async function askLegacy(
  baseUrl: string, method: string, url: string, headers: Record<string, unknown>, body: Buffer | undefined, timeoutMs: number,
): Promise<LegacyAnswer> {
  const started = performance.now();
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (!HOP_HEADERS.has(k) && k !== INTERNAL && typeof v === 'string') h[k] = v;
  const res = await undiciRequest(new URL(url, baseUrl), { method: method as 'GET', headers: h, body, signal: AbortSignal.timeout(timeoutMs) });
  const raw = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, raw, body: parseBody(raw.toString('utf8')), ms: performance.now() - started, headers: res.headers };
}

/**
 * Work started after an answer is sent (never slows it down), at most `most` at once: past it, the work is skipped
 * (`run` says false) — shadow mode ran a translated side for each request its legacy side answered at once, a thousand
 * costly ones piled up in 30 s and held other users' reads 0.4 s (p50) to 11 s for a minute (attack pass 24, N3).
 * One caller (a credential, a user) holds at most `perCaller` of them: one user sending costly shadowed requests kept
 * every place busy, everyone else's comparisons skipped (attack pass 25, L1). `idle()` resolves once all of it has ended.
 */
export class BackgroundWork {
  private readonly running = new Set<Promise<void>>();
  /** Started and not ended (scheduled ones included). */
  private busy = 0;
  /** Places held per caller. */
  private readonly held = new Map<string, number>();
  /** Work skipped for want of room. */
  skipped = 0;

  constructor(
    private readonly onError: (e: unknown) => void, private readonly most = Number.POSITIVE_INFINITY, private readonly perCaller = most,
  ) {}

  /** Starts `fn` for `caller` when there is room (true), or skips it (false). */
  run(caller: string, fn: () => Promise<void>): boolean {
    const mine = this.held.get(caller) ?? 0;
    if (this.busy >= this.most || mine >= this.perCaller) {
      this.skipped++;
      return false;
    }
    this.busy++;
    this.held.set(caller, mine + 1);
    const done = () => {
      this.busy--;
      const left = (this.held.get(caller) ?? 1) - 1;
      if (left > 0) this.held.set(caller, left);
      else this.held.delete(caller);
    };
    setImmediate(() => {
      const p: Promise<void> = fn().catch(this.onError).finally(() => { this.running.delete(p); done(); });
      this.running.add(p);
    });
    return true;
  }

  async idle(): Promise<void> {
    await new Promise((r) => setImmediate(r));
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
