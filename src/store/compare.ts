import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Difference } from '../compare/diff.js';
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

/** Comparison results: counters per route and per field path, at most five samples each. */
export class CompareStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number = Date.now,
  ) {}

  async record(r: CompareRecord): Promise<void> {
    const real = r.differences.filter((d) => !r.noise.has(d.path));
    const seen = new Set<string>();
    for (const d of r.differences) {
      const k = `${d.path}\u0000${d.kind}`;
      if (seen.has(k)) continue; // one count per answer and field
      seen.add(k);
      const noise = r.noise.has(d.path) ? 1 : 0;
      await this.db
        .insertInto('compare_fields')
        .values({ route: r.route, path: d.path, kind: d.kind, count: 1, noise })
        .onConflict((oc) =>
          oc.columns(['route', 'path', 'kind']).doUpdateSet({ count: sql`compare_fields.count + 1`, noise: sql`compare_fields.noise + ${noise}` }),
        )
        .execute();
      const n = await this.db
        .selectFrom('compare_samples')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('route', '=', r.route)
        .where('path', '=', d.path)
        .where('kind', '=', d.kind)
        .executeTakeFirst();
      if (Number(n?.n ?? 0) < SAMPLES_PER_FIELD) {
        await this.db
          .insertInto('compare_samples')
          .values({
            id: randomUUID(),
            route: r.route,
            path: d.path,
            kind: d.kind,
            legacy: clip(d.legacy),
            translated: clip(d.translated),
            request: r.request,
            created_at: this.now(),
            client: r.client ?? null,
          })
          .execute();
      }
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
    const samples = await this.db.selectFrom('compare_samples').selectAll().orderBy('created_at').execute();
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
                .map((s) => ({ legacy: s.legacy, translated: s.translated, request: s.request, ...(s.client ? { client: s.client } : {}) })),
            })),
        };
      }),
    };
  }

  async clear(): Promise<void> {
    await this.db.deleteFrom('compare_samples').execute();
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
