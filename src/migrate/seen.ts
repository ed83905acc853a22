import type { UserAgentFamily } from '../config/mappings.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientId } from '../auth/client-id.js';
import type { SeenRequest } from './recorder.js';
import { cutName } from './shape.js';
import { questionText } from '../query/querystring.js';
import { AGENT_CHARS } from '../store/client-shapes.js';

/** The most body keys a request is known by (a write names a few fields; past it, a marker says how many were left out). */
export const BODY_KEYS_MAX = 64;

/** The first keys of an object, each cut to a shape's name length, and a marker for the rest. */
function keysOf(o: object): string[] {
  const out: string[] = [];
  let n = 0;
  for (const k in o) {
    if (!Object.hasOwn(o, k)) continue;
    if (n++ < BODY_KEYS_MAX) out.push(cutName(k));
  }
  return n > BODY_KEYS_MAX ? [...out, `…[cut: ${n - BODY_KEYS_MAX} more]`] : out;
}

/** The names of a write body's top-level keys (a batch: `[]` and its first item's keys); never a value. */
function bodyKeys(body: unknown): string[] {
  if (Array.isArray(body)) return ['[]', ...(body[0] && typeof body[0] === 'object' ? keysOf(body[0] as object) : [])];
  return body && typeof body === 'object' ? keysOf(body) : [];
}

/**
 * What the client profiles keep of an answered legacy request, taken from what the request already holds (no parse:
 * the query object is shaped at the recorder's next flush). Undefined without a principal.
 */
export function seenRequest(
  request: FastifyRequest, reply: FastifyReply, template: string, families: readonly UserAgentFamily[],
): SeenRequest | undefined {
  const p = request.principal;
  if (!p) return undefined;
  const method = request.method;
  const url = request.url;
  const search = (request as { searchKey?: string | null }).searchKey;
  const calls = Number(reply.getHeader('x-gateway-v1-calls') ?? 0);
  const client = clientId({ via: p.via, userId: p.user.id, ...(p.tokenId ? { tokenId: p.tokenId } : {}) }, request.headers['user-agent'], families);
  return {
    client,
    ...(client.endsWith('~other') ? { agent: agentOf(request.headers['user-agent']) } : {}),
    userId: p.user.id,
    method,
    route: template,
    question: typeof search === 'string' ? `\u0000${search}` : questionText(url),
    query: request.query,
    ...(method === 'POST' || method === 'PATCH' ? { bodyKeys: bodyKeys(request.body) } : {}),
    status: reply.statusCode,
    ms: reply.elapsedTime,
    v1Calls: Number.isFinite(calls) ? calls : 0,
  };
}

/** A User-Agent as the report lists it: its first AGENT_CHARS characters, on one line. */
function agentOf(ua: string | string[] | undefined): string {
  const v = (Array.isArray(ua) ? ua[0] : ua) ?? '';
  return Array.from(v.slice(0, 2 * AGENT_CHARS)).slice(0, AGENT_CHARS).join('').replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, ' ');
}

/**
 * A compared request as the client profiles count it (route modes compare and shadow): the client by the principal, or
 * in shadow mode (no principal: the legacy side checked the token) the user the legacy token belongs to.
 */
export function comparedRequest(
  request: FastifyRequest, userId: string, query: unknown, question: string, families: readonly UserAgentFamily[],
): SeenRequest | undefined {
  const template = request.routeOptions.url;
  if (!template) return undefined;
  const p = request.principal;
  const who = p ? { via: p.via, userId: p.user.id, ...(p.tokenId ? { tokenId: p.tokenId } : {}) } : { via: 'jwt' as const, userId };
  return {
    client: clientId(who, request.headers['user-agent'], families), userId: who.userId, method: request.method, route: template, question, query,
    ...(request.method === 'POST' || request.method === 'PATCH' ? { bodyKeys: bodyKeys(request.body) } : {}),
    status: 0, ms: 0, v1Calls: 0,
  };
}
