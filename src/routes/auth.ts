import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AuthAnswer } from '../auth/service.js';
import { proxied } from '../config/route-modes.js';
import type { Deps } from '../deps.js';

/** Sets the answer's cookies (one set-cookie header as Directus sends it: one value, or several). */
function send(reply: FastifyReply, a: AuthAnswer): FastifyReply | unknown {
  if (a.cookies.length > 0) void reply.header('set-cookie', a.cookies.length === 1 ? a.cookies[0] : [...a.cookies]);
  return a.body === undefined ? reply.status(204).send() : a.body;
}

/** POST /auth/login, /auth/refresh, /auth/logout (src/auth/service.ts: Directus's shapes, codes and timing). */
export function registerAuthRoutes(app: FastifyInstance, deps: Deps): void {
  if (proxied(deps.config, '/auth')) return;
  const { auth } = deps;
  app.post('/auth/login', { config: { access: 'public' } }, async (request, reply) => send(reply, await auth.login(request.body, request.ip, request.log)));
  app.post('/auth/refresh', { config: { access: 'public' } }, async (request, reply) =>
    send(reply, await auth.refresh(request.body, request.headers.cookie, request.log)));
  app.post('/auth/logout', { config: { access: 'public' } }, async (request, reply) => send(reply, await auth.logout(request.body, request.headers.cookie)));
}
