import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
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
 * browser is refused; errors keep the Directus envelope.
 */
export async function registerCors(app: FastifyInstance, c: Config): Promise<void> {
  if (!c.CORS_ENABLED) return;
  await app.register(cors, {
    origin: corsOrigin(c.CORS_ORIGIN),
    methods: list(c.CORS_METHODS),
    allowedHeaders: list(c.CORS_ALLOWED_HEADERS),
    exposedHeaders: list(c.CORS_EXPOSED_HEADERS),
    credentials: c.CORS_CREDENTIALS,
    maxAge: c.CORS_MAX_AGE,
    strictPreflight: false,
  });
}
