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

async function send(base: string, r: RecordedRequest, auth: string | undefined): Promise<Answer> {
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
  return { status: res.statusCode, body: parseBody(text), ms: performance.now() - started };
}

/** One side refused the credentials it was given: every answer of the run would be a meaningless difference. */
export class ReplayAuthError extends Error {}

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
