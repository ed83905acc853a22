import type { ComparisonMapping } from '../config/mappings.js';
import type { Difference } from '../lib/difference.js';
import { isUuid } from '../lib/uuid.js';

/** The differences this module finds (the type lives in lib/, below the comparison store that keeps them). */
export type { DiffKind, Difference } from '../lib/difference.js';

export interface DiffOptions {
  readonly rules: ComparisonMapping;
  /** Arrays compared as multisets (the request had no sort). */
  readonly unordered: boolean;
  /**
   * Canonical identity of an id-like string: two different uuids naming the same v1 object map to the
   * same key (`v1:rend_…`). Strings without one are compared as they are.
   */
  readonly identity: (s: string) => string | undefined;
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?$/;
const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

function globToRe(glob: string): RegExp {
  return new RegExp(
    `^${glob
      .split('.')
      .map((p) => (p === '*' ? '[^.]+' : p.replace(/[[\]]/g, '\\$&')))
      .join('\\.')}$`,
  );
}

/** Normalises a leaf for comparison: ids to their identity, signed URLs without their query string. */
function normalise(v: unknown, o: DiffOptions): unknown {
  if (typeof v !== 'string') return v;
  const id = o.identity(v);
  if (id) return id;
  if (o.rules.signedUrlsWithoutQuery && /^https?:\/\//.test(v)) return v.split('?')[0];
  return v;
}

function equalLeaf(a: unknown, b: unknown, o: DiffOptions): boolean {
  const na = normalise(a, o);
  const nb = normalise(b, o);
  if (na === nb) return true;
  if (typeof na === 'string' && typeof nb === 'string' && ISO.test(na) && ISO.test(nb)) {
    return Math.abs(Date.parse(na) - Date.parse(nb)) <= o.rules.timestampToleranceMs;
  }
  return false;
}

/** A stable key of a value for multiset matching (objects by their id when they have one). */
function keyOf(v: unknown, o: DiffOptions): string {
  if (v && typeof v === 'object' && !Array.isArray(v) && typeof (v as { id?: unknown }).id === 'string')
    return `id:${String(normalise((v as { id: string }).id, o))}`;
  return JSON.stringify(v, (_k, x) => (typeof x === 'string' ? normalise(x, o) : x));
}

/**
 * Structural, id-aware comparison of two legacy answers. Status codes are compared first; bodies are
 * walked together; ignored paths (mappings/comparison.json) are skipped.
 */
export function diffAnswers(legacy: { status: number; body: unknown }, translated: { status: number; body: unknown }, o: DiffOptions): Difference[] {
  const out: Difference[] = [];
  const ignored = o.rules.ignoredPaths.map(globToRe);
  if (legacy.status !== translated.status) out.push({ path: '(status)', kind: 'status', legacy: legacy.status, translated: translated.status });
  const walk = (a: unknown, b: unknown, path: string, concrete: string) => {
    if (ignored.some((re) => re.test(concrete) || re.test(path))) return;
    const ta = typeOf(a);
    const tb = typeOf(b);
    if (ta !== tb) {
      out.push({ path, kind: 'type', legacy: a, translated: b });
      return;
    }
    if (ta === 'array') {
      const la = a as unknown[];
      const lb = b as unknown[];
      if (o.unordered) {
        const rest = new Map<string, unknown[]>();
        for (const x of lb) {
          const k = keyOf(x, o);
          rest.set(k, [...(rest.get(k) ?? []), x]);
        }
        const unmatched: unknown[] = [];
        la.forEach((x, i) => {
          const k = keyOf(x, o);
          const bucket = rest.get(k);
          if (bucket && bucket.length > 0) walk(x, bucket.shift(), `${path}[]`, `${concrete}.${i}`);
          else unmatched.push(x);
        });
        const extra = [...rest.values()].flat();
        // elements with the same identity but different content were walked above; the rest differ as wholes
        for (const x of unmatched) out.push({ path: `${path}[]`, kind: 'missing', legacy: x, translated: undefined });
        for (const x of extra) out.push({ path: `${path}[]`, kind: 'extra', legacy: undefined, translated: x });
        return;
      }
      if (la.length !== lb.length) out.push({ path, kind: 'length', legacy: la.length, translated: lb.length });
      const ka = la.map((x) => keyOf(x, o));
      const kb = lb.map((x) => keyOf(x, o));
      if (la.length === lb.length && ka.join('\u0000') !== kb.join('\u0000') && [...ka].sort().join('\u0000') === [...kb].sort().join('\u0000')) {
        out.push({ path, kind: 'order', legacy: ka, translated: kb });
        const byKey = new Map(lb.map((x, i) => [kb[i], x]));
        la.forEach((x, i) => walk(x, byKey.get(ka[i]), `${path}[]`, `${concrete}.${i}`));
        return;
      }
      for (let i = 0; i < Math.min(la.length, lb.length); i++) walk(la[i], lb[i], `${path}[]`, `${concrete}.${i}`);
      return;
    }
    if (ta === 'object') {
      const oa = a as Record<string, unknown>;
      const ob = b as Record<string, unknown>;
      for (const k of Object.keys(oa)) {
        const p = path ? `${path}.${k}` : k;
        const c = concrete ? `${concrete}.${k}` : k;
        if (!Object.hasOwn(ob, k)) {
          if (!ignored.some((re) => re.test(c) || re.test(p))) out.push({ path: p, kind: 'missing', legacy: oa[k], translated: undefined });
        } else walk(oa[k], ob[k], p, c);
      }
      for (const k of Object.keys(ob)) {
        const p = path ? `${path}.${k}` : k;
        const c = concrete ? `${concrete}.${k}` : k;
        if (!Object.hasOwn(oa, k) && !ignored.some((re) => re.test(c) || re.test(p)))
          out.push({ path: p, kind: 'extra', legacy: undefined, translated: ob[k] });
      }
      return;
    }
    if (!equalLeaf(a, b, o)) out.push({ path, kind: 'value', legacy: a, translated: b });
  };
  walk(legacy.body, translated.body, '', '');
  return out;
}

/** Every string in a body that looks like a uuid (to resolve identities before diffing). */
export function uuidsIn(body: unknown, out = new Set<string>()): Set<string> {
  if (typeof body === 'string') {
    if (isUuid(body)) out.add(body.toLowerCase());
  } else if (Array.isArray(body)) for (const x of body) uuidsIn(x, out);
  else if (body && typeof body === 'object') for (const x of Object.values(body)) uuidsIn(x, out);
  return out;
}

/** Paths that differ between two answers of the legacy side itself: noise, not translation bugs. */
export function noisePaths(first: { status: number; body: unknown }, second: { status: number; body: unknown }, o: DiffOptions): Set<string> {
  return new Set(diffAnswers(first, second, o).map((d) => d.path));
}
