import type { FastifyInstance } from 'fastify';
import { errors } from '../errors/catalog.js';

/** The deepest JSON body accepted: far beyond any legacy write or query, short of what a recursive walk cannot take. */
export const MAX_JSON_DEPTH = 100;

/** True when `v` nests arrays or objects deeper than `max` (walked with an explicit stack: no recursion). */
export function deeperThan(v: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[v, 1]];
  while (stack.length > 0) {
    const [x, depth] = stack.pop()!;
    if (x === null || typeof x !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(x) ? x : Object.values(x)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * Bodies nested deeper than MAX_JSON_DEPTH levels are refused with Directus's 400 INVALID_PAYLOAD right after they are
 * parsed (Fastify's parser walks them without recursion), before any preHandler, route or comparison walks them.
 */
export function limitJsonDepth(app: FastifyInstance): void {
  // (a callback hook: a GET, which has no body, pays one comparison)
  app.addHook('preValidation', (request, _reply, done) => {
    const body: unknown = request.body;
    // parsed JSON only: raw bytes (the webhook route keeps its body as a Buffer) are not walked
    if (body !== null && typeof body === 'object' && !ArrayBuffer.isView(body) && deeperThan(body, MAX_JSON_DEPTH)) {
      done(errors.invalidPayload(`The body is nested deeper than ${MAX_JSON_DEPTH} levels`));
      return;
    }
    done();
  });
}
