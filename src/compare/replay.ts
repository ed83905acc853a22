import { request } from 'undici';
import type { CompareReport, CompareStore } from '../store/compare.js';
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
}

async function send(base: string, r: RecordedRequest, auth: string | undefined): Promise<Answer & { answeredBy: string | undefined }> {
  const qs = typeof r.query === 'string' ? r.query.replace(/^\?/, '') : new URLSearchParams(r.query ?? {}).toString();
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
const refused = (a: Answer) => (a.status === 401 || a.status === 403) &&
  AUTH_CODES.has(String((a.body as { errors?: { extensions?: { code?: string } }[] })?.errors?.[0]?.extensions?.code));

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
): Promise<{ report: CompareReport; failing: string[]; exitCode: number; skipped: number }> {
  if (sameServer(o.legacyUrl, o.gatewayUrl)) {
    throw new ReplayModeError(`--legacy and --gateway are one server (${o.gatewayUrl}): the legacy side would be compared with itself`);
  }
  let skipped = 0;
  for (const line of lines) {
    if (!line.trim()) continue;
    const r = JSON.parse(line) as RecordedRequest;
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
    if (refused(legacy) && !refused(translated)) {
      throw new ReplayAuthError(`the legacy side refused the recorded Authorization (${legacy.status} on ${method} ${r.path}): ` +
        'the recording\'s token has expired or was revoked; record again, or put a valid legacy token in the file');
    }
    const hasSort = typeof r.query === 'string' ? /(^|&)sort=/.test(r.query) : !!r.query && 'sort' in r.query;
    await comparator.compare(routeTemplate(method, r.path), `${method} ${r.path}`, !hasSort, legacy, translated, again);
  }
  const report = await store.report();
  const failing = report.routes.filter((x) => x.diffRate > o.threshold).map((x) => x.route);
  return { report, failing, exitCode: failing.length > 0 ? 1 : 0, skipped };
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
