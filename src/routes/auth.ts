import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AuthAnswer } from '../auth/service.js';
import { proxied } from '../config/route-modes.js';
import type { Deps } from '../deps.js';

/** Sets the answer's cookies (one set-cookie header as Directus sends it: one value, or several). */
function send(reply: FastifyReply, a: AuthAnswer): FastifyReply | unknown {
  if (a.cookies.length > 0) void reply.header('set-cookie', a.cookies.length === 1 ? a.cookies[0] : [...a.cookies]);
  return a.body === undefined ? reply.status(204).send() : a.body;
}

/**
 * The most bytes an authentication body may have: an email (254), a password (1 024), a refresh token, a mode, an OTP —
 * a few hundred bytes; anyone may send them, without logging in. At the general MAX_PAYLOAD_BYTES (1 MB), 1 500 login
 * bodies of 880 KB held through the login stall ran an instance out of memory, and 60 000-key refresh bodies cost ~97 ms
 * each (attack pass 17, F7 and F6). Past it: 400 INVALID_PAYLOAD, before the body is read.
 */
export const AUTH_BODY_BYTES = 16 * 1024;

/** POST /auth/login, /auth/refresh, /auth/logout (src/auth/service.ts: Directus's shapes, codes and timing). */
export function registerAuthRoutes(app: FastifyInstance, deps: Deps): void {
  if (proxied(deps.config, '/auth')) return;
  const { auth } = deps;
  const PUBLIC = { config: { access: 'public' as const }, bodyLimit: AUTH_BODY_BYTES };
  app.post('/auth/login', PUBLIC, async (request, reply) => send(reply, await auth.login(request.body, request.ip, request.log)));
  app.post('/auth/refresh', PUBLIC, async (request, reply) => send(reply, await auth.refresh(request.body, request.headers.cookie, request.log)));
  app.post('/auth/logout', PUBLIC, async (request, reply) => send(reply, await auth.logout(request.body, request.headers.cookie)));
}
