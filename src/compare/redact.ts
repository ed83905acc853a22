import { isSecretName, scrubText } from '../log/scrub.js';

/**
 * What a comparison record may keep of a request and of the values that differed: no credential. The request line
 * goes through the access log's own scrubbing (credential parameters in any spelling, bearer tokens, v1 keys, JWTs);
 * a value under a credential-named field (`access_token`, `refresh_token`, `token`, `password` …) is replaced whole;
 * every other string is scrubbed as text.
 */
export const REDACTED = '[Redacted]';

export function redactRequest(line: string): string {
  return scrubText(line);
}

/**
 * A request line as a comparison records it: the method and URL, and a SEARCH's body (its question) after them, with
 * every value under a credential-named key replaced whole (a body that is not JSON is kept as text, scrubbed later).
 */
export function requestLine(method: string, url: string, body?: Buffer): string {
  if (!body) return `${method} ${url}`;
  const text = body.toString('utf8');
  let shown = text;
  try { shown = JSON.stringify(redactValue('', JSON.parse(text))); } catch { /* not JSON: the line's scrubbing applies */ }
  return `${method} ${url} ${shown}`;
}

/** The last name of a dotted path (`data[].access_token` → `access_token`). */
// (a field read under an alias is recorded as `<field> (alias)`: the field's name decides)
const leaf = (path: string) => (path.split('.').pop() ?? '').replace(/\[\d*\]$/, '').replace(/ \(alias\)$/, '');

/**
 * A value kept in a sample: redacted whole under a secret-named field, else its secret-named keys and credentials in text.
 * `aliased`: names the request gave secret fields (`alias[x]=password`): keys by those names are redacted too.
 */
export function redactValue(path: string, value: unknown, aliased?: ReadonlySet<string>): unknown {
  if (value !== undefined && value !== null && isSecretName(leaf(path))) return REDACTED;
  return redactDeep(value, 0, aliased);
}

/**
 * A URL's query string replaced whole: a signed output URL's signature is a bearer capability for the file until it
 * expires (attack pass 19, F6: samples kept them; the comparison itself reads signed URLs without their query).
 */
const unsigned = (s: string) => (/^https?:\/\/[^\s?#]*\?/i.test(s) ? `${s.slice(0, s.indexOf('?'))}?${REDACTED}` : s);

function redactDeep(v: unknown, depth: number, aliased?: ReadonlySet<string>): unknown {
  if (typeof v === 'string') return unsigned(scrubText(v));
  if (v === null || typeof v !== 'object' || depth > 64) return v;
  if (Array.isArray(v)) return v.map((x) => redactDeep(x, depth + 1, aliased));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    out[k] = (isSecretName(k) || aliased?.has(k) === true) && x !== null ? REDACTED : redactDeep(x, depth + 1, aliased);
  }
  return out;
}

/** The names a request's alias gives secret-named fields (`{x: 'password'}` → x). */
export function secretAliases(alias: ReadonlyMap<string, string>): ReadonlySet<string> {
  return new Set([...alias].filter(([, field]) => isSecretName(field)).map(([name]) => name));
}
