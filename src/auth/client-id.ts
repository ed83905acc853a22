import type { UserAgentFamily } from '../config/mappings.js';

/**
 * Who a client is, as the migration guide names it: a user (`user:<uuid>`) or a static token (`static:<token id>`,
 * the id, never the token), and within it the family of its User-Agent (`…~python-requests`). The families are a list in
 * mappings/clients.json (first match wins), so a client cannot make up new clients by varying its User-Agent. Pure.
 */
/** The User-Agent family: the first of the list that matches, `none` without the header, `other` for the rest. */
export function userAgentFamily(ua: string | string[] | undefined, families: readonly UserAgentFamily[]): string {
  const v = Array.isArray(ua) ? ua[0] : ua;
  if (!v) return 'none';
  // (the families of one mappings load: classified anew when they are another list)
  if (families !== seenFor) { seen.clear(); seenChars = 0; seenFor = families; }
  const known = seen.get(v);
  if (known) return known;
  let family = 'other';
  for (const [re, name] of families) if (re.test(v)) { family = name; break; }
  // only short ones are kept (a long one is classified again each time): at most SEEN_MAX × SEEN_CHARS characters
  if (v.length > SEEN_CHARS) return family;
  if (seen.size >= SEEN_MAX) { seen.clear(); seenChars = 0; }
  seen.set(v, family);
  seenChars += v.length;
  return family;
}
/** User-Agent strings classified before (a client sends the same one every time), at most SEEN_MAX of SEEN_CHARS characters. */
const seen = new Map<string, string>();
let seenFor: readonly UserAgentFamily[] | undefined;
const SEEN_MAX = 512;
const SEEN_CHARS = 256;
let seenChars = 0;
/** The characters of the User-Agents kept (at most SEEN_MAX × SEEN_CHARS). */
export const userAgentCacheChars = (): number => seenChars;

/** A client id: the principal (user or static token, by id) and its User-Agent family. */
export function clientId(
  principal: { via: 'jwt' | 'static'; tokenId?: string; userId: string }, ua: string | string[] | undefined, families: readonly UserAgentFamily[],
): string {
  const who = principal.via === 'static' && principal.tokenId ? `static:${principal.tokenId}` : `user:${principal.userId}`;
  return `${who}~${userAgentFamily(ua, families)}`;
}

/** The principal part of a client id (`user:…` or `static:…`). */
export const principalOf = (client: string): string => client.split('~')[0] ?? client;
