import { CursorCodec, CursorError } from './cursor.js';
import { SimHttpError, validation } from './errors.js';

export interface ListOptions {
  limit?: unknown;
  cursor?: unknown;
  search?: unknown;
  order?: unknown;
  status?: unknown;
}

type Key = readonly number[];

function compareKeys(a: Key, b: Key): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

function relevance(name: string, q: string): number {
  const n = name.toLowerCase();
  if (n === q) return 4;
  if (n.startsWith(q)) return 3;
  if (n.includes(` ${q}`)) return 2;
  return n.includes(q) ? 1 : 0;
}

function hashSeq(id: string): number {
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) | 0;
  return h;
}

function parseLimit(v: unknown): number {
  if (v === undefined) return 20;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    throw validation([{ field: 'limit', message: 'limit: must be an integer from 1 to 60', code: n < 1 ? 'too_small' : 'invalid_type' }]);
  return Math.min(n, 60);
}

/**
 * Cursor pagination. Order keys are numeric tuples sorted ascending; the cursor holds the last key
 * served, so items created between pages are never served twice and none is skipped. Every third
 * page is short while more follow, and a status filter is applied to a window of `limit` items
 * (so pages can be short, even empty, with `has_more` true) — v1's awkward parts.
 */
export function paginate<T extends { seq?: number; createdAt: number; id: string }>(
  cursors: CursorCodec,
  endpoint: string,
  baseFilters: string,
  items: readonly T[],
  created: (t: T) => number,
  name: (t: T) => string,
  q: ListOptions,
  shortPages: boolean,
  windowFilter?: (t: T) => boolean,
): { data: T[]; has_more: boolean; next_cursor: string | null } {
  const limit = parseLimit(q.limit);
  const search = q.search === undefined || q.search === '' ? undefined : String(q.search).toLowerCase();
  const order = q.order === undefined ? 'desc' : String(q.order);
  if (order !== 'asc' && order !== 'desc') throw validation([{ field: 'order', message: 'order: must be asc or desc', code: 'invalid_enum_value' }]);
  const filters = `${baseFilters};search=${search ?? ''};order=${search ? '-' : order}`;
  let after: readonly (number | string)[] | null = null;
  let pageNo = 0;
  if (q.cursor !== undefined) {
    try {
      const st = cursors.decode(String(q.cursor), endpoint, filters);
      after = st.after;
      pageNo = st.page;
    } catch (e) {
      throw new SimHttpError(400, { error: e instanceof CursorError ? e.message : 'Invalid cursor.' });
    }
  }
  const seqOf = (t: T) => t.seq ?? hashSeq(t.id);
  const keyOf = (t: T): Key => {
    if (search) return [-relevance(name(t), search), -created(t), -seqOf(t)];
    return order === 'asc' ? [created(t), seqOf(t)] : [-created(t), -seqOf(t)];
  };
  const candidates = search ? items.filter((t) => relevance(name(t), search) > 0) : items;
  const ordered = candidates.map((t) => ({ t, k: keyOf(t) })).sort((a, b) => compareKeys(a.k, b.k));
  let start = 0;
  if (after) {
    const a = after as Key;
    while (start < ordered.length && compareKeys((ordered[start] as { k: Key }).k, a) <= 0) start++;
  }
  const size = shortPages && !windowFilter && pageNo % 3 === 1 ? Math.max(1, Math.floor(limit / 2)) : limit;
  const window = ordered.slice(start, start + size);
  const has_more = start + window.length < ordered.length;
  const last = window[window.length - 1];
  return {
    data: window.map((x) => x.t).filter((t) => !windowFilter || windowFilter(t)),
    has_more,
    next_cursor: has_more && last ? cursors.encode({ endpoint, filters, after: last.k, page: pageNo + 1 }) : null,
  };
}
