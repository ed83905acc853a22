import { createHash } from 'node:crypto';
import type { QueryNode } from '../query/ast.js';
import { parseQuery } from '../query/parse-query.js';
import type { ResourceSchema, SchemaRegistry } from '../query/schema.js';
import { bucketCalls, type ClientShapeStore, type ShapeCounts, type ShapeDelta } from '../store/client-shapes.js';
import { resourceOfRoute, shapeKey, shapeOf, type Shape } from './shape.js';

/** One answered legacy request as the recorder sees it (held in memory until the next flush; nothing of it is stored). */
export interface SeenRequest {
  readonly client: string;
  readonly userId: string;
  readonly method: string;
  readonly route: string;
  /** What tells two questions apart: the URL's query string, or a SEARCH's canonical body. */
  readonly question: string;
  /** The raw query object the route read (parsed off the hot path, at flush). */
  readonly query: unknown;
  /** A write's top-level body keys. */
  readonly bodyKeys?: readonly string[];
  readonly status: number;
  readonly ms: number;
  readonly v1Calls: number;
}

export interface RecorderOptions {
  readonly schemas: SchemaRegistry;
  readonly limitDefault: number;
  /** Most shapes kept per client (the least recently seen leave first). */
  readonly perClient: number;
  /** Rows not seen for this long are dropped. */
  readonly retentionMs: number;
  readonly now?: () => number;
  /** Flush period; 0: only on flush()/close(). */
  readonly flushEveryMs?: number;
  /** Distinct questions held between flushes; past it, requests are counted as dropped. */
  readonly maxPending?: number;
}

interface Pending extends ShapeCounts {
  seen: SeenRequest;
}

/** Placeholder dynamic values: a shape does not depend on them, and no caller's value is read. */
const NO_DYNAMIC = { now: new Date(0), userId: '00000000-0000-0000-0000-000000000000', roleId: '00000000-0000-0000-0000-000000000000', user: {} };

/**
 * The client profiles' recorder. `note` is the hot path's whole cost: a map entry per distinct question, nothing
 * parsed. `flush` (every few seconds, off the request path) parses each distinct question once, turns it into its
 * shape, and adds the counts to the store's (client, shape) rows; then it applies the bounds.
 */
export class ShapeRecorder {
  private pending = new Map<string, Pending>();
  private readonly shapes = new Map<string, Shape>();
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  dropped = 0;

  constructor(private readonly store: ClientShapeStore, private readonly o: RecorderOptions) {
    this.now = o.now ?? Date.now;
    if ((o.flushEveryMs ?? 2000) > 0) this.timer = setInterval(() => void this.flush().catch(() => {}), o.flushEveryMs ?? 2000).unref();
  }

  private entry(r: SeenRequest): Pending | undefined {
    const k = `${r.client}\u0000${r.method}\u0000${r.route}\u0000${r.question}`;
    let e = this.pending.get(k);
    if (!e) {
      if (this.pending.size >= (this.o.maxPending ?? 5000)) { this.dropped++; return undefined; }
      const t = this.now();
      e = { seen: r, count: 0, errors: 0, msTotal: 0, msMax: 0, calls: new Map(), first: t, last: t, compared: 0, differing: 0 };
      this.pending.set(k, e);
    }
    return e;
  }

  note(r: SeenRequest): void {
    const e = this.entry(r);
    if (!e) return;
    e.count++;
    if (r.status >= 400) e.errors++;
    e.msTotal += r.ms;
    if (r.ms > e.msMax) e.msMax = r.ms;
    e.calls.set(r.v1Calls, (e.calls.get(r.v1Calls) ?? 0) + 1);
    e.last = this.now();
  }

  /** A comparison of this request's answer with the legacy backend's (route mode compare or shadow) finished. */
  noteCompared(r: SeenRequest, differing: boolean): void {
    const e = this.entry(r);
    if (!e) return;
    e.compared++;
    if (differing) e.differing++;
  }

  /** The shape of a request (pure but for the parse cache). */
  shapeOf(r: Pick<SeenRequest, 'method' | 'route' | 'query' | 'bodyKeys' | 'question'>): Shape {
    const ck = `${r.method}\u0000${r.route}\u0000${r.question}\u0000${(r.bodyKeys ?? []).join(',')}`;
    const known = this.shapes.get(ck);
    if (known) return known;
    const raw = (r.query ?? {}) as Record<string, unknown>;
    const params = Object.keys(raw);
    const place = { method: r.method, route: r.route, params };
    const { resource } = resourceOfRoute(r.route, this.o.schemas);
    const schema: ResourceSchema | undefined = resource ? this.o.schemas[resource] : undefined;
    const reads = r.method === 'GET' || r.method === 'SEARCH';
    let shape: Shape;
    if (!schema || !reads) shape = shapeOf(place, null, this.o.schemas, { bodyKeys: r.bodyKeys ?? [] });
    else {
      let q: QueryNode | null = null;
      try {
        q = parseQuery(raw, schema, { schemas: this.o.schemas, dynamic: NO_DYNAMIC, limitDefault: this.o.limitDefault });
      } catch {
        q = null;
      }
      shape = shapeOf(place, q, this.o.schemas, q ? {} : { invalid: true });
    }
    if (this.shapes.size >= 2000) this.shapes.clear();
    this.shapes.set(ck, shape);
    return shape;
  }

  async flush(): Promise<void> {
    const batch = [...this.pending.values()];
    this.pending = new Map();
    const rows = new Map<string, ShapeDelta>();
    for (const e of batch) {
      const shape = this.shapeOf(e.seen);
      const text = shapeKey(shape);
      const key = createHash('sha256').update(text).digest('hex').slice(0, 32);
      const rk = `${e.seen.client}\u0000${key}`;
      let d = rows.get(rk);
      if (!d) {
        d = {
          client: e.seen.client, userId: e.seen.userId, key, shape: JSON.stringify({ ...shape, key: text }), count: 0, errors: 0, msTotal: 0,
          msMax: 0, calls: new Map(), first: e.first, last: e.last, compared: 0, differing: 0,
        };
        rows.set(rk, d);
      }
      d.count += e.count;
      d.errors += e.errors;
      d.msTotal += e.msTotal;
      d.msMax = Math.max(d.msMax, e.msMax);
      for (const [n, times] of e.calls) bucketCalls(d.calls, n, times);
      d.first = Math.min(d.first, e.first);
      d.last = Math.max(d.last, e.last);
      d.compared += e.compared;
      d.differing += e.differing;
    }
    if (rows.size === 0) return;
    await this.store.apply([...rows.values()]);
    await this.store.prune(this.now() - this.o.retentionMs, this.o.perClient, new Set([...rows.values()].map((d) => d.client)));
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }
}
