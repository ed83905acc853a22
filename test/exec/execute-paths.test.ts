import { describe, expect, it } from 'vitest';
import { Best } from '../../src/exec/best.js';
import { execute } from '../../src/exec/execute.js';
import type { Execution } from '../../src/exec/execution.js';
import { RawJson } from '../../src/exec/raw-json.js';
import { planQuery } from '../../src/plan/plan.js';
import { unlimited } from '../../src/query/budget.js';
import type { Rec } from '../../src/query/compile.js';
import { parseQuery } from '../../src/query/parse-query.js';
import type { QueryResult } from '../../src/query/run.js';
import type { ResourceSchema } from '../../src/query/schema.js';
import { ctx, mappings, schemas } from '../query/fixtures.js';
import { ArraySource, P, reference, render, run } from './support.js';

/** The executor's paths a small property test does not reach: long answers, ids answered by aggregates, relations. */

const many = (n: number) => Array.from({ length: n }, (_, i) => render({ project: i % 3, status: i % 5, title: (i * 7) % 7, at: i % 97 }, i));

async function ask(source: ArraySource, raw: Record<string, unknown>): Promise<{ result: QueryResult; items: unknown[]; how?: Execution }> {
  const q = parseQuery(raw, schemas.render as ResourceSchema, ctx());
  let how: Execution | undefined;
  const result = await execute('render', q, planQuery(q, 'render', { statusToV1: mappings.status.toV1, schemas }), source, {
    schemas, budget: unlimited(), report: (h) => { how = h; },
  });
  const items: unknown[] = [...result.data];
  if (result.stream) for await (const x of result.stream) items.push(x instanceof RawJson ? JSON.parse(Buffer.from(x.json).toString()) : x);
  return { result, items, ...(how ? { how } : {}) };
}

const ids = (items: unknown[]) => items.map((x) => (x as { id: string }).id);

describe('long answers', () => {
  it('a sorted scan past 2 000 items streams in chunks, each made ready and its ids recorded before it is written', async () => {
    const recs = many(2600);
    const source = new ArraySource(recs, 700, Number.POSITIVE_INFINITY, 0);
    const { result, items, how } = await ask(source, { sort: 'title', limit: '-1', fields: 'id' });
    expect(result.data).toEqual([]);
    expect(result.stream).toBeDefined();
    expect(ids(items)).toEqual(reference(recs, { sort: 'title', limit: -1, offset: 0 }).data);
    expect(how).toEqual({ strategy: 'sort of the scope', tested: 2600, matched: 2600 });
    expect(source.remembered.sort()).toEqual(recs.map((r) => `ref:${r.id as string}`).sort());
    expect(new Set(source.prepared).size).toBe(2600);
  });

  it('a page of exactly 2 000 items is answered whole, one past it streams', async () => {
    const recs = many(2400);
    const whole = await ask(new ArraySource(recs, 500, Number.POSITIVE_INFINITY, 0), { sort: 'title', limit: '2000', fields: 'id' });
    expect(whole.result.stream).toBeUndefined();
    expect(whole.items).toHaveLength(2000);
    const streamed = await ask(new ArraySource(recs, 500, Number.POSITIVE_INFINITY, 0), { sort: 'title', limit: '2001', fields: 'id' });
    expect(streamed.result.stream).toBeDefined();
    expect(ids(streamed.items)).toEqual(reference(recs, { sort: 'title', limit: 2001, offset: 0 }).data);
  });

  it('a compact scan (many wanted from a source that holds nothing) records a deep page\'s ids only when written', async () => {
    const recs = many(900);
    const source = new ArraySource(recs, 64, 100, 0);
    const { items, result } = await ask(source, { sort: '-title', limit: '20', offset: '600', fields: 'id' });
    expect(result.stream).toBeDefined();
    const want = reference(recs, { sort: '-title', limit: 20, offset: 600 }).data;
    expect(ids(items)).toEqual(want);
    expect(source.remembered.sort()).toEqual(want.map((id) => `ref:${id}`).sort());
    // limit=-1 from the first item: every match is recorded as it is read
    const all = new ArraySource(recs, 64, 100, 0);
    const everything = await ask(all, { sort: '-title', limit: '-1', fields: 'id' });
    expect(ids(everything.items)).toEqual(reference(recs, { sort: '-title', limit: -1, offset: 0 }).data);
    expect(all.remembered).toHaveLength(900);
  });

  it('a walk with limit=-1 streams every match as bytes, ids recorded; a page past a chunk is written twice and stays exact', async () => {
    const recs = many(1300);
    const source = new ArraySource(recs, 50, Number.POSITIVE_INFINITY, 3);
    const all = await ask(source, { limit: '-1', fields: 'id,title', filter: JSON.stringify({ status: { _neq: 'failed' } }) });
    expect(all.how?.strategy).toBe('newest-first walk');
    const want = reference(recs, { sort: '-date_created', limit: -1, offset: 0, status: ['draft', 'ready', 'processing', 'complete'] }).data;
    expect(ids(all.items)).toEqual(want);
    expect(all.items[0]).toEqual({ id: want[0], title: recs.find((r) => r.id === want[0])!.title });
    expect(source.remembered.sort()).toEqual(want.map((id) => `ref:${id}`).sort());
    const page = new ArraySource(recs, 50, Number.POSITIVE_INFINITY, 3);
    const long = await ask(page, { sort: 'date_created', limit: '700', offset: '10', fields: 'id' });
    expect(long.how).toMatchObject({ strategy: 'oldest-first walk', matched: 710 });
    expect(ids(long.items)).toEqual(reference(recs, { sort: 'date_created', limit: 700, offset: 10 }).data);
    expect(page.remembered).toHaveLength(700);
    // with an offset, limit=-1 skips without answering what it skips
    const skipped = new ArraySource(recs, 50, Number.POSITIVE_INFINITY, 3);
    const rest = await ask(skipped, { limit: '-1', offset: '1250', fields: 'id' });
    expect(ids(rest.items)).toEqual(reference(recs, { sort: '-date_created', limit: -1, offset: 1250 }).data);
    expect(skipped.remembered).toHaveLength(50);
  });
});

