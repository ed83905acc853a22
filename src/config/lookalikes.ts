/**
 * Environment variables that look like the gateway's but are not (`INDEX_ENABLEDD`, `PROT`): a mistyped setting is
 * otherwise ignored without a word. Only names close to one of ours are named — never the rest of the environment.
 */

/** Edit distance with adjacent transpositions counted as one edit (`PROT` → `PORT` is 1). */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) rows.push([i, ...Array.from({ length: b.length }, (_, j) => (i === 0 ? j + 1 : 0))]);
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i]!;
    const above = rows[i - 1]!;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(above[j]! + 1, row[j - 1]! + 1, above[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      row[j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * How far a name may be from one of ours to be taken for a typo of it: one edit for short names (`PGHOST` is not a typo
 * of `HOST`, `HOME` not one of `HOST`), two from 7 characters, three from 13.
 */
const reach = (name: string) => (name.length <= 6 ? 1 : name.length <= 12 ? 2 : 3);

export interface Lookalike { readonly name: string; readonly nearest: string }

/**
 * The variables of `env` that are not among `known` but look like one of them: upper-case names within reach of a known
 * name (the nearest named), and any name equal to a known one but for its case (`Port`). Sorted by name.
 */
export function lookalikeVariables(env: Record<string, string | undefined>, known: readonly string[]): Lookalike[] {
  const ours = new Set(known);
  const found: Lookalike[] = [];
  for (const name of Object.keys(env)) {
    if (ours.has(name) || name.length > 64) continue;
    const upper = name.toUpperCase();
    if (name !== upper) {
      if (ours.has(upper)) found.push({ name, nearest: upper });
      continue;
    }
    if (!/^[A-Z][A-Z0-9_]*$/.test(name)) continue;
    let best: { nearest: string; d: number } | undefined;
    for (const k of known) {
      if (Math.abs(k.length - name.length) > 3) continue;
      const d = editDistance(name, k);
      if (!best || d < best.d) best = { nearest: k, d };
    }
    if (best && best.d <= reach(name)) found.push({ name, nearest: best.nearest });
  }
  return found.sort((x, y) => (x.name < y.name ? -1 : 1));
}

/** The warning said at start for a lookalike. */
export const lookalikeWarning = (l: Lookalike): string => `${l.name} is not a setting of the gateway and is ignored: did you mean ${l.nearest}?`;
