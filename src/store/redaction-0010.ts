/**
 * The redaction migration 0010 applies to comparison samples stored before samples were redacted, FROZEN here: the
 * rules of src/compare/redact.ts and src/log/logger.ts's scrubText as they stood on 2026-11-28 (those of 2026-11-25
 * 13:40, with the whole query scrubbed, raw quotes included — the first version of 0010's day stopped a query at a
 * quote and would keep a `token=` after one). A migration must mean the same thing each time it is replayed: it must
 * never follow later changes to the live redaction, so this file imports nothing and is never edited. Redaction for
 * new records changes in compare/redact.ts and log/logger.ts; a store needing more redacted writes a new migration.
 * Held by test/store/migration-0010.test.ts (today's rules planted with other behaviour; 0010 writes the same).
 */
const REDACTED = '[Redacted]';

/** Parameter and field names whose values are credentials, after decoding and lower-casing. */
const SECRET_NAMES = new Set(['access_token', 'refresh_token', 'password', 'token', 'api_key', 'key', 'secret', 'link']);

const SECRET_IN_TEXT = [
  /sk_[A-Za-z0-9]{32}/g,
  /Bearer\s+[A-Za-z0-9._~+/=-]+/gi,
  /eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g,
];

/** What a text must contain for a rule below to change it. */
const SUSPECT = /token|password|key|secret|link|sk_|bearer|eyj|[%+]/i;

function isSecretName(raw: string): boolean {
  const plus = raw.replace(/\+/g, ' ');
  let name: string;
  try { name = decodeURIComponent(plus); } catch { name = plus; }
  const bracket = name.indexOf('[');
  return SECRET_NAMES.has((bracket > 0 ? name.slice(0, bracket) : name).trim().toLowerCase());
}

function scrubQuery(query: string): string {
  return query.split('&').map((pair) => {
    const eq = pair.indexOf('=');
    return eq >= 0 && isSecretName(pair.slice(0, eq)) ? `${pair.slice(0, eq)}=${REDACTED}` : pair;
  }).join('&');
}

/** A request line or a string value: credential query parameters, v1 keys, bearer tokens, JWTs, name=value pairs. */
export function redactText0010(s: string): string {
  if (!SUSPECT.test(s)) return s;
  let out = s.replace(/\?([^\s#]*)/g, (_m, q: string) => `?${scrubQuery(q)}`);
  const mark = (m: string) => (m.startsWith('sk_') ? `sk_${REDACTED}` : m.startsWith('eyJ') ? REDACTED : `Bearer ${REDACTED}`);
  for (const re of SECRET_IN_TEXT) out = out.replace(re, mark);
  return out.replace(/(^|[\s&,;{(])(access_token|refresh_token|password)=[^&\s"]*/gi, (_m, pre: string, k: string) => `${pre}${k}=${REDACTED}`);
}

/** A sample's value at a dotted path (`data[].token`): whole when the path's last name is a credential's. */
export function redactValue0010(path: string, value: unknown): unknown {
  const leaf = (path.split('.').pop() ?? '').replace(/\[\d*\]$/, '');
  if (value !== undefined && value !== null && isSecretName(leaf)) return REDACTED;
  return redactDeep(value, 0);
}

function redactDeep(v: unknown, depth: number): unknown {
  if (typeof v === 'string') return redactText0010(v);
  if (v === null || typeof v !== 'object' || depth > 64) return v;
  if (Array.isArray(v)) return v.map((x) => redactDeep(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = isSecretName(k) && x !== null ? REDACTED : redactDeep(x, depth + 1);
  return out;
}
