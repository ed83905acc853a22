import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { execute, type Execution } from '../../src/exec/execute.js';
import type { RecordSource, Walked } from '../../src/exec/source.js';
import type { MergeSource } from '../../src/plan/merge.js';
import { planQuery, type Plan } from '../../src/plan/plan.js';
import { unlimited } from '../../src/query/budget.js';
import type { Rec } from '../../src/query/compile.js';
import { parseQuery } from '../../src/query/parse-query.js';
import type { ResourceSchema } from '../../src/query/schema.js';
import { RawJson } from '../../src/exec/raw-json.js';
import { ctx, mappings, schemas } from '../query/fixtures.js';

const P = ['aaaaaaaa-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000002', 'aaaaaaaa-0000-4000-8000-000000000003'];
const A = 'bbbbbbbb-0000-4000-8000-000000000001';
const STATUSES = ['draft', 'ready', 'processing', 'complete', 'failed'];
const TITLES = ['alpha', 'Beta', 'beta', 'gamma', 'Ünïcødé', 'zeta', 'Alpha render'];

interface Seed { project: number; status: number; title: number; at: number }
const render = (s: Seed, i: number): Rec => ({
  id: `cccccccc-0000-4000-8000-${String(i).padStart(12, '0')}`, user_created: null, date_updated: null, process_id: null, playback_id: null,
  download_ready: false, data: {}, output: null, account: A, project: P[s.project], status: STATUSES[s.status], title: TITLES[s.title],
  // few distinct instants: many ties, which the executor must order by the query's own rule
  date_created: new Date(Date.UTC(2026, 0, 1) + s.at * 60_000).toISOString(),
});

/**
 * A record source over plain records, as the executor sees any source: batches of a chosen size, runs per project in
 * date order with ties in an arbitrary order, refs of its own, and a log of what was prepared and remembered.
 */
class ArraySource implements RecordSource {
  readonly kind = 'live';
  readonly nestedLimit = 25;
  readonly remembered: string[] = [];
  readonly prepared: string[] = [];
  constructor(private readonly recs: Rec[], private readonly batch: number, readonly compactAfter: number, private readonly shuffle: number) {}
  one(resource: string, id: string): Rec | undefined { return resource === 'render' ? this.recs.find((r) => r.id === id) : undefined; }
  many(): readonly Rec[] { return []; }
  manyAll(): readonly Rec[] { return []; }
  async settle<T>(evaluate: () => T): Promise<T> { return evaluate(); }
  ref(rec: Rec): string { return `ref:${rec.id as string}`; }
  private scope(plan: Plan): Rec[] {
    return this.recs.filter((r) => (!plan.scope.projects || plan.scope.projects.includes(r.project as string)) && (!plan.ids || plan.ids.includes(r.id as string)));
  }
  async byIds(_resource: string, plan: Plan): Promise<Rec[]> { return this.scope(plan); }
  async walk<T extends { readonly at: number }>(plan: Plan, _withData: boolean, convert: (batch: Walked[]) => Promise<T[]>): Promise<MergeSource<T>[]> {
    const asc = plan.pushdown.order === 'asc';
    return P.map((p) => {
      const at = (r: Rec) => Date.parse(r.date_created as string);
      // ties in an order of the source's own (a rotation by `shuffle`), not the query's
      const rows = this.scope(plan).filter((r) => r.project === p)
        .map((r, i) => ({ r, k: (i * 7 + this.shuffle) % 11 }))
        .sort((x, y) => (asc ? at(x.r) - at(y.r) : at(y.r) - at(x.r)) || x.k - y.k).map((x) => x.r);
      let i = 0;
      let buf: T[] = [];
      let j = 0;
      return {
        head: () => buf[j],
        peek: async () => {
          while (j >= buf.length && i < rows.length) {
            const slice = rows.slice(i, i + this.batch);
            i += slice.length;
            buf = await convert(slice.map((rec) => ({ rec, at: at(rec), ref: this.ref(rec) })));
            j = 0;
          }
          return buf[j];
        },
        shift: () => buf[j++],
      };
    });
  }
  async scan(_resource: string, plan: Plan, _withData: boolean, take: (batch: readonly Rec[]) => Promise<void> | void): Promise<number> {
    const all = this.scope(plan);
    for (let i = 0; i < all.length; i += this.batch) await take(all.slice(i, i + this.batch));
    return all.length;
  }
  async total(): Promise<number> { return this.recs.length; }
  async prepare(recs: readonly Rec[]): Promise<Rec[]> { this.prepared.push(...recs.map((r) => r.id as string)); return [...recs]; }
  remember(_resource: string, refs: readonly string[]): void { this.remembered.push(...refs); }
  async flush(): Promise<void> {}
  describe() { return { kind: 'live' as const, ageMs: 0, calls: [] }; }
}

