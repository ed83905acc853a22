import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Difference } from '../lib/difference.js';
import type { Database } from './schema.js';

export interface CompareRecord {
  readonly route: string;
  readonly differences: readonly Difference[];
  readonly noise: ReadonlySet<string>;
  readonly legacyMs: number;
  readonly translatedMs: number;
  readonly request: string;
  /** The client of the compared request (`user:…~curl`), when known. */
  readonly client?: string;
}

const SAMPLES_PER_FIELD = 5;
const clip = (v: unknown) => {
  const s = v === undefined ? null : JSON.stringify(v);
  return s && s.length > 2000 ? `${s.slice(0, 2000)}…` : s;
};
/** Text cut to `max` characters with a marker saying how long it was. */
const cut = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max)}…[cut: ${s.length} characters]`);

/** How much of a comparison is kept. */
export interface CompareBounds {
  /** Distinct differing paths kept per answer (the rest count under MORE_PATHS). */
  readonly pathsPerAnswer: number;
  /** Distinct paths kept per route (a new one past it counts under MORE_PATHS). */
  readonly pathsPerRoute: number;
  /** Samples kept per route (five a path at most). */
  readonly samplesPerRoute: number;
}

/**
 * Comparison results: counters per route and per field path, at most five samples each. Bounded whatever the answers
 * (aliases multiply a difference's paths): paths per answer and per route, a path's and a sample's length; an answer's
 * request line is kept once for all its samples.
 */
export class CompareStore {
  static readonly PATHS_PER_ANSWER = 16;
  static readonly PATHS_PER_ROUTE = 256;
  static readonly SAMPLES_PER_ROUTE = 256;
  /** The longest request line kept (scrubbed before it is cut). */
  static readonly REQUEST_CHARS = 2048;
  /** The longest path kept (the column holds 512). */
  static readonly PATH_CHARS = 200;
  /** The path differences past the bounds are counted under (kind `more`). */
  static readonly MORE_PATHS = '(more paths)';
  private readonly bounds: CompareBounds;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number = Date.now,
    bounds: Partial<CompareBounds> = {},
  ) {
    this.bounds = {
      pathsPerAnswer: CompareStore.PATHS_PER_ANSWER, pathsPerRoute: CompareStore.PATHS_PER_ROUTE, samplesPerRoute: CompareStore.SAMPLES_PER_ROUTE, ...bounds,
    };
  }

  /** The answer's distinct (path, kind) pairs, paths cut, in order: those kept by the bounds, and whether any was left out. */
  private async kept(r: CompareRecord): Promise<{ kept: (Difference & { noise: number })[]; more: boolean }> {
    const distinct = new Map<string, Difference & { noise: number }>();
    for (const d of r.differences) {
      const path = cut(d.path, CompareStore.PATH_CHARS);
      const k = `${path}\u0000${d.kind}`;
      if (!distinct.has(k)) distinct.set(k, { ...d, path, noise: r.noise.has(d.path) ? 1 : 0 }); // one count per answer and field
    }
    const all = [...distinct.values()];
    const first = all.slice(0, this.bounds.pathsPerAnswer);
    let more = all.length > first.length;
    if (first.length === 0) return { kept: [], more };
    const known = new Set((await this.db.selectFrom('compare_fields').select(['path', 'kind']).where('route', '=', r.route)
      .where('path', 'in', first.map((d) => d.path)).execute()).map((f) => `${f.path}\u0000${f.kind}`));
    const n = await this.db.selectFrom('compare_fields').select((eb) => eb.fn.countAll<number>().as('n')).where('route', '=', r.route)
      .where('path', '<>', CompareStore.MORE_PATHS).executeTakeFirst();
    let rows = Number(n?.n ?? 0);
    const kept: (Difference & { noise: number })[] = [];
    for (const d of first) {
      if (known.has(`${d.path}\u0000${d.kind}`)) kept.push(d);
      else if (rows < this.bounds.pathsPerRoute) { kept.push(d); rows++; } else more = true;
    }
    return { kept, more };
  }

  async record(r: CompareRecord): Promise<void> {
    const real = r.differences.filter((d) => !r.noise.has(d.path));
    const { kept, more } = await this.kept(r);
    let requestId: string | undefined;
    const taken = await this.db.selectFrom('compare_samples').select((eb) => eb.fn.countAll<number>().as('n')).where('route', '=', r.route)
      .executeTakeFirst();
    let samplesLeft = this.bounds.samplesPerRoute - Number(taken?.n ?? 0);
    for (const d of [...kept, ...(more ? [{ path: CompareStore.MORE_PATHS, kind: 'more', noise: 0, legacy: undefined, translated: undefined }] : [])]) {
      await this.db
        .insertInto('compare_fields')
        .values({ route: r.route, path: d.path, kind: d.kind, count: 1, noise: d.noise })
        .onConflict((oc) =>
          oc.columns(['route', 'path', 'kind']).doUpdateSet({ count: sql`compare_fields.count + 1`, noise: sql`compare_fields.noise + ${d.noise}` }),
        )
        .execute();
      if (d.kind === 'more' || samplesLeft <= 0) continue;
      const n = await this.db
        .selectFrom('compare_samples')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('route', '=', r.route)
        .where('path', '=', d.path)
        .where('kind', '=', d.kind)
        .executeTakeFirst();
      if (Number(n?.n ?? 0) >= SAMPLES_PER_FIELD) continue;
      samplesLeft--;
      // the request line once for this answer's samples
      if (!requestId) {
        requestId = randomUUID();
        await this.db.insertInto('compare_requests').values({ id: requestId, request: cut(r.request, CompareStore.REQUEST_CHARS), created_at: this.now() })
          .execute();
      }
      await this.db
        .insertInto('compare_samples')
        .values({
          id: randomUUID(),
          route: r.route,
          path: d.path,
          kind: d.kind,
          legacy: clip(d.legacy),
          translated: clip(d.translated),
          request: '',
          request_id: requestId,
          created_at: this.now(),
          client: r.client ?? null,
        })
        .execute();
    }
    // the route counter last, so a reader that sees it sees its fields too
    await this.db
      .insertInto('compare_routes')
      .values({ route: r.route, total: 1, differing: real.length > 0 ? 1 : 0, legacy_ms_total: r.legacyMs, translated_ms_total: r.translatedMs })
      .onConflict((oc) =>
        oc.column('route').doUpdateSet({
          total: sql`compare_routes.total + 1`,
          differing: sql`compare_routes.differing + ${real.length > 0 ? 1 : 0}`,
          legacy_ms_total: sql`compare_routes.legacy_ms_total + ${r.legacyMs}`,
          translated_ms_total: sql`compare_routes.translated_ms_total + ${r.translatedMs}`,
        }),
      )
      .execute();
  }

  /** The report: per route diff rate and latencies, the most frequent differing fields with samples. */
  async report(): Promise<CompareReport> {
    const routes = await this.db.selectFrom('compare_routes').selectAll().orderBy('route').execute();
    const fields = await this.db.selectFrom('compare_fields').selectAll().orderBy('count', 'desc').execute();
    const samples = await this.db.selectFrom('compare_samples').leftJoin('compare_requests', 'compare_requests.id', 'compare_samples.request_id')
      .select(['compare_samples.route', 'compare_samples.path', 'compare_samples.kind', 'compare_samples.legacy', 'compare_samples.translated',
        'compare_samples.client', 'compare_samples.request', 'compare_requests.request as line'])
      .orderBy('compare_samples.created_at').orderBy('compare_samples.id').execute();
    return {
      routes: routes.map((r) => {
        const total = Number(r.total);
        return {
          route: r.route,
          total,
          differing: Number(r.differing),
          diffRate: total ? Number(r.differing) / total : 0,
          legacyMsAvg: total ? r.legacy_ms_total / total : 0,
          translatedMsAvg: total ? r.translated_ms_total / total : 0,
          fields: fields
            .filter((f) => f.route === r.route)
            .map((f) => ({
              path: f.path,
              kind: f.kind,
              count: Number(f.count),
              noise: Number(f.noise) > 0,
              samples: samples
                .filter((s) => s.route === r.route && s.path === f.path && s.kind === f.kind)
                .map((s) => ({ legacy: s.legacy, translated: s.translated, request: s.line ?? s.request, ...(s.client ? { client: s.client } : {}) })),
            })),
        };
      }),
    };
  }

  async clear(): Promise<void> {
    await this.db.deleteFrom('compare_samples').execute();
    await this.db.deleteFrom('compare_requests').execute();
    await this.db.deleteFrom('compare_fields').execute();
    await this.db.deleteFrom('compare_routes').execute();
  }
}

export interface CompareReport {
  routes: {
    route: string;
    total: number;
    differing: number;
    diffRate: number;
    legacyMsAvg: number;
    translatedMsAvg: number;
    fields: {
      path: string;
      kind: string;
      count: number;
      noise: boolean;
      samples: { legacy: string | null; translated: string | null; request: string; client?: string }[];
    }[];
  }[];
}