describe('what the executor asks of its source, in order', () => {
  it('a streamed scan makes each chunk of at most 500 ready, records it and writes the pairs, before the next', async () => {
    const source = new ArraySource(many(2300), 1000, Number.POSITIVE_INFINITY, 0);
    await ask(source, { sort: 'title', limit: '-1', fields: 'id' });
    expect(source.events).toEqual(['scan data=false', ...[500, 500, 500, 500, 300].flatMap((n) => [`prepare ${n}`, `remember ${n}`, 'flush'])]);
  });

  it('a page answered whole: one prepare, its ids recorded and written once', async () => {
    const source = new ArraySource(many(40), 7, Number.POSITIVE_INFINITY, 0);
    const { how } = await ask(source, { sort: 'title', limit: '10', fields: 'id' });
    expect(source.events).toEqual(['scan data=false', 'prepare 10', 'remember 10', 'flush']);
    expect(how).toEqual({ strategy: 'sort of the scope', tested: 40, matched: 40 });
  });

  it('a walk: limit=-1 answers kept as bytes, each batch made ready as it is read, the pairs written per chunk', async () => {
    const all = new ArraySource(many(1200), 400, Number.POSITIVE_INFINITY, 0);
    await ask(all, { limit: '-1', fields: 'id' });
    // the walk is told whether its evaluation reads render data (a filter on it): here not; the records are made ready
    // (data read, by the live source) with each batch
    expect(all.events[0]).toBe('walk data=false');
    const tested = new ArraySource(many(30), 400, Number.POSITIVE_INFINITY, 0);
    await ask(tested, { limit: '-1', fields: 'id', filter: JSON.stringify({ data: { _nnull: true } }) });
    expect(tested.events[0]).toBe('walk data=true');
    expect(all.events.filter((e) => e.startsWith('prepare')).reduce((n, e) => n + Number(e.split(' ')[1]), 0)).toBe(1200);
    const writes = all.events.filter((e) => e.startsWith('remember'));
    // a chunk is written once it holds 500 (after the whole timestamp that filled it: ties stay together)
    const sizes = writes.map((e) => Number(e.split(' ')[1]));
    expect(sizes).toHaveLength(3);
    for (const n of sizes.slice(0, 2)) expect(n).toBeGreaterThanOrEqual(500);
    for (const n of sizes.slice(0, 2)) expect(n).toBeLessThan(520);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(1200);
    expect(all.events.at(-1)).toBe('flush');
    const page = new ArraySource(many(1200), 400, Number.POSITIVE_INFINITY, 0);
    const { how } = await ask(page, { limit: '3', fields: 'id' });
    expect(page.events).toEqual(['walk data=false', 'prepare 3', 'remember 3', 'flush']);
    expect(how).toEqual({ strategy: 'newest-first walk', tested: 1200, matched: 3 });
  });

  it('a compact deep page records its ids a chunk at a time as it writes them (nothing before), its meta beside the stream', async () => {
    const source = new ArraySource(many(1500), 300, 100, 0);
    const { result } = await ask(source, { sort: 'title', limit: '600', offset: '100', fields: 'id', meta: 'filter_count' });
    expect(source.events.filter((e) => e.startsWith('remember') || e === 'flush')).toEqual(['remember 500', 'flush', 'remember 100', 'flush']);
    expect(result.meta).toEqual({ filter_count: 1500 });
    expect(result.data).toEqual([]);
    // limit=-1 from the first item: each batch's ids recorded and written as it is read, before the next batch
    const all = new ArraySource(many(700), 300, 100, 0);
    await ask(all, { sort: 'title', limit: '-1', fields: 'id' });
    expect(all.events).toEqual(['scan data=false', ...[300, 300, 100].flatMap((n) => [`prepare ${n}`, `remember ${n}`, 'flush'])]);
  });

  it('a top-k keeps the best wherever they arrive: the last batch holds them', async () => {
    // titles fall as ids rise: the best for sort=title arrive last, after the buffer was cut back
    const recs: Rec[] = Array.from({ length: 4000 }, (_, i) => ({ ...render({ project: i % 3, status: i % 5, title: 0, at: i % 50 }, i), title: `t${String(9999 - i).padStart(4, '0')}` }));
    const { items, how } = await ask(new ArraySource(recs, 500, Number.POSITIVE_INFINITY, 0), { sort: 'title', limit: '15', offset: '5', fields: 'id' });
    expect(how?.strategy).toBe('top-k over the scope');
    expect(ids(items)).toEqual(recs.slice().reverse().slice(5, 20).map((r) => r.id));
  });
});

