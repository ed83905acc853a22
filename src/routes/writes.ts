import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { proxied } from '../config/route-modes.js';
import { collectionFor, type Action } from '../write/permissions.js';
import { ItemWrites } from '../write/item-writes.js';

const COLLECTIONS: readonly { path: string; collection: string }[] = [
  { path: '/renders', collection: 'renders' },
  { path: '/projects', collection: 'projects' },
  { path: '/accounts', collection: 'accounts' },
  { path: '/templates', collection: 'templates' },
];
const ACTION: Readonly<Record<string, Action>> = { GET: 'read', POST: 'create', PATCH: 'update', DELETE: 'delete' };

/**
 * The legacy writes (src/write/item-writes.ts), as Directus answers them to the legacy role: POST /renders (one item or an
 * array), PATCH of one item or several, and 403 for what the role may not do (DELETE, creating other collections,
 * updating templates) and for unknown and system collections under /items.
 */
export function registerWriteRoutes(root: FastifyInstance, deps: Deps): void {
  void root.register(async (app) => writeRoutes(app, deps));
}

function writeRoutes(app: FastifyInstance, deps: Deps): void {
  // Directus reads an empty JSON body as none (the SDK's deleteItem sends the content type without a body)
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (text === '') done(null, undefined);
    else json(request, text, done);
  });
  const writes = new ItemWrites(deps);
  const refuse = async (request: FastifyRequest<{ Params: { collection?: string } }>) => {
    const name = request.params.collection ?? (request.routeOptions.url ?? '').replace(/^(\/items)?\/([^/]+).*$/, '$2');
    collectionFor(deps.mappings, name, ACTION[request.method] ?? 'read'); // throws 403 FORBIDDEN for every route registered here
    return {};
  };
  for (const { path, collection } of COLLECTIONS) {
    if (proxied(deps.config, path)) continue;
    for (const base of [path, `/items${path}`]) {
      if (collection === 'renders') app.post(base, (request, reply) => writes.post(request, reply));
      else app.post(base, refuse);
      if (collection === 'templates') {
        app.patch(base, refuse);
        app.patch(`${base}/:id`, refuse);
      } else {
        app.patch(base, (request, reply) => writes.patchMany(request, reply, collection));
        app.patch<{ Params: { id: string } }>(`${base}/:id`, (request, reply) => writes.patchOne(request, reply, collection, request.params.id));
      }
      app.delete(base, refuse);
      app.delete(`${base}/:id`, refuse);
    }
  }
  // the legacy document's singular path (a route prefix of its own for ROUTE_MODES)
  if (!proxied(deps.config, '/render')) {
    app.patch<{ Params: { id: string } }>('/render/:id', (request, reply) => writes.patchOne(request, reply, 'renders', request.params.id));
  }
  // any other collection under /items (unknown, or a system collection): 403 FORBIDDEN, as Directus answers it
  // (SEARCH only on the collection's route: Directus has none on an item's)
  app.route({ method: ['GET', 'POST', 'PATCH', 'DELETE', 'SEARCH'], url: '/items/:collection', handler: refuse });
  app.route({ method: ['GET', 'POST', 'PATCH', 'DELETE'], url: '/items/:collection/:id', handler: refuse });
}
