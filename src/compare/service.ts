import type { ComparisonMapping } from '../config/mappings.js';
import type { CompareStore } from '../store/compare.js';
import type { IdTranslator } from '../translate/ids.js';
import { diffAnswers, noisePaths, uuidsIn, type Difference } from './diff.js';
import { redactRequest, redactValue, secretAliases } from './redact.js';

export interface Answer { readonly status: number; readonly body: unknown; readonly ms: number }

/** The part of a request line scrubbed of credentials (a SEARCH's body follows it); the store keeps its first REQUEST_CHARS. */
const REQUEST_SCRUBBED = 8 * 1024; // (kept: 2 048 characters; the scrub's work bounded — attack pass 32, M-1)

/**
 * Compares a legacy answer with the translated one: ids resolved to the v1 object they name (derived and
 * imported pairs alike), normalisation from mappings/comparison.json, noise from a second legacy answer,
 * results recorded per route template and field path.
 */
export class Comparator {
  constructor(private readonly ids: IdTranslator, private readonly store: CompareStore, private readonly rules: ComparisonMapping) {}

  private async identities(bodies: unknown[]): Promise<Map<string, string>> {
    const all = new Set<string>();
    for (const b of bodies) uuidsIn(b, all);
    const found = await this.ids.resolveMany([...all]);
    return new Map([...found].map(([uuid, v1]) => [uuid, `v1:${v1}`]));
  }

  /**
   * Records the comparison; returns the differences that are not noise (the legacy side's own variation). `about`: the
   * client it is counted for, and the request's `alias` (a field read under a name of the caller's is recorded under
   * the field it copies: new names for one differing field would otherwise each take a place of the route's bounded paths).
   */
  async compare(
    route: string, request: string, unordered: boolean, legacy: Answer, translated: Answer, legacyAgain?: Answer,
    about: { client?: string; alias?: unknown } = {},
  ): Promise<Difference[]> {
    const map = await this.identities([legacy.body, translated.body, legacyAgain?.body]);
    const options = { rules: this.rules, unordered: unordered && this.rules.unorderedArraysWithoutSort, identity: (s: string) => map.get(s.toLowerCase()) };
    const { named, secrets } = unaliasing(about.alias);
    const differences = diffAnswers(legacy, translated, options).map((d) => ({ ...d, path: named(d.path) }));
    const noise = new Set([...(legacyAgain ? noisePaths(legacy, legacyAgain, options) : [])].map(named));
    const client = about.client;
    // what is kept holds no credential (the request's query may carry an access_token; answers may carry tokens)
    // (a whole item kept as a value holds a secret field under its alias name too: redacted by the field it copies)
    const kept = differences.map((d) => ({ ...d, legacy: redactValue(d.path, d.legacy, secrets), translated: redactValue(d.path, d.translated, secrets) }));
    await this.store.record({
      route, request: redactRequest(request.slice(0, REQUEST_SCRUBBED)), differences: kept, noise, legacyMs: legacy.ms, translatedMs: translated.ms,
      ...(client ? { client } : {}),
    });
    // what differs beyond the legacy side's own noise (what the route's `differing` counts)
    return differences.filter((d) => !noise.has(d.path));
  }
}

/**
 * A path's item field read under an alias (`data[].<name>`, `data.<name>`) named after the field it copies:
 * `data[].title (alias)`. The request's alias is taken as asked (an object, or its JSON text); anything else names nothing.
 */
export function unaliasing(raw: unknown): { named: (path: string) => string; secrets: ReadonlySet<string> } {
  const none = { named: (p: string) => p, secrets: new Set<string>() };
  let alias = raw;
  if (typeof alias === 'string') try { alias = JSON.parse(alias); } catch { return none; }
  if (!alias || typeof alias !== 'object' || Array.isArray(alias)) return none;
  const of = new Map<string, string>();
  for (const [name, field] of Object.entries(alias)) if (typeof field === 'string' && field.length <= 64) of.set(name, field);
  if (of.size === 0) return none;
  const named = (path: string) => {
    const m = /^(data(?:\[\])?\.)([^.[]+)(.*)$/.exec(path);
    const field = m ? of.get(m[2] as string) : undefined;
    return m && field !== undefined ? `${m[1]}${field} (alias)${m[3]}` : path;
  };
  return { named, secrets: secretAliases(of) };
}

export function parseBody(text: string): unknown {
  try { return text ? JSON.parse(text) : null; } catch { return text; }
}
