/**
 * When a signed v1 URL stops working. The v1 document does not state the lifetime: it is read from the URL itself
 * (an `expires`/`Expires` query parameter in epoch seconds, or `X-Amz-Date` + `X-Amz-Expires`), else assumed to be
 * `fallbackTtlMs` from when the gateway saw it. Pure.
 */
export function urlExpiry(url: string, seenAt: number, fallbackTtlMs: number): number {
  const q = url.indexOf('?');
  if (q >= 0) {
    const params = new URLSearchParams(url.slice(q + 1));
    const expires = params.get('expires') ?? params.get('Expires');
    if (expires && /^\d{9,11}$/.test(expires)) return Number(expires) * 1000;
    const amzDate = params.get('X-Amz-Date');
    const amzExpires = params.get('X-Amz-Expires');
    const m = amzDate ? /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate) : null;
    if (m && amzExpires && /^\d+$/.test(amzExpires)) {
      return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])) + Number(amzExpires) * 1000;
    }
  }
  return seenAt + fallbackTtlMs;
}

/** The earliest expiry of a render's output URLs (Infinity when it has none). */
export function outputExpiry(output: Readonly<Record<string, string>> | undefined, seenAt: number, fallbackTtlMs: number): number {
  let min = Number.POSITIVE_INFINITY;
  for (const url of Object.values(output ?? {})) min = Math.min(min, urlExpiry(url, seenAt, fallbackTtlMs));
  return min;
}

/**
 * From when a URL seen at `seenAt` and expiring at `expiresAt` should not be handed out: the last fifth of its lifetime
 * (at least 5 s before the end), so a client that receives it still has time to use it. Infinity for no expiry.
 */
export function refreshAt(expiresAt: number, seenAt: number): number {
  if (!Number.isFinite(expiresAt)) return Number.POSITIVE_INFINITY;
  return expiresAt - Math.max(5_000, (expiresAt - seenAt) / 5);
}

/** True when a URL seen at `seenAt` and expiring at `expiresAt` should not be handed out at `now` (see `refreshAt`). */
export function nearExpiry(expiresAt: number, seenAt: number, now: number): boolean {
  return now >= refreshAt(expiresAt, seenAt);
}
