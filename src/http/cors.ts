import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';

/**
 * CORS_ORIGIN as Directus reads it: `true` (reflect the request's origin), `false`, one origin, or a comma list. Origins
 * are matched against the request's: only a listed origin is echoed back (a fixed header would name it to everyone).
 */
export function corsOrigin(value: string): boolean | string[] {
  const v = value.trim();
  if (v === 'true') return true;
  if (v === 'false' || v === '') return false;
  return v.split(',').map((s) => s.trim()).filter(Boolean);
}

const list = (v: string) => v.split(',').map((s) => s.trim()).filter(Boolean);

/**
 * Directus's CORS variables on @fastify/cors. A disallowed origin gets no Access-Control-Allow-Origin header — how a
 * browser is refused; errors keep the Directus envelope. `CORS_ORIGIN=true` with credentials is kept as Directus has it
 * (any origin reflected, `null` included) but warned about once, at start-up.
 */
export async function registerCors(app: FastifyInstance, c: Config, log: Pick<Logger, 'warn'>): Promise<void> {
  if (!c.CORS_ENABLED) return;
  const origin = corsOrigin(c.CORS_ORIGIN);
  if (origin === true && c.CORS_CREDENTIALS) {
    log.warn(
      { CORS_ORIGIN: c.CORS_ORIGIN, CORS_CREDENTIALS: c.CORS_CREDENTIALS, REFRESH_TOKEN_COOKIE_SAME_SITE: c.REFRESH_TOKEN_COOKIE_SAME_SITE },
      'CORS reflects every origin ("null" included) with credentials allowed: any page the refresh cookie is sent from (every site ' +
        "with SameSite=none) can read a cookie-mode refresh's new token; list the front-ends' origins in CORS_ORIGIN",
    );
  }
  await app.register(cors, {
    origin,
    methods: list(c.CORS_METHODS),
    allowedHeaders: list(c.CORS_ALLOWED_HEADERS),
    // and the deprecation headers (src/deprecate/): a browser client's code can read them too
    exposedHeaders: [...new Set([...list(c.CORS_EXPOSED_HEADERS), 'Deprecation', 'Sunset', 'Link'])],
    credentials: c.CORS_CREDENTIALS,
    maxAge: c.CORS_MAX_AGE,
    strictPreflight: false,
  });
}
