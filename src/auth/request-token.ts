import { safeEqual } from '../store/crypto.js';
import { percentDecoded } from '../lib/percent.js';

/**
 * The access token of a request: `Authorization: Bearer` wins over `?access_token=` (Directus v9); then, when a name is
 * given, the session cookie (Directus 10.10's session mode: the last carrier, used only when the request has no other).
 */
export function requestToken(
  headers: Record<string, string | string[] | undefined>, query: unknown, sessionCookieName?: string,
): string | undefined {
  const h = headers.authorization;
  const header = Array.isArray(h) ? h[0] : h;
  if (header) {
    const m = /^Bearer\s+(.+)$/i.exec(header.trim());
    if (m) return (m[1] as string).trim();
  }
  const q = query && typeof query === 'object' ? (query as Record<string, unknown>).access_token : undefined;
  if (typeof q === 'string' && q.length > 0) return q;
  if (sessionCookieName && typeof headers.cookie === 'string') return parseCookies(headers.cookie)[sessionCookieName] || undefined;
  return undefined;
}

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!header) return out;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    const k = part.slice(0, i).trim();
    if (!k) continue;
    const v = part.slice(i + 1).trim();
    out[k] = percentDecoded(v) ?? v; // (a malformed one as it is, told without an exception: attack pass 30, H-1)
  }
  return out;
}

export interface CookieOptions {
  readonly maxAgeMs: number;
  readonly secure: boolean;
  /** Directus's REFRESH_TOKEN_COOKIE_SAME_SITE (default lax). */
  readonly sameSite?: 'strict' | 'lax' | 'none';
  /** Directus's REFRESH_TOKEN_COOKIE_DOMAIN. */
  readonly domain?: string | undefined;
  readonly now?: number;
}

export function serializeCookie(name: string, value: string, opts: CookieOptions): string {
  const sameSite = opts.sameSite ?? 'lax';
  const parts = [
    `${name}=${encodeURIComponent(value)}`,
    'Path=/',
    'HttpOnly',
    `SameSite=${sameSite[0]!.toUpperCase()}${sameSite.slice(1)}`,
    `Max-Age=${Math.floor(opts.maxAgeMs / 1000)}`,
  ];
  if (opts.maxAgeMs > 0) parts.push(`Expires=${new Date((opts.now ?? Date.now()) + opts.maxAgeMs).toUTCString()}`);
  if (opts.domain) parts.push(`Domain=${opts.domain}`);
  if (opts.secure) parts.push('Secure');
  return parts.join('; ');
}

/** The header an operator token travels in beside a user's own `Authorization` (explain on a legacy read), or alone. */
export const OPERATOR_HEADER = 'x-gateway-operator-token';

/** True when `X-Gateway-Operator-Token` carries the operator token (compared in constant time). */
export function hasOperatorHeader(request: { headers: Record<string, string | string[] | undefined> }, adminToken: string | undefined): boolean {
  const t = request.headers[OPERATOR_HEADER];
  return !!adminToken && typeof t === 'string' && t.length > 0 && safeEqual(t, adminToken);
}