describe('ids answered by aggregates, by id, and nothing to read', () => {
  it('an aggregate grouped by id records the matched renders\' ids; one over another field records none', async () => {
    const recs = many(60);
    const byId = new ArraySource(recs, 7, 10, 0);
    const grouped = await ask(byId, { aggregate: JSON.stringify({ count: '*' }), groupBy: 'id', filter: JSON.stringify({ status: { _eq: 'complete' } }), limit: '-1' });
    const complete = recs.filter((r) => r.status === 'complete');
    expect(grouped.items).toHaveLength(complete.length);
    expect(byId.remembered.sort()).toEqual(complete.map((r) => `ref:${r.id as string}`).sort());
    const counted = new ArraySource(recs, 7, 10, 0);
    await ask(counted, { aggregate: JSON.stringify({ countDistinct: 'id' }), limit: '-1' });
    expect(counted.remembered).toHaveLength(60); // aggregated over the id: answered too
    const other = new ArraySource(recs, 7, 10, 0);
    const { how } = await ask(other, { aggregate: JSON.stringify({ count: '*' }), groupBy: 'status' });
    expect(other.remembered).toEqual([]);
    expect(how).toEqual({ strategy: 'aggregate over the scope', tested: 60, matched: 60 });
    const plain = new ArraySource(recs, 7, 10, 0);
    await ask(plain, { aggregate: JSON.stringify({ count: '*' }) });
    expect(plain.remembered).toEqual([]);
    // one of two aggregates over the id is enough
    const both = new ArraySource(recs, 7, 10, 0);
    await ask(both, { aggregate: JSON.stringify({ count: '*', countDistinct: 'id' }), groupBy: 'status' });
    expect(both.remembered).toHaveLength(60);
  });

  it('a groupBy alone answers the groups (Directus: distinct values), not records', async () => {
    const { items } = await ask(new ArraySource(many(25), 4, Number.POSITIVE_INFINITY, 0), { groupBy: 'status', sort: 'status' });
    expect(items).toEqual(['complete', 'draft', 'failed', 'processing', 'ready'].map((status) => ({ status })));
  });

  it('by id: only the ids asked, filtered, ordered and counted; total_count from the source', async () => {
    const recs = many(30);
    const source = new ArraySource(recs, 4, Number.POSITIVE_INFINITY, 0);
    const wanted = [recs[3]!, recs[17]!, recs[9]!].map((r) => r.id as string);
    const { items, result, how } = await ask(source, { filter: JSON.stringify({ id: { _in: wanted } }), sort: 'id', meta: 'total_count,filter_count', fields: 'id' });
    expect(ids(items)).toEqual([...wanted].sort());
    expect(result.meta).toEqual({ total_count: 30, filter_count: 3 });
    expect(how).toMatchObject({ tested: 3, matched: 3 });
    expect(source.scans).toBe(0);
  });

  it('a status filter no v1 status has reads nothing: an empty page, filter_count 0, the scope still counted', async () => {
    const source = new ArraySource(many(12), 4, Number.POSITIVE_INFINITY, 0);
    const { items, result, how } = await ask(source, { filter: JSON.stringify({ status: { _in: ['no-such'] } }), meta: '*' });
    expect(items).toEqual([]);
    expect(result.meta).toEqual({ total_count: 12, filter_count: 0 });
    expect(how).toMatchObject({ tested: 0 });
    expect(source.scans).toBe(0);
  });
});

