/**
 * The body of a `SEARCH /items/<collection>` (Directus's read with the query in the body), turned into the raw query
 * object `parseQuery` reads — the same object a query string becomes, so there is one parser for both forms.
 *
 * As Directus 10.10 reads it (`validateBatch('read')`): the body is an object with at most `query` (an object: the query
 * in its JSON form — `filter` object, `fields`/`sort`/`groupBy` arrays or comma strings, `deep`, `aggregate`, `alias`,
 * `search`, `limit`/`offset`/`page` numbers, `meta`) and `keys` (primary keys to read, strings or numbers). A body
 * `query` replaces the URL's query; without one the URL's query string is the query (an empty or absent body reads
 * like the GET). `keys` reads those items: `id` `_in` the keys (replacing any `id` condition of the query's filter at its
 * top level), limited to as many items as keys unless the query sets a limit. JSON values keep their JSON types (a
 * number is a number, `true` a boolean) — the parser already takes both forms. A body of another shape is 400
 * INVALID_PAYLOAD naming the problem (Directus 10.10 fails its own validation of such bodies with a 500).
 */
import { errors } from '../errors/catalog.js';
import { isUuid } from '../lib/uuid.js';

export interface SearchQuery {
  /** The raw query to parse, as `parseQuery` takes it (never holds `access_token`). */
  readonly raw: Readonly<Record<string, unknown>>;
  /** A canonical text of `raw`: equal for equal questions however the body was spelled (key order, whitespace). */
  readonly canonical: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const CREDENTIAL = 'access_token';

/** The raw query of a SEARCH: its body's `query` (or the URL's), with `keys` folded into the filter. */
export function searchQuery(body: unknown, urlQuery: unknown): SearchQuery {
  const b: unknown = body === undefined || body === null || body === '' ? {} : body;
  if (!isObject(b)) throw errors.invalidPayload('"value" must be of type object');
  for (const key of Object.keys(b)) {
    if (key !== 'query' && key !== 'keys') throw errors.invalidPayload(`"${key}" is not allowed`);
  }
  const keys = b.keys;
  if (keys !== undefined) {
    if (!Array.isArray(keys)) throw errors.invalidPayload('"keys" must be an array');
    keys.forEach((k, i) => {
      if (typeof k !== 'string' && typeof k !== 'number') {
        throw errors.invalidPayload(`"keys[${i}]" does not match any of the allowed types`);
      }
    });
  }
  if (b.query !== undefined && !isObject(b.query)) throw errors.invalidPayload('"query" must be of type object');
  // every legacy collection is keyed by uuid: another key names no item (403, as a malformed id in a path)
  if (Array.isArray(keys) && keys.some((k) => typeof k !== 'string' || !isUuid(k))) throw errors.forbidden();
  const from = b.query !== undefined ? b.query : isObject(urlQuery) ? urlQuery : {};
  const raw: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  // a null parameter is an absent one (Directus's sanitizeQuery skips it: Python clients send None as null)
  for (const k of Object.keys(from)) if (k !== CREDENTIAL && from[k] !== null) raw[k] = from[k];
  if (Array.isArray(keys)) withKeys(raw, keys as (string | number)[]);
  return { raw, canonical: canonicalJson(raw) };
}

/** `keys`: the query's filter with `id` `_in` the keys at its top level, and the keys' count as the default limit. */
function withKeys(raw: Record<string, unknown>, keys: readonly (string | number)[]): void {
  if (keys.length === 0) return void (raw.limit = 0); // no key, no item
  let filter: unknown = raw.filter;
  if (typeof filter === 'string' && filter.trim() !== '') {
    try {
      filter = JSON.parse(filter);
    } catch {
      return void (raw.filter = filter); // the parser names the bad JSON
    }
  }
  const base = isObject(filter) ? filter : {};
  raw.filter = { ...base, id: { _in: keys.map(String) } };
  if (keys.length > 0 && (raw.limit === undefined || raw.limit === null || raw.limit === '')) raw.limit = keys.length;
}

/** A value that is no object and no list. */
const anyPlain = (x: unknown): boolean => x === null || typeof x !== 'object';

/**
 * JSON with object keys sorted at every depth: one text per question, whatever order the client wrote. Written into one
 * list of pieces joined once (each level joining its own copied the text inside it again: a 1 MB body nested 97 deep cost
 * 124–141 ms — attack pass 33, M-1).
 */
export function canonicalJson(v: unknown): string {
  const out: string[] = [];
  writeCanonical(v, out);
  return out.join('');
}

function writeCanonical(v: unknown, out: string[]): void {
  if (Array.isArray(v)) {
    // (each run of plain values is JSON.stringify's own text, written in one pass: 500 000 zeros under an unknown name of
    // a SEARCH cost 148 ms a call each — attack pass 28, M-1 —, and one object among them made it so again — its
    // re-check; the objects of a body are bounded, so are the runs)
    out.push('[');
    let members = 0;
    // the members that are numbers past JSON's range, as runs of one sign: `first:last`, `~` before a -Infinity's
    const past: (number | string)[] = [];
    let runFrom = -1;
    let runTo = -2;
    let runSign = 0;
    const endRun = () => {
      if (runFrom < 0) return;
      // (one alone as a number, -1 - i for a -Infinity: no text made a member — 1e400 between every two values)
      if (runFrom === runTo) past.push(runSign > 0 ? runFrom : -1 - runFrom);
      else past.push(`${runSign < 0 ? '~' : ''}${runFrom}:${runTo}`);
    };
    let from = 0;
    for (let i = 0; i <= v.length; i++) {
      const x: unknown = v[i];
      if (i < v.length && (x === null || typeof x !== 'object')) {
        if (typeof x === 'number' && !Number.isFinite(x)) { // (JSON reads no NaN)
          const sign = x > 0 ? 1 : -1;
          if (i !== runTo + 1 || sign !== runSign) {
            endRun();
            runFrom = i;
            runSign = sign;
          }
          runTo = i;
        }
        continue;
      }
      // (a list of plain values is written as it is within the run — `0,[]` 90 000 times was a call a list: the re-check of
      // attack pass 30 —, a number past JSON's range in it named by its place, `i.j` — `[[1e400],…]`: attack pass 32, M-3)
      if (i < v.length && Array.isArray(x) && x.every(anyPlain)) {
        for (let j = 0; j < x.length; j++) {
          const y: unknown = x[j];
          if (typeof y === 'number' && !Number.isFinite(y)) {
            endRun();
            runFrom = -1;
            runTo = -2;
            past.push(`${y < 0 ? '~' : ''}${i}.${j}`);
          }
        }
        continue;
      }
      if (i > from) out.push(`${members++ > 0 ? ',' : ''}${JSON.stringify(v.slice(from, i)).slice(1, -1)}`);
      if (i < v.length) {
        if (members++ > 0) out.push(',');
        writeCanonical(x, out);
      }
      from = i + 1;
    }
    // (a number past JSON's range — 1e400 is read as Infinity — is written null by JSON.stringify, and `_nin [1e400]`
    // shared `_nin [null]`'s cached answer — the re-check of attack pass 28, a low —, so the list is followed by where
    // they stand, between two NULs, which no JSON text holds outside a string; a run holds them as plain values: `1e400`
    // between every two values made each run one value long again, 90 ms a call — attack pass 30, M-1)
    endRun();
    out.push(past.length === 0 ? ']' : `]\u0000${past.join(',')}\u0000`);
    return;
  }
  if (isObject(v)) {
    out.push('{');
    let members = 0;
    for (const k of Object.keys(v).sort()) {
      if (v[k] === undefined) continue;
      out.push(`${members++ > 0 ? ',' : ''}${JSON.stringify(k)}:`);
      writeCanonical(v[k], out);
    }
    out.push('}');
    return;
  }
  // (a number past JSON's range outside a list: written as no JSON text can be, as above)
  if (typeof v === 'number' && !Number.isFinite(v)) out.push(String(v));
  else out.push(JSON.stringify(v) ?? 'null');
}
