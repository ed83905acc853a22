import type { FastifyInstance } from 'fastify';
import { errors } from '../errors/catalog.js';

/** The deepest JSON body accepted: far beyond any legacy write or query, short of what a recursive walk cannot take. */
export const MAX_JSON_DEPTH = 100;

/** True when `v` nests arrays or objects deeper than `max` (walked with an explicit stack: no recursion). */
export function deeperThan(v: unknown, max: number): boolean {
  return bodyProblem(v, max, false) === 'deep';
}

/**
 * What makes a parsed body unfit, walked once with an explicit stack (no recursion): nested deeper than `max`, or (when
 * `text`) a string or a key holding U+0000 — PostgreSQL keeps no NUL in a text (it answered 500, after v1 had made the
 * render: attack pass 17, F4), so a write carrying one is refused before anything is done, on either store.
 */
export function bodyProblem(v: unknown, max: number, text: boolean, mostKeys = Number.POSITIVE_INFINITY): 'deep' | 'nul' | 'keys' | undefined {
  if (text && typeof v === 'string') return v.includes('\u0000') ? 'nul' : undefined;
  const stack: [unknown, number][] = [[v, 1]];
  let keys = 0;
  // (objects as many as keys at most, and lists ten times as many — a render's data may hold long series of pairs:
  // 333 000 empty objects in a 1 MB SEARCH have no key, and cost 0.39 s to parse, walk and read — attack pass 27, N-3;
  // counted as they are met, before they are stacked)
  let objects = 0;
  let lists = 0;
  const counted = (x: object) => (Array.isArray(x) ? ++lists > mostKeys * LISTS_PER_KEY : ++objects > mostKeys);
  if (v !== null && typeof v === 'object' && counted(v)) return 'keys';
  while (stack.length > 0) {
    const [x, depth] = stack.pop()!;
    if (x === null || typeof x !== 'object') continue;
    if (depth > max) return 'deep';
    const array = Array.isArray(x);
    const names = array ? [] : Object.keys(x);
    if ((keys += names.length) > mostKeys) return 'keys';
    for (const k of names) if (text && k.includes('\u0000')) return 'nul';
    for (const child of array ? x : Object.values(x)) {
      if (child !== null && typeof child === 'object') {
        if (counted(child)) return 'keys';
        stack.push([child, depth + 1]);
      }
      else if (text && typeof child === 'string' && child.includes('\u0000')) return 'nul';
    }
  }
  return undefined;
}

/** Lists a body may hold for each key it may have (SEARCH_BODY_KEYS): 100 000 (a series of 100 000 pairs is 1.2 MB). */
const LISTS_PER_KEY = 10;

/**
 * The most keys a SEARCH body (a question) or a write body may have, at any depth: 2 000 filter terms, 1 000 aliases
 * and `deep` keys a level fit, and a render's fields with its `data`; 60 000 unknown keys cost 0.43 s a SEARCH (attack
 * pass 17, F6) and 0.1–0.26 s a PATCH /users/me or POST /renders, four at once holding others 7–10 s (attack pass 18, N2).
 * As many objects at most, whatever they hold (a filter term is two: 2 000 fit), and ten times as many lists.
 */
export const SEARCH_BODY_KEYS = 10_000;

/** The methods whose bodies are written (a SEARCH body is a question: a NUL in it is looked for, never kept). */
const WRITES = new Set(['POST', 'PATCH', 'PUT']);

/**
 * Bodies nested deeper than MAX_JSON_DEPTH levels, and write bodies holding a NUL character, are refused with Directus's
 * 400 INVALID_PAYLOAD right after they are parsed (Fastify's parser walks them without recursion), before any
 * preHandler, route or comparison walks them.
 */
export function limitJsonDepth(app: FastifyInstance): void {
  // (a callback hook: a GET, which has no body, pays one comparison)
  app.addHook('preValidation', (request, _reply, done) => {
    const body: unknown = request.body;
    // parsed JSON only: raw bytes (the webhook route keeps its body as a Buffer) are not walked
    if (body === null || (typeof body !== 'object' && typeof body !== 'string') || ArrayBuffer.isView(body)) {
      done();
      return;
    }
    const write = WRITES.has(request.method);
    const problem = bodyProblem(body, MAX_JSON_DEPTH, write, write || request.method === 'SEARCH' ? SEARCH_BODY_KEYS : undefined);
    if (problem === 'deep') done(errors.invalidPayload(`The body is nested deeper than ${MAX_JSON_DEPTH} levels`));
    else if (problem === 'keys') done(errors.invalidPayload(`The body has more than ${SEARCH_BODY_KEYS} keys, or objects and lists`));
    else if (problem === 'nul') done(errors.invalidPayload('The body holds a NUL character (U+0000), which no stored text can keep'));
    else done();
  });
}
