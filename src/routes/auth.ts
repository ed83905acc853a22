import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { decoyHash, verifyPassword } from '../auth/passwords.js';
import { errors } from '../errors/catalog.js';
import { parseCookies, serializeCookie } from '../http/request-token.js';
import type { Deps } from '../deps.js';
import { proxied } from '../config/route-modes.js';
import { clearedSessionCookie, sessionCookie, sessionCookieOf, sessionRefreshToken, type AuthMode } from '../auth/session-mode.js';

const LoginBody = z.object(
  {
    email: z.string({ error: '"email" is required' }).pipe(z.email({ error: '"email" must be a valid email' })),
    password: z.string({ error: '"password" is required' }).min(1, { error: '"password" is required' }),
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

/** POST /auth/login, /auth/refresh, /auth/logout with Directus's shapes, codes and timing. */
export function registerAuthRoutes(app: FastifyInstance, deps: Deps): void {
  if (proxied(deps.config, '/auth')) return;
  const { config, users, sessions, jwt, limiter } = deps;
  const cookieOptions = {
    secure: config.REFRESH_COOKIE_SECURE,
    sameSite: config.REFRESH_TOKEN_COOKIE_SAME_SITE,
    domain: config.REFRESH_TOKEN_COOKIE_DOMAIN,
  };

  /**
   * The refresh token of a refresh or logout: in session mode the `session` claim of the session cookie (Directus 10.10);
   * otherwise the body's, else the refresh cookie's.
   */
  const tokenFor = async (mode: AuthMode, fromBody: string | undefined, cookie: string | undefined): Promise<string | undefined> =>
    mode === 'session' ? sessionRefreshToken(config, jwt, cookie) : fromBody ?? parseCookies(cookie)[config.REFRESH_COOKIE_NAME];

  /** Every login outcome, and every refresh failure, takes at least LOGIN_STALL_MS. */
  const stall = async (started: number) => {
    const left = config.LOGIN_STALL_MS - (performance.now() - started);
    if (left > 0) await new Promise((r) => setTimeout(r, left));
  };

  const issue = async (reply: FastifyReply, userId: string, role: string, refreshToken: string, mode: AuthMode) => {
    if (mode === 'session') {
      // Directus 10.10: the token (carrying its session) only in the cookie; the answer says how long it lives
      const session = { refreshToken, ttlMs: config.SESSION_COOKIE_TTL };
      const token = await jwt.sign({ id: userId, role, app_access: true, admin_access: false }, deps.clock.now(), session);
      void reply.header('set-cookie', sessionCookie(config, token, deps.clock.now()));
      return { data: { expires: config.SESSION_COOKIE_TTL } };
    }
    const access_token = await jwt.sign({ id: userId, role, app_access: true, admin_access: false });
    if (mode === 'cookie') {
      void reply.header(
        'set-cookie',
        serializeCookie(config.REFRESH_COOKIE_NAME, refreshToken, { ...cookieOptions, maxAgeMs: config.REFRESH_TOKEN_TTL, now: deps.clock.now() }),
      );
      return { data: { access_token, expires: jwt.ttlMs } };
    }
    return { data: { access_token, expires: jwt.ttlMs, refresh_token: refreshToken } };
  };

  app.post('/auth/login', { config: { access: 'public' } }, async (request, reply) => {
    const started = performance.now();
    try {
      const parsed = LoginBody.safeParse(payload(request.body));
      if (!parsed.success) throw errors.invalidPayload(parsed.error.issues[0]?.message ?? 'Invalid payload.');
      const { email, password, mode } = parsed.data;
      const account = email.trim().toLowerCase();
      // counted before the password is checked: parallel attempts cannot outrun the limit
      const wait = await limiter.attempt(account, request.ip);
      if (wait > 0) throw errors.requestsExceeded(wait, deps.clock.now());
      const user = await users.byEmail(email);
      const ok = await verifyPassword(user?.passwordHash ?? (await decoyHash()), password);
      if (!user || !ok || user.status !== 'active') {
        // the client hears INVALID_CREDENTIALS whatever the reason; the operator reads it here (never the password or key)
        const reason: RefusalReason = !user ? 'unknown_email' : !user.passwordHash ? 'no_password' : !ok ? 'wrong_password'
          : user.status === 'unbound' ? 'no_v1_key' : 'suspended';
        request.log[reason === 'no_v1_key' ? 'warn' : 'info']({ reason, ...(user ? { user: user.id } : {}) }, `login refused: ${REFUSED[reason]}`);
        throw errors.invalidCredentials();
      }
      await limiter.succeed(account, request.ip);
      const { refreshToken } = await sessions.create(user.id);
      return await issue(reply, user.id, user.role, refreshToken, mode ?? 'json');
    } finally {
      await stall(started);
    }
  });

  app.post('/auth/refresh', { config: { access: 'public' } }, async (request, reply) => {
    const started = performance.now();
    const body = TokenBody.safeParse(payload(request.body));
    const fromBody = body.success ? body.data.refresh_token : undefined;
    const mode = (body.success ? body.data.mode : undefined) ?? (fromBody ? 'json' : 'cookie');
    let token: string | undefined;
    try {
      token = await tokenFor(mode, fromBody, request.headers.cookie);
    } catch (e) {
      await stall(started); // a session cookie that does not verify is a refresh failure too
      throw e;
    }
    if (!token) throw errors.invalidPayload('"refresh_token" is required in either the JSON payload or Cookie');
    const result = await sessions.rotate(token);
    if (!result.ok) {
      if (result.reason === 'reused')
        request.log.warn({ reason: 'refresh_token_reuse' }, 'a rotated refresh token was presented again; its session is revoked');
      await stall(started);
      throw errors.invalidCredentials();
    }
    const user = await users.byId(result.userId);
    if (!user || user.status !== 'active') {
      const reason: RefusalReason = !user ? 'user_removed' : user.status === 'unbound' ? 'no_v1_key' : 'suspended';
      request.log[reason === 'no_v1_key' ? 'warn' : 'info']({ reason, user: result.userId }, `refresh refused: ${REFUSED[reason]}`);
      await stall(started);
      throw errors.invalidCredentials();
    }
    return issue(reply, user.id, user.role, result.refreshToken, mode);
  });

  app.post('/auth/logout', { config: { access: 'public' } }, async (request, reply) => {
    const body = TokenBody.safeParse(payload(request.body));
    const fromBody = body.success ? body.data.refresh_token : undefined;
    const token = await tokenFor((body.success ? body.data.mode : undefined) ?? 'cookie', fromBody, request.headers.cookie);
    if (!token) throw errors.invalidPayload('"refresh_token" is required in either the JSON payload or Cookie');
    await sessions.logout(token);
    const cleared = [serializeCookie(config.REFRESH_COOKIE_NAME, '', { ...cookieOptions, maxAgeMs: 0 })];
    if (sessionCookieOf(config, request.headers.cookie)) cleared.push(clearedSessionCookie(config));
    void reply.header('set-cookie', cleared);
    return reply.status(204).send();
  });
}
