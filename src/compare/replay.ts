import { request } from 'undici';
import type { CompareReport, CompareStore } from '../store/compare.js';
import { parseQueryString } from '../query/querystring.js';
import { parseBody, type Answer, type Comparator } from './service.js';

/** One recorded legacy request (JSON Lines). */
export interface RecordedRequest {
  method?: string;
  path: string;
  query?: Record<string, string> | string;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface ReplayOptions {
  readonly legacyUrl: string;
  readonly gatewayUrl: string;
  /** Credentials for the gateway side (the recorded Authorization goes to the legacy side as it is). */
  readonly gatewayToken: string;
  /** A route whose diff rate (noise excluded) passes this fails the gate. */
  readonly threshold: number;
  /** Writes are replayed only when true (they would create renders twice otherwise). */
  readonly includeWrites?: boolean;
  /** The recording's name in messages (`requests.jsonl:3: …`); default: `line 3`. */
  readonly source?: string;
}

/** Lines of the recording that are not recorded requests, each named by its file and line (nothing was sent). */
export class ReplayInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReplayInputError';
  }
}

/** A recorded request the legacy side refused (401/403) with its recorded credentials: not compared, not a difference. */
export interface RefusedRequest { readonly at: string; readonly request: string; readonly status: number; readonly code: string | undefined }

const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
const allStrings = (v: unknown) => isPlainObject(v) && Object.values(v).every((x) => typeof x === 'string');

/** What is wrong with one recorded line, or undefined. */
function lineProblem(text: string): string | undefined {
  let r: unknown;
  try {
    r = JSON.parse(text);
  } catch (e) {
    return `not a JSON object (${(e as Error).message})`;
  }
  if (!isPlainObject(r)) return 'not a JSON object';
  if (typeof r.path !== 'string' || !r.path.startsWith('/')) return '"path" must be a string starting with /';
  if (r.method !== undefined && (typeof r.method !== 'string' || !/^[A-Za-z]+$/.test(r.method))) return '"method" must be an HTTP method';
  if (r.query !== undefined && typeof r.query !== 'string' && !allStrings(r.query)) return '"query" must be a string or an object of strings';
  if (r.headers !== undefined && !allStrings(r.headers)) return '"headers" must be an object of strings';
  return undefined;
}

/** The recording's requests, each with where it was (`file:line`); every bad line named at once (the first 10). */
export function parseRecording(lines: readonly string[], source?: string): { at: string; request: RecordedRequest }[] {
  const at = (i: number) => (source ? `${source}:${i + 1}` : `line ${i + 1}`);
  const problems: string[] = [];
  const requests: { at: string; request: RecordedRequest }[] = [];
  for (const [i, text] of lines.entries()) {
    if (!text.trim()) continue;
    const problem = lineProblem(text);
    if (problem) problems.push(`${at(i)}: ${problem}`);
    else requests.push({ at: at(i), request: JSON.parse(text) as RecordedRequest });
  }
  if (problems.length > 0) {
    throw new ReplayInputError(`${problems.slice(0, 10).join('; ')}${problems.length > 10 ? `; and ${problems.length - 10} more` : ''}`);
  }
  return requests;
}

async function send(base: string, r: RecordedRequest, auth: string | undefined): Promise<Answer & { answeredBy: string | undefined }> {
  const qs = queryOf(r);
  const headers: Record<string, string> = { ...(r.headers ?? {}) };
  delete headers.host;
  delete headers['content-length'];
  if (auth !== undefined) headers.authorization = auth;
  const started = performance.now();
  const res = await request(`${base}${r.path}${qs ? `?${qs}` : ''}`, {
    method: (r.method ?? 'GET') as 'GET',
    headers: { ...headers, ...(r.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: r.body === undefined ? undefined : JSON.stringify(r.body),
  });
  const text = await res.body.text();
  const answeredBy = res.headers['x-gateway-answered-by'];
  const ms = performance.now() - started;
  return { status: res.statusCode, body: parseBody(text), ms, answeredBy: typeof answeredBy === 'string' ? answeredBy : undefined };
}

/** One side refused the credentials it was given: every answer of the run would be a meaningless difference. */
export class ReplayAuthError extends Error {}

/**
 * Both sides would be the legacy system: the gateway answers the route from the legacy side (its mode is proxy or
 * shadow, `X-Gateway-Answered-By: legacy`), or the two URLs are one. Every answer would equal itself: a false green gate.
 */
export class ReplayModeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReplayModeError';
  }
}

const sameServer = (a: string, b: string) => {
  const norm = (u: string) => { try { const x = new URL(u); return `${x.protocol}//${x.host}${x.pathname.replace(/\/+$/, '')}`; } catch { return u; } };
  return norm(a) === norm(b);
};