/** The reference: a plain evaluator of the rules the generated queries use, written out here (not the gateway's). */
const collator = new Intl.Collator('en', { sensitivity: 'variant' });
interface Case { status?: string[]; project?: string; title?: string; sort: string; limit: number; offset: number; meta?: string }
function reference(all: Rec[], c: Case): { data: string[]; meta?: Record<string, number> } {
  const kept = all.filter((r) => (!c.status || c.status.includes(r.status as string)) && (!c.project || r.project === c.project)
    && (!c.title || (r.title as string).toLowerCase().includes(c.title.toLowerCase())));
  const keys = c.sort.split(',').map((k) => ({ f: k.replace(/^-/, ''), desc: k.startsWith('-') }));
  kept.sort((a, b) => {
    for (const { f, desc } of keys) {
      const x = a[f] as string;
      const y = b[f] as string;
      const d = f === 'title' || f === 'status' ? collator.compare(x, y) : x < y ? -1 : x > y ? 1 : 0;
      if (d !== 0) return desc ? -d : d;
    }
    return (a.id as string) < (b.id as string) ? -1 : 1;
  });
  const page = c.limit === -1 ? kept.slice(c.offset) : kept.slice(c.offset, c.offset + c.limit);
  const meta = c.meta ? { [c.meta]: c.meta === 'total_count' ? all.length : kept.length } : undefined;
  return { data: page.map((r) => r.id as string), ...(meta ? { meta } : {}) };
}

const query = (c: Case): Record<string, unknown> => ({
  fields: 'id', sort: c.sort, limit: String(c.limit), offset: String(c.offset), ...(c.meta ? { meta: c.meta } : {}),
  filter: JSON.stringify({
    _and: [
      ...(c.status ? [{ status: { _in: c.status } }] : []),
      ...(c.project ? [{ project: { _eq: c.project } }] : []),
      ...(c.title ? [{ title: { _icontains: c.title } }] : []),
    ],
  }),
});

async function run(source: RecordSource, c: Case): Promise<{ data: string[]; meta?: Record<string, number>; plan: Plan; how?: Execution }> {
  const q = parseQuery(query(c), schemas.render as ResourceSchema, ctx());
  const plan = planQuery(q, 'render', { statusToV1: mappings.status.toV1, schemas });
  let how: Execution | undefined;
  const result = await execute('render', q, plan, source, { schemas, budget: unlimited(), report: (h) => { how = h; } });
  const items: unknown[] = [...result.data];
  if (result.stream) for await (const x of result.stream) items.push(x);
  const data = items.map((x) => ((x instanceof RawJson ? JSON.parse(Buffer.from(x.json).toString()) : x) as { id: string }).id);
  return { data, ...(result.meta ? { meta: result.meta } : {}), plan, ...(how ? { how } : {}) };
}

const seed = fc.record({ project: fc.nat(2), status: fc.nat(4), title: fc.nat(TITLES.length - 1), at: fc.nat(12) });
const kase = fc.record({
  status: fc.option(fc.subarray(STATUSES, { minLength: 1 }), { nil: undefined }),
  project: fc.option(fc.constantFrom(...P), { nil: undefined }),
  title: fc.option(fc.constantFrom('a', 'be', 'ü', 'zz'), { nil: undefined }),
  sort: fc.constantFrom('-date_created', 'date_created', 'title', '-title,date_created', 'status,-date_created', '-date_created,-id'),
  limit: fc.oneof(fc.integer({ min: 1, max: 30 }), fc.constant(-1)),
  offset: fc.nat(25),
  meta: fc.option(fc.constantFrom('filter_count', 'total_count'), { nil: undefined }),
});

