import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errors } from '../errors/catalog.js';
import { parseQueryString, QueryTooLarge, queryText, type QsValue } from '../query/querystring.js';

/** A request whose query string is not yet parsed. */
const DEFERRED = Symbol('query string not yet parsed');
/** Marks a query string that could not be read, or that makes too much (the parser's bound). */
const REFUSED = Symbol('query string refused');

type Query = Record<string | symbol, unknown>;

/**
 * The router's query-string parser: it only keeps the raw text. The router parses a request's query as soon as it has
 * matched its route, before any hook — a pipelined request waiting for its turn held its parsed query, and 15 KB of
 * nested bracket keys parse to 750 KB of heap: 256 connections of one address took an instance to 1.1 GB, three
 * addresses to 3.9 GB, another tenant's reads to 14–68 s (attack pass 26, F-A). Parsed by `parseQueries`' hook once the
 * request's turn has come, from the request's URL.
 */
export function deferQuery(): Record<string, QsValue> {
  return NOT_YET;
}

/** What every request's query is until its hook parses it (one object for all: frozen, nothing reads it before). */
const NOT_YET = Object.freeze(Object.assign(Object.create(null) as Query, { [DEFERRED]: true })) as Record<string, QsValue>;

/** The query of a request, parsed from its URL (whatever a router made of it); a refusal when it cannot be read or is too large. */
function parsed(url: string): Record<string, QsValue> {
  try {
    return parseQueryString(queryText(url));
  } catch (e) {
    return Object.assign(Object.create(null) as Query, { [REFUSED]: e instanceof QueryTooLarge ? e.message : 'The query string cannot be read' }) as
      Record<string, QsValue>;
  }
}

/**
 * Parses each request's query string in an `onRequest` hook (register it right after the pipelining bound's). Fastify
 * routes a path no route matches with a router of its own, which parses the query at once with its default parser (the
 * review of pass 26's F-A: `/nope?…` held its parsed query while waiting, and read a fragment as the query): that
 * router is given `deferQuery` too, and the hook parses every request's query from its URL, whichever router saw it.
 */
export function parseQueries(app: FastifyInstance): void {
  const notFound = Object.getOwnPropertySymbols(app).find((s) => s.description === 'fastify.404');
  const router = notFound ? (app as unknown as Record<symbol, { router?: { querystringParser?: unknown } }>)[notFound]?.router : undefined;
  if (router && 'querystringParser' in router) router.querystringParser = deferQuery;
  app.addHook('onRequest', (request, _reply, done) => {
    request.query = parsed(request.raw.url ?? request.url);
    done();
  });
}

/** Whether a request's query was left to `parseQueries` by the router that routed it (a test's check of the above). */
export const deferred = (query: unknown): boolean => (query as Query | undefined)?.[DEFERRED] === true;

/** Why a request's query string was refused, or undefined. */
export function refusedQuery(request: FastifyRequest): string | undefined {
  const why = (request.query as Query | undefined)?.[REFUSED];
  return typeof why === 'string' ? why : undefined;
}

/** The 400 of a refused query string. */
export const queryRefusal = (why: string) => errors.invalidQuery([why]);
