import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import type { Config } from '../config/schema.js';
import { errors } from '../errors/catalog.js';
import { parseCookies, serializeCookie } from './request-token.js';
import type { Clock } from '../lib/clock.js';
import type { SessionStore } from '../store/sessions.js';
import type { UserStore } from '../store/users.js';
import type { JwtService } from './jwt.js';
import type { LoginLimiter } from './login-limiter.js';
import { boundedEmail, boundedPassword } from './credential-bounds.js';
import { decoyHash, verifyPassword } from './passwords.js';
import { clearedSessionCookie, sessionCookie, sessionCookieOf, sessionRefreshToken, type AuthMode } from './session-mode.js';

const LoginBody = z.object(
  {
    email: boundedEmail(),
    password: boundedPassword(),
    mode: z.enum(['json', 'cookie', 'session'], { error: '"mode" must be one of [json, cookie, session]' }).optional(),
    otp: z.string().optional(),
  },
  { error: 'Invalid payload.' },
);

const TokenBody = z.object({ refresh_token: z.string().optional(), mode: z.enum(['json', 'cookie', 'session']).optional() }).loose();

/** Why a login (or refresh) was refused, for the log; the answer is INVALID_CREDENTIALS whatever it is. */
type RefusalReason = 'unknown_email' | 'no_password' | 'wrong_password' | 'no_v1_key' | 'suspended' | 'user_removed';
const REFUSED: Record<RefusalReason, string> = {
  unknown_email: 'no user has this email',
  no_password: 'the user has no password (it was imported or added without one)',
  wrong_password: 'wrong password',
  no_v1_key: 'the user has no v1 key (imported without one): bind one with `legacy-gateway users rebind EMAIL|ID --key-stdin`',
  suspended: 'the user is suspended (`legacy-gateway users activate EMAIL|ID`)',
  user_removed: 'the user was removed',
};

function payload(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw errors.invalidPayload('Invalid payload.');
  return body as Record<string, unknown>;
}

/** What an auth call answers: the JSON body (none: 204) and the cookies to set. */
export interface AuthAnswer { readonly body?: unknown; readonly cookies: readonly string[] }

/** What the auth service uses, given by the composition root. */
export interface AuthDeps {
  readonly config: Pick<Config, 'LOGIN_STALL_MS' | 'REFRESH_COOKIE_SECURE' | 'REFRESH_TOKEN_COOKIE_SAME_SITE' | 'REFRESH_TOKEN_COOKIE_DOMAIN'
    | 'REFRESH_COOKIE_NAME' | 'REFRESH_TOKEN_TTL' | 'SESSION_COOKIE_TTL'> & Parameters<typeof sessionCookie>[0];
  readonly clock: Clock;
  readonly users: Pick<UserStore, 'byEmail' | 'byId'>;
  readonly sessions: Pick<SessionStore, 'create' | 'rotate' | 'logout'>;
  readonly jwt: JwtService;
  readonly limiter: Pick<LoginLimiter, 'attempt' | 'succeed'>;
}

/**
 * Directus's login, refresh and logout, with its shapes, codes and timing: every login outcome and every refresh failure
 * takes at least LOGIN_STALL_MS; the client hears INVALID_CREDENTIALS whatever the reason, the operator reads the reason
 * in the log (never the password or key). Modes json, cookie (refresh token in a cookie) and session (Directus 10.10:
 * the access token, carrying its session, only in the `directus_session_token` cookie).
 */
export class AuthService {
  constructor(private readonly deps: AuthDeps) {}

  private get cookieOptions() {
    const c = this.deps.config;
    return { secure: c.REFRESH_COOKIE_SECURE, sameSite: c.REFRESH_TOKEN_COOKIE_SAME_SITE, domain: c.REFRESH_TOKEN_COOKIE_DOMAIN };
  }

  async login(body: unknown, ip: string, log: FastifyBaseLogger): Promise<AuthAnswer> {
    const started = performance.now();
    try {
      const parsed = LoginBody.safeParse(payload(body));
      if (!parsed.success) throw errors.invalidPayload(parsed.error.issues[0]?.message ?? 'Invalid payload.');
      const { email, password, mode } = parsed.data;
      const account = email.trim().toLowerCase();
      // counted before the password is checked: parallel attempts cannot outrun the limit
      const wait = await this.deps.limiter.attempt(account, ip);
      if (wait > 0) throw errors.requestsExceeded(wait, this.deps.clock.now());
      const user = await this.deps.users.byEmail(email);
      const ok = await verifyPassword(user?.passwordHash ?? (await decoyHash()), password);
      if (!user || !ok || user.status !== 'active') {
        const reason: RefusalReason = !user ? 'unknown_email' : !user.passwordHash ? 'no_password' : !ok ? 'wrong_password'
          : user.status === 'unbound' ? 'no_v1_key' : 'suspended';
        log[reason === 'no_v1_key' ? 'warn' : 'info']({ reason, ...(user ? { user: user.id } : {}) }, `login refused: ${REFUSED[reason]}`);
        throw errors.invalidCredentials();
      }
      await this.deps.limiter.succeed(account, ip);
      const { refreshToken } = await this.deps.sessions.create(user.id);
      return await this.issue(user.id, user.role, refreshToken, mode ?? 'json');
    } finally {
      await this.stall(started);
    }
  }

