import type { OutputsMapping } from '../config/mappings.js';

export type LegacyOutput = Record<'poster' | 'low' | 'medium' | 'high' | 'master', string | null>;

/**
 * v1 output variants → the legacy output object: master → master; high/medium/low by name first, then
 * the remaining encodes by size order; poster from a still, else the project's thumbnail.
 */
export function toLegacyOutput(output: Readonly<Record<string, string>> | undefined, m: OutputsMapping, projectThumbnail: string | null): LegacyOutput | null {
  if (!output) return null;
  const out: LegacyOutput = { poster: null, low: null, medium: null, high: null, master: output[m.master] ?? null };
  const used = new Set<string>([m.master]);
  const stills = new Set(m.stills);
  const ignored = new Set(m.ignored);
  for (const slot of ['high', 'medium', 'low'] as const) {
    const name = m.byName[slot].find((n) => output[n] !== undefined && !used.has(n));
    if (name) { out[slot] = output[name] as string; used.add(name); }
  }
  const rank = (n: string) => { const i = m.sizeOrder.indexOf(n); return i < 0 ? m.sizeOrder.length : i; };
  const rest = Object.keys(output)
    .filter((n) => !used.has(n) && !stills.has(n) && !ignored.has(n) && m.sizeOrder.includes(n))
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  for (const slot of ['high', 'medium', 'low'] as const) {
    if (out[slot] !== null) continue;
    const next = rest.shift();
    if (next !== undefined) out[slot] = output[next] ?? null;
  }
  const still = m.stills.find((n) => output[n] !== undefined);
  out.poster = still ? (output[still] as string) : projectThumbnail;
  return out;
}
