import { createHash } from 'node:crypto';
import type { QueryNode } from '../query/ast.js';
import { parseQuery } from '../query/parse-query.js';
import type { ResourceSchema, SchemaRegistry } from '../query/schema.js';
import { AGENTS_KEPT, bucketCalls, type ClientShapeStore, type ShapeCounts, type ShapeDelta } from '../store/client-shapes.js';
import { own } from '../lib/own.js';
import { resourceOfRoute, shapeKey, shapeOf, type Shape } from './shape.js';

/** One answered legacy request as the recorder sees it (held in memory until the next flush; nothing of it is stored). */
export interface SeenRequest {
  readonly client: string;
  /** Its User-Agent (cut), when no family of mappings/clients.json matched it (`~other`): the report lists them. */
  readonly agent?: string;
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
  /** Bytes the recorder holds (questions waiting for a flush, shapes kept to skip a parse); past it, requests are counted as dropped. */
  readonly maxHeldBytes?: number;
}

/** A question longer than this is shaped when it is seen (held as its shape, never whole) rather than at the next flush. */
export const DEFER_MAX_CHARS = 2048;
/** The clients whose `other` User-Agents are counted between two flushes. */
const AGENT_CLIENTS = 256;
/** The recorder's byte bound by default (RecorderOptions.maxHeldBytes). */
export const RECORDER_HELD_BYTES = 8 * 1024 * 1024;
/** What an entry costs besides its question or shape (its key, counters, call histogram, the map's own entry). */
const ENTRY_BYTES = 512;

/** A distinct question waiting for the next flush: the request to shape then (small questions), or its shape already. */
interface Pending extends ShapeCounts {
  seen: Omit<SeenRequest, 'question' | 'query' | 'bodyKeys'> & Partial<Pick<SeenRequest, 'question' | 'query' | 'bodyKeys'>>;
  shape?: Shape;
  bytes: number;
}

/**
 * What a distinct question is known by: everything that tells two apart, joined, when that is short (most questions: a
 * digest a request was a tenth of the recorder's cost), else a hash of it (a long question is never a key).
 */
const questionKey = (parts: readonly string[]): string => {
  const joined = parts.join('\u0000');
  return joined.length <= KEY_CHARS ? `=${joined}` : createHash('sha256').update(joined).digest('base64url').slice(0, 32);
};
/** A question key's longest text kept as it is (within an entry's ENTRY_BYTES; a hash is 32 characters, never starting with '='). */
const KEY_CHARS = 192;
const shapeBytes = (s: Shape): number => Buffer.byteLength(JSON.stringify(s)) + ENTRY_BYTES;

/** Placeholder dynamic values: a shape does not depend on them, and no caller's value is read. */
const NO_DYNAMIC = { now: new Date(0), userId: '00000000-0000-0000-0000-000000000000', roleId: '00000000-0000-0000-0000-000000000000', user: {} };

/**
 * The client profiles' recorder. `note` is the hot path's whole cost: a map entry per distinct question (keyed by a
 * digest), nothing parsed — but for a question over DEFER_MAX_CHARS, shaped at once so that only its shape is held.
 * `flush` (every few seconds, off the request path) parses each other distinct question once, turns it into its shape,
 * and adds the counts to the store's (client, shape) rows; then it applies the bounds. What it holds is counted in bytes
 * (heldBytes, at most maxHeldBytes).
 */
export class ShapeRecorder {
  private pending = new Map<string, Pending>();
  private pendingBytes = 0;
  /** Shapes by question key, the least recently made first out: a question asked again is not parsed again. */
  private readonly shapes = new Map<string, { shape: Shape; bytes: number }>();
  private shapesBytes = 0;
  /** User-Agents of family `other` by client, since the last flush (at most AGENT_CLIENTS × AGENTS_KEPT of AGENT_CHARS). */
  private agents = new Map<string, Map<string, { count: number; last: number }>>();
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  dropped = 0;

  constructor(private readonly store: ClientShapeStore, private readonly o: RecorderOptions) {
    this.now = o.now ?? Date.now;
    if ((o.flushEveryMs ?? 2000) > 0) this.timer = setInterval(() => void this.flush().catch(() => {}), o.flushEveryMs ?? 2000).unref();
  }

  /** Bytes held now: questions waiting for a flush and kept shapes (at most maxHeldBytes). */
  get heldBytes(): number { return this.pendingBytes + this.shapesBytes; }
  private get maxHeld(): number { return this.o.maxHeldBytes ?? RECORDER_HELD_BYTES; }