/**
 * A source whose relations are fetched, as the live source's: a project record is known only after a `settle` round
 * asked for it (evaluations before that see none).
 */
class FetchingSource extends ArraySource {
  private readonly projects = new Map(P.map((id, i) => [id, { id, title: ['Zulu', 'alpha', 'Mike'][i], account: null } as Rec]));
  private readonly fetched = new Set<string>();
  private missed = new Set<string>();
  rounds = 0;
  /** What the look-ups answer moves with each round of fetched misses (`Lookup.version`, as the live source's). */
  get version(): number {
    return this.rounds;
  }
  override one(resource: string, id: string): Rec | undefined {
    if (resource !== 'project') return super.one(resource, id);
    if (this.fetched.has(id)) return this.projects.get(id);
    this.missed.add(id);
    return undefined;
  }
  override async settle<T>(evaluate: () => T): Promise<T> {
    for (;;) {
      this.missed = new Set();
      const out = evaluate();
      if (this.missed.size === 0) return out;
      this.rounds++;
      for (const id of this.missed) this.fetched.add(id);
    }
  }
}

describe('relations fetched as evaluation needs them', () => {
  it('a sort through a relation fetches the related records before comparing: the order is the related field\'s', async () => {
    const recs = many(40);
    const source = new FetchingSource(recs, 6, Number.POSITIVE_INFINITY, 0);
    const { items } = await ask(source, { sort: 'project.title,id', limit: '12', fields: 'id,project.title' });
    const title = (r: Rec) => ['Zulu', 'alpha', 'Mike'][P.indexOf(r.project as string)] as string;
    const collator = new Intl.Collator('en', { sensitivity: 'variant' });
    const want = [...recs].sort((a, b) => collator.compare(title(a), title(b)) || ((a.id as string) < (b.id as string) ? -1 : 1)).slice(0, 12);
    expect(ids(items)).toEqual(want.map((r) => r.id));
    expect((items[0] as { project: { title: string } }).project.title).toBe('alpha');
    expect(source.rounds).toBeGreaterThan(0);
    // a top-k over a relation: the buffer is pruned (and its bound used) only once its records' relations are at hand
    const big = many(3000);
    const deep = await ask(new FetchingSource(big, 400, Number.POSITIVE_INFINITY, 0), { sort: '-project.title,id', limit: '5', offset: '2', fields: 'id' });
    const wantDeep = [...big].sort((a, b) => -collator.compare(title(a), title(b)) || ((a.id as string) < (b.id as string) ? -1 : 1)).slice(2, 7);
    expect(ids(deep.items)).toEqual(wantDeep.map((r) => r.id));
    expect(deep.how?.strategy).toBe('top-k over the scope');
  });
});

describe('Best', () => {
  const cmp = (a: number, b: number) => a - b;
  it('has no bound until it is cut back; then its bound is the last item kept', async () => {
    const best = new Best<number>(3, cmp);
    for (const x of [9, 4, 7, 1, 8]) best.add(x);
    expect(best.bound).toBeUndefined();
    await best.pruneIfFull();
    expect(best.pruned).toBe(false); // far from full: 2 × 3 + 1024
    await best.prune();
    expect(best.items).toEqual([1, 4, 7]);
    expect(best.bound).toBe(7);
    expect(best.pruned).toBe(false); // a final cut is no top-k
  });

  it('cuts back once it holds twice the wanted count plus its slack, and not before', async () => {
    const best = new Best<number>(10, cmp);
    for (let i = 2 * 10 + 1024 - 1; i > 0; i--) best.add(i);
    await best.pruneIfFull();
    expect(best.items).toHaveLength(1043);
    best.add(0);
    await best.pruneIfFull();
    expect(best.pruned).toBe(true);
    expect(best.items).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(best.bound).toBe(9);
    best.clear();
    expect(best.items).toEqual([]);
    expect(best.bound).toBeUndefined();
  });

  it('readies the items for comparing before it sorts them', async () => {
    const best = new Best<number>(1, cmp);
    best.add(2);
    best.add(1);
    const seen: number[][] = [];
    await best.prune(async (items) => { seen.push([...items]); });
    expect(seen).toEqual([[2, 1]]);
    expect(best.items).toEqual([1]);
  });
});

describe('run (the shared helper) agrees with the reference on a simple page', () => {
  it('newest first, 5 of 50', async () => {
    const recs = many(50);
    const got = await run(new ArraySource(recs, 9, Number.POSITIVE_INFINITY, 1), { sort: '-date_created', limit: 5, offset: 0 });
    expect(got.data).toEqual(reference(recs, { sort: '-date_created', limit: 5, offset: 0 }).data);
  });
});
