import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { legacyOpenApi } from '../openapi/legacy.js';

/** The legacy surface's OpenAPI 3.1 document, at Directus's own route and at /openapi.json (generated once). */
export function registerSpecRoutes(app: FastifyInstance, deps: Deps): void {
  const doc = legacyOpenApi(deps.mappings);
  for (const url of ['/server/specs/oas', '/openapi.json']) app.get(url, { config: { access: 'public' } }, async () => doc);
}