  private entry(r: SeenRequest): Pending | undefined {
    const k = questionKey([r.client, r.method, r.route, r.question, ...(r.bodyKeys ?? [])]);
    let e = this.pending.get(k);
    if (!e) {
      if (this.pending.size >= (this.o.maxPending ?? 5000)) { this.dropped++; return undefined; }
      const { question, query, bodyKeys, ...rest } = r;
      // a small question waits for the flush to be parsed; a big one is held as its shape (bounded), never whole
      const chars = question.length + (bodyKeys ?? []).reduce((n, b) => n + b.length + 1, 0);
      // (a big question refused as invalid is shaped so without parsing it again: attack pass 17, F1)
      const shape = chars <= DEFER_MAX_CHARS ? undefined : this.shapeOf(r, r.status === 400);
      // (a small question is held twice: as text and as the query object parsed from it, up to two bytes a character each)
      const bytes = shape ? shapeBytes(shape) : 4 * chars + ENTRY_BYTES;
      if (this.heldBytes + bytes > this.maxHeld) this.evictShapes(bytes);
      if (this.heldBytes + bytes > this.maxHeld) { this.dropped++; return undefined; }
      const t = this.now();
      e = { seen: shape ? rest : r, ...(shape ? { shape } : {}), bytes, count: 0, errors: 0, msTotal: 0, msMax: 0,
        calls: new Map(), first: t, last: t, compared: 0, differing: 0 };
      this.pending.set(k, e);
      this.pendingBytes += bytes;
    }
    return e;
  }

  /** Drops the oldest kept shapes until `bytes` more fit (they are only a cache). */
  private evictShapes(bytes: number): void {
    for (const [k, v] of this.shapes) {
      if (this.heldBytes + bytes <= this.maxHeld) break;
      this.shapes.delete(k);
      this.shapesBytes -= v.bytes;
    }
  }

  note(r: SeenRequest): void {
    if (r.agent !== undefined) this.noteAgent(r.client, r.agent);
    const e = this.entry(r);
    if (!e) return;
    e.count++;
    if (r.status >= 400) e.errors++;
    e.msTotal += r.ms;
    if (r.ms > e.msMax) e.msMax = r.ms;
    e.calls.set(r.v1Calls, (e.calls.get(r.v1Calls) ?? 0) + 1);
    e.last = this.now();
  }

  /** A User-Agent of family `other`: counted for the next flush (at most AGENTS_KEPT a client, AGENT_CLIENTS clients). */
  private noteAgent(client: string, agent: string): void {
    let m = this.agents.get(client);
    if (!m) {
      if (this.agents.size >= AGENT_CLIENTS) return;
      this.agents.set(client, (m = new Map()));
    }
    const a = m.get(agent);
    if (a) { a.count++; a.last = this.now(); } else if (m.size < AGENTS_KEPT) m.set(agent, { count: 1, last: this.now() });
  }

  /** A comparison of this request's answer with the legacy backend's (route mode compare or shadow) finished. */
  noteCompared(r: SeenRequest, differing: boolean): void {
    const e = this.entry(r);
    if (!e) return;
    e.compared++;
    if (differing) e.differing++;
  }

  /** The shape of a request (pure but for the parse cache). */
  shapeOf(r: Pick<SeenRequest, 'method' | 'route' | 'query' | 'bodyKeys' | 'question'>, refused = false): Shape {
    const ck = questionKey([refused ? 'refused' : '', r.method, r.route, r.question, ...(r.bodyKeys ?? [])]);
    const known = this.shapes.get(ck);
    if (known) return known.shape;
    const raw = (r.query ?? {}) as Record<string, unknown>;
    const params = Object.keys(raw);
    const place = { method: r.method, route: r.route, params };
    const { resource } = resourceOfRoute(r.route, this.o.schemas);
    const schema: ResourceSchema | undefined = resource ? own(this.o.schemas, resource) : undefined;
    const reads = r.method === 'GET' || r.method === 'SEARCH';
    let shape: Shape;
    if (!schema || !reads) shape = shapeOf(place, null, this.o.schemas, { bodyKeys: r.bodyKeys ?? [] });
    else {
      let q: QueryNode | null = null;
      try {
        q = refused ? null : parseQuery(raw, schema, { schemas: this.o.schemas, dynamic: NO_DYNAMIC, limitDefault: this.o.limitDefault });
      } catch {
        q = null;
      }
      shape = shapeOf(place, q, this.o.schemas, q ? {} : { invalid: true });
    }
    const bytes = shapeBytes(shape) + ck.length;
    // the cache holds at most a quarter of the bound: waiting questions come first
    if (bytes <= this.maxHeld / 4) {
      for (const [k, v] of this.shapes) {
        if (this.shapesBytes + bytes <= this.maxHeld / 4) break;
        this.shapes.delete(k);
        this.shapesBytes -= v.bytes;
      }
      this.shapes.set(ck, { shape, bytes });
      this.shapesBytes += bytes;
    }
    return shape;
  }

  async flush(): Promise<void> {
    const batch = [...this.pending.values()];
    this.pending = new Map();
    this.pendingBytes = 0;
    const agents = [...this.agents].flatMap(([client, m]) => [...m].map(([agent, a]) => ({ client, agent, ...a })));
    this.agents = new Map();
    if (agents.length > 0) await this.store.applyAgents(agents);
    const rows = new Map<string, ShapeDelta>();
    for (const e of batch) {
      const shape = e.shape ?? this.shapeOf({ ...e.seen, question: e.seen.question ?? '', query: e.seen.query });
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
    const deltas = [...rows.values()];
    await this.store.prune(this.now() - this.o.retentionMs, this.o.perClient, new Set(deltas.map((d) => d.client)), new Set(deltas.map((d) => d.userId)));
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }
}