const AUTH_CODES = new Set(['INVALID_CREDENTIALS', 'INVALID_TOKEN', 'TOKEN_EXPIRED']);
const codeOf = (a: Answer): string | undefined => {
  const code = (a.body as { errors?: { extensions?: { code?: unknown } }[] } | null)?.errors?.[0]?.extensions?.code;
  return typeof code === 'string' ? code : undefined;
};
const refused = (a: Answer) => (a.status === 401 || a.status === 403) && AUTH_CODES.has(String(codeOf(a)));

/** The `alias` a recorded request asked with (its query as text, in brackets or JSON, or as an object). */
function aliasOf(r: RecordedRequest): unknown {
  // (a query the parser refuses — too many objects and lists: QueryTooLarge — names no alias; the line is compared as sent)
  try {
    return parseQueryString(queryOf(r)).alias;
  } catch {
    return undefined;
  }
}

/** A recorded request's query as the text sent (an object's keys are the query's own: `alias[x]`, `fields`). */
const queryOf = (r: RecordedRequest) => (typeof r.query === 'string' ? r.query.replace(/^\?/, '') : new URLSearchParams(r.query ?? {}).toString());

/** The route template of a legacy path: uuids become :id. */
export const routeTemplate = (method: string, path: string) =>
  `${method} ${path.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, ':id').replace(/\/$/, '')}`;

/**
 * Replays recorded legacy requests against the legacy backend and the gateway, diffs every pair and
 * returns the report with the gate's verdict (exit code 1 when a route's diff rate passes the threshold).
 */
export async function replay(
  lines: readonly string[],
  o: ReplayOptions,
  comparator: Comparator,
  store: CompareStore,
): Promise<{ report: CompareReport; failing: string[]; exitCode: number; skipped: number; refused: RefusedRequest[] }> {
  if (sameServer(o.legacyUrl, o.gatewayUrl)) {
    throw new ReplayModeError(`--legacy and --gateway are one server (${o.gatewayUrl}): the legacy side would be compared with itself`);
  }
  const recorded = parseRecording(lines, o.source);
  let skipped = 0;
  const refusedByLegacy: RefusedRequest[] = [];
  for (const { at, request: r } of recorded) {
    const method = (r.method ?? 'GET').toUpperCase();
    if (method !== 'GET' && !o.includeWrites) {
      skipped++;
      continue;
    }
    const [legacy, again, translated] = [
      await send(o.legacyUrl, r, undefined),
      await send(o.legacyUrl, r, undefined),
      await send(o.gatewayUrl, r, `Bearer ${o.gatewayToken}`),
    ];
    if (translated.answeredBy === 'legacy') {
      const segments = r.path.split('?')[0]!.split('/');
      const prefix = `/${(segments[1] === 'items' ? segments[2] : segments[1]) ?? ''}`; // /items/<collection> follows /<collection>
      throw new ReplayModeError(`the gateway answered ${method} ${r.path} from the legacy side (X-Gateway-Answered-By: legacy: its ROUTE_MODES puts ` +
        `${prefix} in proxy or shadow mode), so the legacy side would be compared with itself; replay against a gateway that translates ` +
        `${prefix} (mode translate or compare)`);
    }
    if (refused(translated) && !refused(legacy)) {
      throw new ReplayAuthError(`the gateway refused --gateway-token (${translated.status} on ${method} ${r.path}): give an access token ` +
        '(POST /auth/login on the gateway) or a static token of the gateway user whose requests were recorded');
    }
    if ((legacy.status === 401 || legacy.status === 403) && translated.status < 400) {
      // the recorded credentials did not open the legacy side: nothing to compare (a difference would be the recording's)
      refusedByLegacy.push({ at, request: `${method} ${r.path}`, status: legacy.status, code: codeOf(legacy) });
      continue;
    }
    const hasSort = typeof r.query === 'string' ? /(^|&)sort=/.test(r.query) : !!r.query && 'sort' in r.query;
    // (a field read under an alias is recorded under the field it copies, and redacted by its name: as the compare mode does)
    await comparator.compare(routeTemplate(method, r.path), `${method} ${r.path}`, !hasSort, legacy, translated, again, { alias: aliasOf(r) });
  }
  const report = await store.report();
  const failing = report.routes.filter((x) => x.diffRate > o.threshold).map((x) => x.route);
  // part of the recording never compared is no pass either
  return { report, failing, exitCode: failing.length > 0 || refusedByLegacy.length > 0 ? 1 : 0, skipped, refused: refusedByLegacy };
}

export function reportText(report: CompareReport, threshold: number): string {
  const lines = ['route                                   requests  differing  diff rate'];
  for (const r of report.routes) {
    lines.push(
      `${r.route.padEnd(40)}${String(r.total).padStart(8)}${String(r.differing).padStart(11)}` +
        `${`${(r.diffRate * 100).toFixed(1)} %`.padStart(11)}${r.diffRate > threshold ? '  ✗ over threshold' : ''}`,
    );
    for (const f of r.fields.filter((x) => !x.noise).slice(0, 5)) lines.push(`    ${f.kind.padEnd(8)} ${f.path} (${f.count})`);
  }
  return lines.join('\n');
}
