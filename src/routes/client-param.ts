import { errors } from '../errors/catalog.js';

/** The longest client a report names (`user:<uuid>~<family>`, or a static token's; far more than any real one). */
const CLIENT_CHARS = 400;

/**
 * The `?client=` of an operator's report (migration guide, deprecation progress): undefined when absent, a 400 when it
 * holds a control character or is longer than any client (attack pass 19, F8: a NUL reached PostgreSQL, a 500).
 */
export function clientParam(query: unknown): string | undefined {
  const raw = query && typeof query === 'object' ? (query as Record<string, unknown>).client : undefined;
  if (typeof raw !== 'string' || raw === '') return undefined;
  // eslint-disable-next-line no-control-regex
  if (raw.length > CLIENT_CHARS || /[\u0000-\u001f\u007f]/.test(raw)) {
    throw errors.invalidQuery([`"client" must be a client the report names (at most ${CLIENT_CHARS} characters, no control characters)`]);
  }
  return raw;
}
