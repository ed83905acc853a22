import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errors } from '../errors/catalog.js';
import { parseQueryString, QueryTooLarge, type QsValue } from '../query/querystring.js';

/** The raw query string of a request not yet parsed. */
const RAW = Symbol('query string not yet parsed');
/** Marks a query string that could not be read, or that makes too much (the parser's bound). */
const REFUSED = Symbol('query string refused');

type Query = Record<string | symbol, unknown>;

/**
 * The router's query-string parser: it only keeps the raw text. The router parses a request's query as soon as it has
 * matched its route, before any hook — a pipelined request waiting for its turn held its parsed query, and 15 KB of
 * nested bracket keys parse to 750 KB of heap: 256 connections of one address took an instance to 1.1 GB, three
 * addresses to 3.9 GB, another tenant's reads to 14–68 s (attack pass 26, F-A). Parsed by `parseQueries`' hook once the
 * request's turn has come.
 */
export function deferQuery(raw: string): Record<string, QsValue> {
  // (a fragment is no part of the query, as Directus reads a URL: `?fields=id#&access_token=…` authenticated with a token
  // the access log kept in clear — attack pass 26, F-B)
  const hash = raw.indexOf('#');
  return Object.assign(Object.create(null) as Query, { [RAW]: hash < 0 ? raw : raw.slice(0, hash) }) as Record<string, QsValue>;
}

/** The query of a request whose query string was not yet parsed, parsed; a refusal when it cannot be read or is too large. */
function parsed(query: unknown): Record<string, QsValue> {
  const raw = (query as Query | undefined)?.[RAW];
  if (typeof raw !== 'string') return query as Record<string, QsValue>;
  try {
    return parseQueryString(raw);
  } catch (e) {
    return Object.assign(Object.create(null) as Query, { [REFUSED]: e instanceof QueryTooLarge ? e.message : 'The query string cannot be read' }) as
      Record<string, QsValue>;
  }
}

/** Parses each request's query string in an `onRequest` hook (register it right after the pipelining bound's). */
export function parseQueries(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    request.query = parsed(request.query);
    done();
  });
}

/** Why a request's query string was refused, or undefined. */
export function refusedQuery(request: FastifyRequest): string | undefined {
  const why = (request.query as Query | undefined)?.[REFUSED];
  return typeof why === 'string' ? why : undefined;
}

/** The 400 of a refused query string. */
export const queryRefusal = (why: string) => errors.invalidQuery([why]);
