/**
 * Directus 10.10's session mode (`mode: "session"` on login, refresh and logout): the access token is set in an httpOnly
 * cookie (`directus_session_token`, SESSION_COOKIE_* variables) instead of the answer; it carries its session's refresh
 * token in a `session` claim and lives SESSION_COOKIE_TTL (the answer's `expires`). A refresh or logout in session mode
 * reads that claim from the cookie, the token verified first (an expired one is 401 TOKEN_EXPIRED, as Directus). Reads
 * accept the cookie as the last of the carriers, after `Authorization` and `?access_token=` (`requestToken`).
 */
import type { Config } from '../config/schema.js';
import { parseCookies, serializeCookie } from './request-token.js';
import type { JwtService } from './jwt.js';

export type AuthMode = 'json' | 'cookie' | 'session';

type SessionConfig = Pick<
  Config,
  'SESSION_COOKIE_NAME' | 'SESSION_COOKIE_TTL' | 'SESSION_COOKIE_SECURE' | 'SESSION_COOKIE_SAME_SITE' | 'SESSION_COOKIE_DOMAIN'
>;

const options = (c: SessionConfig, maxAgeMs: number, now?: number) => ({
  maxAgeMs,
  secure: c.SESSION_COOKIE_SECURE,
  sameSite: c.SESSION_COOKIE_SAME_SITE,
  domain: c.SESSION_COOKIE_DOMAIN,
  ...(now !== undefined ? { now } : {}),
});

/** The Set-Cookie of a session token: httpOnly, Path=/, Max-Age SESSION_COOKIE_TTL, SameSite/Secure/Domain as configured. */
export function sessionCookie(c: SessionConfig, token: string, now: number): string {
  return serializeCookie(c.SESSION_COOKIE_NAME, token, options(c, c.SESSION_COOKIE_TTL, now));
}

/** The Set-Cookie that removes the session cookie (logout). */
export function clearedSessionCookie(c: SessionConfig): string {
  return serializeCookie(c.SESSION_COOKIE_NAME, '', options(c, 0));
}

/** The session cookie of a request, if it has one. */
export function sessionCookieOf(c: Pick<Config, 'SESSION_COOKIE_NAME'>, cookieHeader: string | undefined): string | undefined {
  const v = parseCookies(cookieHeader)[c.SESSION_COOKIE_NAME];
  return v ? v : undefined;
}

/** The refresh token of a session-mode refresh or logout: the `session` claim of the request's (verified) session cookie. */
export async function sessionRefreshToken(
  c: Pick<Config, 'SESSION_COOKIE_NAME'>, jwt: JwtService, cookieHeader: string | undefined,
): Promise<string | undefined> {
  const token = sessionCookieOf(c, cookieHeader);
  if (!token || !jwt.claimsOurIssuer(token)) return undefined;
  return jwt.sessionClaim(token);
}