describe('the executor over a record source', () => {
  it('answers as the reference does, whatever the batch size, the compaction point and the order of ties in a run', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(seed, { maxLength: 70 }), kase, fc.integer({ min: 1, max: 9 }), fc.constantFrom(0, 4, Number.POSITIVE_INFINITY), fc.nat(10),
        async (seeds, c, batch, compactAfter, shuffle) => {
          const recs = seeds.map(render);
          const source = new ArraySource(recs, batch, compactAfter, shuffle);
          const got = await run(source, c);
          const want = reference(recs, c);
          expect(got.data).toEqual(want.data);
          expect(got.meta).toEqual(want.meta);
          // exactly the answered renders have their pairs recorded (a scan may prepare more: a batch's worth)
          expect(new Set(source.remembered)).toEqual(new Set(want.data.map((id) => `ref:${id}`)));
          for (const id of want.data) expect(source.prepared).toContain(id);
        }),
      { numRuns: 400 },
    );
  });

  it('walks the date order when the plan merges, and stops reading once the page is settled', async () => {
    const recs = Array.from({ length: 300 }, (_, i) => render({ project: i % 3, status: i % 5, title: i % 7, at: i }, i));
    const source = new ArraySource(recs, 10, Number.POSITIVE_INFINITY, 0);
    const got = await run(source, { sort: '-date_created', limit: 5, offset: 3 });
    expect(got.plan.strategy).toBe('merge');
    expect(got.how?.strategy).toBe('newest-first walk');
    expect(got.data).toEqual(reference(recs, { sort: '-date_created', limit: 5, offset: 3 }).data);
    // three runs, a batch of ten each read (the next batch only if its run still leads): far fewer than 300 tested
    expect(got.how!.tested).toBeLessThanOrEqual(40);
    expect(got.how!.matched).toBe(8);
    const asc = await run(source, { sort: 'date_created', limit: 4, offset: 0 });
    expect(asc.how?.strategy).toBe('oldest-first walk');
    expect(asc.data).toEqual(reference(recs, { sort: 'date_created', limit: 4, offset: 0 }).data);
  });

  it('keeps a top-k, not the whole scope, for a page of a large scan; a small scope is sorted whole', async () => {
    const recs = Array.from({ length: 5000 }, (_, i) => render({ project: i % 3, status: i % 5, title: i % 7, at: i % 13 }, i));
    const source = new ArraySource(recs, 700, Number.POSITIVE_INFINITY, 0);
    const top = await run(source, { sort: 'title', limit: 10, offset: 20, meta: 'filter_count' });
    expect(top.how).toEqual({ strategy: 'top-k over the scope', tested: 5000, matched: 5000 });
    expect(top.data).toEqual(reference(recs, { sort: 'title', limit: 10, offset: 20 }).data);
    expect(top.meta).toEqual({ filter_count: 5000 });
    const whole = await run(new ArraySource(recs.slice(0, 50), 7, Number.POSITIVE_INFINITY, 0), { sort: 'title', limit: 10, offset: 0 });
    expect(whole.how?.strategy).toBe('sort of the scope');
  });

  it('aggregates over the matches; a status with no v1 counterpart reads nothing and still counts the scope', async () => {
    const recs = Array.from({ length: 40 }, (_, i) => render({ project: i % 3, status: i % 5, title: i % 7, at: i }, i));
    const source = new ArraySource(recs, 6, 4, 0);
    const q = parseQuery({ aggregate: JSON.stringify({ count: '*' }), groupBy: 'status', sort: 'status' }, schemas.render as ResourceSchema, ctx());
    const plan = planQuery(q, 'render', { statusToV1: mappings.status.toV1, schemas });
    const result = await execute('render', q, plan, source, { schemas, budget: unlimited() });
    expect(result.data).toEqual(STATUSES.slice().sort().map((s) => ({ status: s, count: '8' })));
    expect(source.remembered).toEqual([]); // no render uuid is answered
    // an aggregate's sort names its aggregates, not a record field: it orders the groups
    const byCount = parseQuery({ aggregate: JSON.stringify({ count: '*' }), groupBy: 'project', sort: '-count' }, schemas.render as ResourceSchema, ctx());
    const counted = await execute('render', byCount, planQuery(byCount, 'render', { statusToV1: mappings.status.toV1, schemas }), source, { schemas, budget: unlimited() });
    expect((counted.data as { count: string }[]).map((r) => Number(r.count))).toEqual([14, 13, 13]);
    const none = parseQuery({ filter: JSON.stringify({ status: { _eq: 'no-such-status' } }), meta: 'total_count' }, schemas.render as ResourceSchema, ctx());
    const nothing = await execute('render', none, planQuery(none, 'render', { statusToV1: mappings.status.toV1, schemas }), new ArraySource(recs, 6, Infinity, 0), { schemas, budget: unlimited() });
    expect(nothing).toEqual({ meta: { total_count: 40 }, data: [] });
  });
});
