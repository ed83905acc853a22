import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Who still calls what: counts per legacy route template and principal, with first and last seen. */
export class UsageLedger {
  private pending = new Map<string, { route: string; principal: string; kind: string; count: number; first: number; last: number }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number = Date.now,
    flushEveryMs = 2000,
  ) {
    if (flushEveryMs > 0) this.timer = setInterval(() => void this.flush().catch(() => {}), flushEveryMs).unref();
  }

  note(route: string, principal: string, kind: string): void {
    const k = `${route}\u0000${principal}`;
    const t = this.now();
    const e = this.pending.get(k);
    if (e) {
      e.count++;
      e.last = t;
    } else this.pending.set(k, { route, principal, kind, count: 1, first: t, last: t });
  }

  async flush(): Promise<void> {
    const batch = [...this.pending.values()];
    this.pending = new Map();
    for (const e of batch) {
      await this.db
        .insertInto('usage')
        .values({ route: e.route, principal: e.principal, principal_kind: e.kind, count: e.count, first_seen: e.first, last_seen: e.last })
        .onConflict((oc) => oc.columns(['route', 'principal']).doUpdateSet({ count: sql`usage.count + ${e.count}`, last_seen: e.last }))
        .execute();
    }
  }

  async list(): Promise<{ route: string; principal: string; principal_kind: string; count: number; first_seen: string; last_seen: string }[]> {
    await this.flush();
    const rows = await this.db.selectFrom('usage').selectAll().orderBy('route').orderBy('count', 'desc').execute();
    return rows.map((r) => ({
      ...r,
      count: Number(r.count),
      first_seen: new Date(Number(r.first_seen)).toISOString(),
      last_seen: new Date(Number(r.last_seen)).toISOString(),
    }));
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }
}