  async refresh(body: unknown, cookieHeader: string | undefined, log: FastifyBaseLogger): Promise<AuthAnswer> {
    const started = performance.now();
    const parsed = TokenBody.safeParse(payload(body));
    const fromBody = parsed.success ? parsed.data.refresh_token : undefined;
    const mode = (parsed.success ? parsed.data.mode : undefined) ?? (fromBody ? 'json' : 'cookie');
    let token: string | undefined;
    try {
      token = await this.tokenFor(mode, fromBody, cookieHeader);
    } catch (e) {
      await this.stall(started); // a session cookie that does not verify is a refresh failure too
      throw e;
    }
    if (!token) throw errors.invalidPayload('"refresh_token" is required in either the JSON payload or Cookie');
    // session mode (Directus 10.10): a token refreshed within SESSION_REFRESH_GRACE_PERIOD may be refreshed again (a
    // browser's concurrent refreshes); json and cookie modes: a rotated token is dead at once
    const result = await this.deps.sessions.rotate(token, { grace: mode === 'session' });
    if (!result.ok) {
      if (result.reason === 'reused') log.warn({ reason: 'refresh_token_reuse' }, 'a rotated refresh token was presented again; its session is revoked');
      await this.stall(started);
      throw errors.invalidCredentials();
    }
    const user = await this.deps.users.byId(result.userId);
    if (!user || user.status !== 'active') {
      const reason: RefusalReason = !user ? 'user_removed' : user.status === 'unbound' ? 'no_v1_key' : 'suspended';
      log[reason === 'no_v1_key' ? 'warn' : 'info']({ reason, user: result.userId }, `refresh refused: ${REFUSED[reason]}`);
      await this.stall(started);
      throw errors.invalidCredentials();
    }
    return this.issue(user.id, user.role, result.refreshToken, mode);
  }

  async logout(body: unknown, cookieHeader: string | undefined): Promise<AuthAnswer> {
    const c = this.deps.config;
    const parsed = TokenBody.safeParse(payload(body));
    const fromBody = parsed.success ? parsed.data.refresh_token : undefined;
    const token = await this.tokenFor((parsed.success ? parsed.data.mode : undefined) ?? 'cookie', fromBody, cookieHeader);
    if (!token) throw errors.invalidPayload('"refresh_token" is required in either the JSON payload or Cookie');
    await this.deps.sessions.logout(token);
    const cleared = [serializeCookie(c.REFRESH_COOKIE_NAME, '', { ...this.cookieOptions, maxAgeMs: 0 })];
    if (sessionCookieOf(c, cookieHeader)) cleared.push(clearedSessionCookie(c));
    return { cookies: cleared };
  }

  /**
   * The refresh token of a refresh or logout: in session mode the `session` claim of the session cookie (Directus 10.10);
   * otherwise the body's, else the refresh cookie's.
   */
  private async tokenFor(mode: AuthMode, fromBody: string | undefined, cookie: string | undefined): Promise<string | undefined> {
    const c = this.deps.config;
    return mode === 'session' ? sessionRefreshToken(c, this.deps.jwt, cookie) : fromBody ?? parseCookies(cookie)[c.REFRESH_COOKIE_NAME];
  }

  private async stall(started: number): Promise<void> {
    const left = this.deps.config.LOGIN_STALL_MS - (performance.now() - started);
    if (left > 0) await new Promise((r) => setTimeout(r, left));
  }

  private async issue(userId: string, role: string, refreshToken: string, mode: AuthMode): Promise<AuthAnswer> {
    const { config, jwt, clock } = this.deps;
    if (mode === 'session') {
      // Directus 10.10: the token (carrying its session) only in the cookie; the answer says how long it lives
      const session = { refreshToken, ttlMs: config.SESSION_COOKIE_TTL };
      const token = await jwt.sign({ id: userId, role, app_access: true, admin_access: false }, clock.now(), session);
      return { body: { data: { expires: config.SESSION_COOKIE_TTL } }, cookies: [sessionCookie(config, token, clock.now())] };
    }
    const access_token = await jwt.sign({ id: userId, role, app_access: true, admin_access: false });
    if (mode === 'cookie') {
      const cookie = serializeCookie(config.REFRESH_COOKIE_NAME, refreshToken, { ...this.cookieOptions, maxAgeMs: config.REFRESH_TOKEN_TTL, now: clock.now() });
      return { body: { data: { access_token, expires: jwt.ttlMs } }, cookies: [cookie] };
    }
    return { body: { data: { access_token, expires: jwt.ttlMs, refresh_token: refreshToken } }, cookies: [] };
  }
}
