import type { FastifyInstance, FastifyRequest } from 'fastify';
import { searchQuery } from '../query/search-body.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** A SEARCH's question as canonical text (set by `searchPreHandler`); null for every other request. */
    searchKey: string | null;
  }
}

/** Directus's SEARCH method (a read with the query in a JSON body): known to Fastify as a method with a body. */
export function enableSearch(app: FastifyInstance): void {
  app.addHttpMethod('SEARCH', { hasBody: true });
  app.decorateRequest('searchKey', null);
}

/**
 * The preHandler of a SEARCH route: the body's question becomes the request's query (what the route, its answer cache,
 * route modes and comparisons read), the same object a GET's query string gives; a bad body is Directus's 400.
 */
export async function searchPreHandler(request: FastifyRequest): Promise<void> {
  const s = searchQuery(request.body, request.query);
  request.query = s.raw;
  request.searchKey = s.canonical;
}

/**
 * What the answer cache keys a request's question by: the URL of a GET, the canonical body of a SEARCH (after a NUL, which
 * no URL holds: a SEARCH never shares a key with a GET, nor two SEARCHes of different bodies one key).
 */
export function questionOf(request: FastifyRequest): string {
  const key = request.searchKey;
  return key === null ? request.url : `${request.url.split('?')[0] ?? ''}?\u0000SEARCH ${key}`;
}
