import { sql, SqliteAdapter, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/** What is counted of one (client, shape): requests, errors, latency, v1 calls, first/last seen, comparisons. */
export interface ShapeCounts {
  count: number;
  errors: number;
  msTotal: number;
  msMax: number;
  /** v1 calls per request → requests. */
  calls: Map<number, number>;
  first: number;
  last: number;
  compared: number;
  differing: number;
}

/** One (client, shape) row's increments since the last flush. */
export interface ShapeDelta extends ShapeCounts {
  readonly client: string;
  /** The bound user the client acts as (a uuid: the proof reads v1 with this user's key). */
  readonly userId: string;
  readonly key: string;
  /** The shape as JSON (no value of any request: see src/migrate/shape.ts). */
  readonly shape: string;
}

export interface ShapeRow {
  readonly client: string;
  readonly userId: string;
  readonly key: string;
  readonly shape: string;
  readonly count: number;
  readonly errors: number;
  readonly msTotal: number;
  readonly msMax: number;
  readonly calls: Readonly<Record<string, number>>;
  readonly firstSeen: number;
  readonly lastSeen: number;
  readonly compared: number;
  readonly differing: number;
}

/** At most this many distinct v1-call counts are kept per row; past it, counts go to powers of two. */
const CALL_BUCKETS = 24;
export function bucketCalls(hist: Map<number, number>, n: number, times = 1): void {
  let k = n;
  if (!hist.has(k) && hist.size >= CALL_BUCKETS) k = n <= 0 ? 0 : 2 ** Math.ceil(Math.log2(n));
  hist.set(k, (hist.get(k) ?? 0) + times);
}

/** The median of a histogram (value → count); null when empty. */
export function medianOf(hist: Readonly<Record<string, number>>): number | null {
  const entries = Object.entries(hist).map(([k, v]) => [Number(k), v] as const).sort((a, b) => a[0] - b[0]);
  const total = entries.reduce((s, [, v]) => s + v, 0);
  if (total === 0) return null;
  let seen = 0;
  for (const [k, v] of entries) {
    seen += v;
    if (seen * 2 >= total) return k;
  }
  return entries.at(-1)?.[0] ?? null;
}

/** A User-Agent of family `other` seen for a client since the last flush. */
export interface AgentDelta {
  readonly client: string;
  readonly agent: string;
  readonly count: number;
  readonly last: number;
}
/** The User-Agents kept a client (the most recently seen), and the characters kept of one. */
export const AGENTS_KEPT = 8;
export const AGENT_CHARS = 120;

/** The byte bounds of the client shapes table. */
export interface ShapeStoreBounds {
  /** The most bytes of one row's shape (UTF-8); a larger one is not stored (the recorder cuts shapes well below it). */
  readonly rowBytes: number;
  /** The most bytes of one user's rows together (shapes and call histograms, all its clients); the least recently seen leave first. */
  readonly userBytes: number;
}

/**
 * The client shapes table: one row per (client, shape), bounded — at most `perClient` shapes a client (the least
 * recently seen leave first), each row and each user's rows together in bytes, and nothing older than the retention.
 */
export class ClientShapeStore {
  static readonly ROW_BYTES = 16 * 1024;
  static readonly USER_BYTES = 2 * 1024 * 1024;
  private readonly bounds: ShapeStoreBounds;
  /** Rows not stored for being over rowBytes. */
  refused = 0;

  constructor(private readonly db: Kysely<Database>, bounds: Partial<ShapeStoreBounds> = {}) {
    this.bounds = { rowBytes: ClientShapeStore.ROW_BYTES, userBytes: ClientShapeStore.USER_BYTES, ...bounds };
  }

  async apply(deltas: readonly ShapeDelta[]): Promise<void> {
    for (const d of deltas) {
      if (Buffer.byteLength(d.shape) > this.bounds.rowBytes) { this.refused++; continue; }
      const existing = await this.db.selectFrom('client_shapes').select(['calls']).where('client', '=', d.client).where('shape_key', '=', d.key)
        .executeTakeFirst();
      const hist = new Map<number, number>(Object.entries(existing ? (JSON.parse(existing.calls) as Record<string, number>) : {})
        .map(([k, v]) => [Number(k), v]));
      for (const [n, times] of d.calls) bucketCalls(hist, n, times);
      const calls = JSON.stringify(Object.fromEntries([...hist].sort((a, b) => a[0] - b[0])));
      if (!existing) {
        const r = await this.db.insertInto('client_shapes').values({
          client: d.client, shape_key: d.key, user_id: d.userId, shape: d.shape, count: d.count, errors: d.errors, ms_total: d.msTotal,
          ms_max: d.msMax, calls, first_seen: d.first, last_seen: d.last, compared: d.compared, differing: d.differing,
        }).onConflict((oc) => oc.columns(['client', 'shape_key']).doNothing()).executeTakeFirst();
        // another instance made the row first: add to it
        if (Number(r.numInsertedOrUpdatedRows ?? 0n) > 0) continue;
      }
      await this.db.updateTable('client_shapes').set({
        count: sql`client_shapes.count + ${d.count}`, errors: sql`errors + ${d.errors}`, ms_total: sql`ms_total + ${d.msTotal}`,
        ms_max: sql`case when ms_max > ${d.msMax} then ms_max else ${d.msMax} end`, calls,
        last_seen: sql`case when last_seen > ${d.last} then last_seen else ${d.last} end`,
        compared: sql`compared + ${d.compared}`, differing: sql`differing + ${d.differing}`,
      }).where('client', '=', d.client).where('shape_key', '=', d.key).execute();
    }
  }

  /**
   * Drops rows last seen before `before`, each client's least recently seen shapes past `perClient`, and each user's
   * least recently seen rows past the user's bytes.
   */
  async prune(before: number, perClient: number, clients: Iterable<string>, users: Iterable<string> = []): Promise<number> {
    let dropped = Number((await this.db.deleteFrom('client_shapes').where('last_seen', '<', before).executeTakeFirst()).numDeletedRows);
    await this.db.deleteFrom('client_agents').where('last_seen', '<', before).execute();
    for (const client of clients) {
      const keep = await this.db.selectFrom('client_shapes').select(['shape_key']).where('client', '=', client)
        .orderBy('last_seen', 'desc').orderBy('shape_key').limit(perClient).execute();
      if (keep.length < perClient) continue;
      const r = await this.db.deleteFrom('client_shapes').where('client', '=', client)
        .where('shape_key', 'not in', keep.map((k) => k.shape_key)).executeTakeFirst();
      dropped += Number(r.numDeletedRows);
    }
    for (const user of users) dropped += await this.pruneUser(user);
    return dropped;
  }

  /** A user's rows past its bytes, the least recently seen first (read as lengths only, never whole). */
  private async pruneUser(user: string): Promise<number> {
    const sqlite = this.db.getExecutor().adapter instanceof SqliteAdapter;
    const bytes = sqlite ? sql<number>`length(cast(shape as blob)) + length(cast(calls as blob))` : sql<number>`octet_length(shape) + octet_length(calls)`;
    const rows = await this.db.selectFrom('client_shapes').select(['client', 'shape_key', bytes.as('bytes')]).where('user_id', '=', user)
      .orderBy('last_seen', 'desc').orderBy('client').orderBy('shape_key').execute();
    let total = 0;
    let dropped = 0;
    for (const r of rows) {
      total += Number(r.bytes);
      if (total <= this.bounds.userBytes) continue;
      const d = await this.db.deleteFrom('client_shapes').where('client', '=', r.client).where('shape_key', '=', r.shape_key).executeTakeFirst();
      dropped += Number(d.numDeletedRows);
    }
    return dropped;
  }

  /**
   * Adds to the counts of the User-Agents clients of family `other` came with, then keeps each client's AGENTS_KEPT most
   * recently seen (the recorder cuts each to AGENT_CHARS).
   */
  async applyAgents(rows: readonly AgentDelta[]): Promise<void> {
    for (const r of rows) {
      await this.db.insertInto('client_agents').values({ client: r.client, agent: r.agent, count: r.count, last_seen: r.last })
        .onConflict((oc) => oc.columns(['client', 'agent']).doUpdateSet({
          count: sql`client_agents.count + ${r.count}`,
          last_seen: sql`case when client_agents.last_seen > ${r.last} then client_agents.last_seen else ${r.last} end`,
        })).execute();
    }
    for (const client of new Set(rows.map((r) => r.client))) {
      const keep = await this.db.selectFrom('client_agents').select('agent').where('client', '=', client)
        .orderBy('last_seen', 'desc').orderBy('agent').limit(AGENTS_KEPT).execute();
      if (keep.length < AGENTS_KEPT) continue;
      await this.db.deleteFrom('client_agents').where('client', '=', client).where('agent', 'not in', keep.map((k) => k.agent)).execute();
    }
  }

  /** The User-Agents a client came with (family `other`), the most used first. */
  async agents(client: string): Promise<{ agent: string; count: number }[]> {
    const rows = await this.db.selectFrom('client_agents').select(['agent', 'count']).where('client', '=', client)
      .orderBy('count', 'desc').orderBy('agent').execute();
    return rows.map((r) => ({ agent: r.agent, count: Number(r.count) }));
  }

  /** The clients with rows (or those of one principal, `user:…`, or one client), in order: the report reads them one at a time. */
  async clients(client?: string): Promise<string[]> {
    let q = this.db.selectFrom('client_shapes').select('client').distinct();
    if (client) q = q.where((eb) => eb.or([eb('client', '=', client), eb('client', 'like', `${client.replace(/[%_]/g, '')}~%`)]));
    return (await q.orderBy('client').execute()).map((r) => r.client);
  }

  async list(client?: string): Promise<ShapeRow[]> {
    let q = this.db.selectFrom('client_shapes').selectAll();
    if (client) q = q.where((eb) => eb.or([eb('client', '=', client), eb('client', 'like', `${client.replace(/[%_]/g, '')}~%`)]));
    const rows = await q.orderBy('client').orderBy('count', 'desc').orderBy('shape_key').execute();
    return rows.map((r) => ({
      client: r.client, userId: r.user_id, key: r.shape_key, shape: r.shape, count: Number(r.count), errors: Number(r.errors),
      msTotal: Number(r.ms_total), msMax: Number(r.ms_max), calls: JSON.parse(r.calls) as Record<string, number>,
      firstSeen: Number(r.first_seen), lastSeen: Number(r.last_seen), compared: Number(r.compared), differing: Number(r.differing),
    }));
  }
}
