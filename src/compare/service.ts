import type { ComparisonMapping } from '../config/mappings.js';
import type { CompareStore } from '../store/compare.js';
import type { IdTranslator } from '../translate/ids.js';
import { diffAnswers, noisePaths, uuidsIn, type Difference } from './diff.js';
import { redactRequest, redactValue } from './redact.js';

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

  /** Records the comparison; returns the differences that are not noise (the legacy side's own variation). */
  async compare(
    route: string, request: string, unordered: boolean, legacy: Answer, translated: Answer, legacyAgain?: Answer, client?: string,
  ): Promise<Difference[]> {
    const map = await this.identities([legacy.body, translated.body, legacyAgain?.body]);
    const options = { rules: this.rules, unordered: unordered && this.rules.unorderedArraysWithoutSort, identity: (s: string) => map.get(s.toLowerCase()) };
    const differences = diffAnswers(legacy, translated, options);
    const noise = legacyAgain ? noisePaths(legacy, legacyAgain, options) : new Set<string>();
    // what is kept holds no credential (the request's query may carry an access_token; answers may carry tokens)
    const kept = differences.map((d) => ({ ...d, legacy: redactValue(d.path, d.legacy), translated: redactValue(d.path, d.translated) }));
    await this.store.record({
      route, request: redactRequest(request.slice(0, REQUEST_SCRUBBED)), differences: kept, noise, legacyMs: legacy.ms, translatedMs: translated.ms,
      ...(client ? { client } : {}),
    });
    // what differs beyond the legacy side's own noise (what the route's `differing` counts)
    return differences.filter((d) => !noise.has(d.path));
  }
}

export function parseBody(text: string): unknown {
  try { return text ? JSON.parse(text) : null; } catch { return text; }
}
