/** The predicates of one comparison operator on one field value (what compileFilter builds a Compare node from). */
import type { Scalar } from './ast.js';
import type { FieldType } from './schema.js';
import { pgLower, plainMatch, TEXT_OPS, textMatch, type TextWork } from './like.js';

export type Rec = Readonly<Record<string, unknown>>;
export type Getter = (r: Rec) => unknown;
export type Predicate = (r: Rec) => boolean;

/** Direct property access for the hottest operators on root fields (no getter call per record). */
export function compileRootCompare(k: string, type: FieldType, op: string, value: Scalar | readonly Scalar[]): Predicate | undefined {
  if (Array.isArray(value)) {
    if (op !== '_in') return undefined;
    const set = new Set<Scalar>((value as readonly Scalar[]).filter((x) => x !== null));
    return (r) => {
      const v = r[k];
      return v != null && set.has(v as Scalar);
    };
  }
  if (value === null || (typeof value === 'boolean' && op !== '_eq' && op !== '_neq')) return undefined;
  const v0 = value as string | number | boolean;
  if (type === 'timestamp' && typeof v0 === 'string') {
    // an ISO value never coerces to a number, so null/undefined compare false without a separate check
    switch (op) {
      case '_gt':
        return (r) => (r[k] as string) > v0;
      case '_gte':
        return (r) => (r[k] as string) >= v0;
      case '_lt':
        return (r) => (r[k] as string) < v0;
      case '_lte':
        return (r) => (r[k] as string) <= v0;
    }
  }
  switch (op) {
    case '_eq':
      return (r) => r[k] === v0;
    case '_neq':
      return (r) => {
        const v = r[k];
        return v != null && v !== v0;
      };
    case '_gt':
      return (r) => {
        const v = r[k] as never;
        return v != null && v > (v0 as never);
      };
    case '_gte':
      return (r) => {
        const v = r[k] as never;
        return v != null && v >= (v0 as never);
      };
    case '_lt':
      return (r) => {
        const v = r[k] as never;
        return v != null && v < (v0 as never);
      };
    case '_lte':
      return (r) => {
        const v = r[k] as never;
        return v != null && v <= (v0 as never);
      };
  }
  // (text operators are compileCompare's: every text they walk is counted against the request's work — query/like.ts)
  return undefined;
}

export function compileCompare(get: Getter, type: FieldType, op: string, value: Scalar | readonly Scalar[], work?: TextWork): Predicate {
  // a text is folded as PostgreSQL folds a column (a timestamp's text as JavaScript: no Directus measure says otherwise)
  const lowerStr = type === 'string' || type === 'text' ? (x: unknown) => pgLower(String(x)) : (x: unknown) => String(x).toLowerCase();
  switch (op) {
    case '_eq':
      if (value === null) return () => false;
      return (r) => get(r) === value;
    case '_neq':
      if (value === null) return (r) => get(r) != null;
      return (r) => {
        const v = get(r);
        return v != null && v !== value;
      };
    case '_lt':
      return value === null
        ? () => false
        : (r) => {
            const v = get(r);
            return v != null && (v as never) < (value as never);
          };
    case '_lte':
      return value === null
        ? () => false
        : (r) => {
            const v = get(r);
            return v != null && (v as never) <= (value as never);
          };
    case '_gt':
      return value === null
        ? () => false
        : (r) => {
            const v = get(r);
            return v != null && (v as never) > (value as never);
          };
    case '_gte':
      return value === null
        ? () => false
        : (r) => {
            const v = get(r);
            return v != null && (v as never) >= (value as never);
          };
    case '_in': {
      const set = new Set<Scalar>((value as readonly Scalar[]).filter((x) => x !== null));
      return (r) => {
        const v = get(r);
        return v != null && set.has(v as Scalar);
      };
    }
    case '_nin': {
      const list = value as readonly Scalar[];
      if (list.includes(null)) return () => false; // NOT IN (…, NULL) is never true
      const set = new Set<Scalar>(list);
      return (r) => {
        const v = get(r);
        return v != null && !set.has(v as Scalar);
      };
    }
    case '_between':
    case '_nbetween': {
      const [lo, hi] = value as readonly Scalar[];
      if (lo === null || hi === null) return () => false;
      const inside = (v: unknown) => (lo as never) <= (v as never) && (v as never) <= (hi as never);
      return op === '_between'
        ? (r) => {
            const v = get(r);
            return v != null && inside(v);
          }
        : (r) => {
            const v = get(r);
            return v != null && !inside(v);
          };
    }
    case '_null':
      return value ? (r) => get(r) == null : (r) => get(r) != null;
    case '_nnull':
      return value ? (r) => get(r) != null : (r) => get(r) == null;
    case '_empty':
      return value
        ? (r) => {
            const v = get(r);
            return v == null || v === '';
          }
        : (r) => {
            const v = get(r);
            return v != null && v !== '';
          };
    case '_nempty':
      return value
        ? (r) => {
            const v = get(r);
            return v != null && v !== '';
          }
        : (r) => {
            const v = get(r);
            return v == null || v === '';
          };
  }
  if (value === null) return () => false;
  const text = TEXT_OPS[op];
  if (!text) throw new TypeError(`operator ${op} has no evaluator`);
  const { at, ci, negate } = text;
  const s = String(value);
  // a text's value is a LIKE pattern (Directus: `%` and `_` wildcards, `\` escapes); a timestamp's, plain text
  const words = type === 'timestamp' ? plainMatch(s, at) : textMatch(ci ? s.toLowerCase() : s, at, work);
  const str = ci ? lowerStr : type === 'timestamp' ? (x: unknown) => String(x) : (x: unknown) => x as string;
  return negate
    ? (r) => {
        const v = get(r);
        return v != null && !words(str(v));
      }
    : (r) => {
        const v = get(r);
        return v != null && words(str(v));
      };
}
