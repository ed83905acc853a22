import type { Equivalent } from './equivalent.js';
import type { Shape } from './shape.js';

/**
 * A stored shape read back (a client-shapes row's JSON), checked field by field: what the report trusts it to hold.
 * A row that is not a shape (another version wrote it, or it was damaged) is said to be so, never thrown on. Pure.
 */
export type StoredShape = { readonly ok: true; readonly shape: Shape & { readonly key: string } } | { readonly ok: false; readonly why: string };

const LISTS = ['fields', 'filter', 'sort', 'aggregate', 'groupBy', 'meta', 'deep', 'body'] as const;
const KINDS = new Set(['list', 'one', 'create', 'update', 'delete', 'me', 'other']);
const PAGINATION = new Set(['default', 'limit', 'offset', 'page', 'all', 'none']);
const strings = (v: unknown): boolean => Array.isArray(v) && v.every((x) => typeof x === 'string');

export function readStoredShape(text: string): StoredShape {
  let v: unknown;
  try { v = JSON.parse(text); } catch { return { ok: false, why: 'not JSON' }; }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return { ok: false, why: 'not an object' };
  const s = v as Record<string, unknown>;
  const bad = [
    ...['method', 'route', 'key'].filter((k) => typeof s[k] !== 'string'),
    ...(s.resource === null || typeof s.resource === 'string' ? [] : ['resource']),
    ...(typeof s.kind === 'string' && KINDS.has(s.kind) ? [] : ['kind']),
    ...(typeof s.pagination === 'string' && PAGINATION.has(s.pagination) ? [] : ['pagination']),
    ...LISTS.filter((k) => !strings(s[k])),
    ...(s.filterTree === null || typeof s.filterTree === 'string' ? [] : ['filterTree']),
    ...(typeof s.search === 'boolean' ? [] : ['search']),
    ...(s.invalid === undefined || strings(s.invalid) ? [] : ['invalid']),
  ];
  if (bad.length) return { ok: false, why: `no valid ${bad.slice(0, 5).join(', ')}` };
  return { ok: true, shape: v as Shape & { key: string } };
}

/** A stand-in for a row the report cannot read: no resource, nothing to plan or prove. */
export function unreadableShape(key: string): Shape & { readonly key: string } {
  return {
    key, method: '?', route: '?', resource: null, kind: 'other', fields: [], filter: [], filterTree: null, filterJson: null, search: false, sort: [],
    pagination: 'none', aggregate: [], groupBy: [], meta: [], deep: [], body: [], invalid: [],
  };
}

/** The equivalent of a shape that has none: only the note saying why. */
export const noEquivalent = (note: string): Equivalent => ({
  resource: null, calls: [], clientSteps: [], params: [], statuses: null, blocked: [], unverified: [], notes: [note],
});
