import { TextWork } from '../query/like.js';
import { traitsOf } from '../query/resources.js';
import type { FilterNode, QueryNode, SelectNode } from '../query/ast.js';
import { aggregateRows, aggregateRowsInTurns, aggregatesJson } from '../query/aggregate.js';
import { pace } from '../lib/pace.js';
import { compileFilter, compileSort, type Lookup, type Rec } from '../query/compile.js';
import { compileSearch, withSearch } from '../query/search.js';
import { fieldsToSelect } from '../query/fields-used.js';
import { compileProjection, selectsRelations, type Projector } from '../query/project.js';
import { buildMeta, effectiveSort, type QueryResult } from '../query/run.js';
import type { ResourceSchema } from '../query/schema.js';
import type { Plan } from '../plan/plan.js';
import { Best } from './best.js';
import { AnswerParts, CHUNK, itemsOf, keptJsonStream } from './answer-parts.js';
import { countOnColumns } from './column-count.js';
import { mergedPage, pick } from './merged-page.js';
import type { ExecContext, Execution } from './execution.js';
import { RawJson } from './raw-json.js';
import type { ColumnScan, RecordSource } from './source.js';

/** Past this many items an answer is written as a stream, a chunk at a time. */
const STREAM_AFTER = 2000;
/** Candidates whose relational sort keys are read between two looks at the event loop (held records). */
const TOUCH_SLICE = 128;

const turn = () => new Promise<void>((r) => setImmediate(r));

/** Relations answered by nothing (a comparison of root fields reads none). */
const NO_LOOKUP: Lookup = { one: () => undefined, many: () => [] };
/** Matches a filter_count pass keeps to answer the page itself (sorted: a thousand records in well under a millisecond). */
const FEW_MATCHES = 1_000;

/**
 * Runs a compiled plan against a record source — the replica or live v1 — the same way for both: the plan's strategy
 * (`direct`: by id; `merge`: the scope's date-ordered runs merged, stopping once offset + limit are settled; `scan`:
 * every record of the scope, filtered as it arrives, keeping only what the answer can still contain), then
 * aggregation or the page, made ready by the source (data, fresh signed URLs, id pairs) and projected.
 */
export function execute(resource: string, q: QueryNode, plan: Plan, source: RecordSource, ctx: ExecContext): Promise<QueryResult> {
  const job = new Job(resource, q, plan, source, ctx);
  // (a status filter no v1 status stands for: nothing to read — only a streamed resource has statuses in its plan)
  if (plan.statuses && plan.statuses.length === 0) return job.scan(async () => 0);
  if (plan.strategy === 'direct') {
    return job.scan(async (take) => {
      const recs = await source.byIds(resource, plan);
      await take(recs);
      return recs.length;
    });
  }
  if (plan.strategy === 'merge') return job.walk();
  return job.scan((take) => source.scan(resource, plan, job.withData, take), true);
}

type Feed = (take: (batch: readonly Rec[]) => Promise<void>) => Promise<number>;

/** One execution: the query compiled once against its source. */
class Job {
  private readonly schema: ResourceSchema;
  /** The request's text tests' work, one budget for all of them (query/like.ts). */
  private readonly work = new TextWork();
  private keep: (r: Rec) => boolean;
  /** The filter is answered on the source's columns: the feed gives only the records passing it. */
  private onColumns = false;
  private compiledSort?: (a: Rec, b: Rec) => number;
  private compiledProjection?: Projector;
  private compiledShape?: (r: Rec) => unknown;
  private readonly whole: boolean;
  readonly withData: boolean;
  /**
   * The selection expands relations: an item's JSON may be many times its record (a project's renders in each of its
   * renders), so records wait as records and are shaped as the answer is written — never every item's bytes at once.
   */
  private readonly expands: boolean;
  /** The items show render data (the client's own, up to MAX_PAYLOAD_BYTES a render). */
  private readonly showsData: boolean;
  private tested = 0;
  private matched = 0;
  /** Records made ready and projected a part at a time (`AnswerParts`). */
  readonly parts: AnswerParts;

  constructor(
    private readonly resource: string,
    private readonly q: QueryNode,
    private readonly plan: Plan,
    private readonly source: RecordSource,
    private readonly ctx: ExecContext,
  ) {
    const { schemas } = ctx;
    this.schema = schemas[resource] as ResourceSchema;
    const filter = compileFilter(q.filter, this.schema, schemas, source, this.work);
    const search = compileSearch(q.search, this.schema, this.work);
    this.keep = (r) => filter(r) && search(r);
    this.whole = q.aggregate.length > 0 || q.groupBy.length > 0;
    this.withData = fieldsToSelect(q, this.schema).has('data');
    this.expands = selectsRelations(q.fields, this.schema, schemas, q.alias);
    const root = (f: SelectNode) => (q.alias && Object.hasOwn(q.alias, f.path[0] as string) ? q.alias[f.path[0] as string] : f.path[0]);
    // (the values a render was created with: the one field the store keeps whole, read apart — RESOURCE_TRAITS' dataField)
    const data = traitsOf(resource).dataField;
    this.showsData = data !== null && q.fields.some((f) => root(f) === '*' || root(f) === data);
    this.parts = new AnswerParts(resource, source, ctx, () => this.shapeOne, this.expands);
  }

  /**
   * The query's order, compiled when a list needs it (an aggregate's `sort` names its groups and aggregates, which
   * aggregateRows orders: it is no record order).
   */
  private get cmp(): (a: Rec, b: Rec) => number {
    this.compiledSort ??= compileSort(effectiveSort(this.q, this.schema), this.schema, this.ctx.schemas, this.source, true);
    return this.compiledSort;
  }

  private get relationalSort(): boolean {
    return effectiveSort(this.q, this.schema).some((s) => s.field.path.length > 1 || s.field.fn === 'count');
  }

  private get project(): Projector {
    const { q, ctx, source } = this;
    this.compiledProjection ??= compileProjection(q.fields, this.schema, ctx.schemas, source, ctx.budget, {
      deep: q.deep, alias: q.alias, nestedLimit: source.nestedLimit,
    });
    return this.compiledProjection;
  }

  private async total(scanned: number): Promise<number> {
    return this.q.meta.includes('total_count') ? this.source.total(this.resource, this.plan, scanned) : scanned;
  }

  /**
   * A record as answered: projected, or — when the selection reads the record alone and the source keeps answered
   * records — the source's kept item (projected once, with its JSON text, until the record changes).
   */
  private get shapeOne(): (r: Rec) => unknown {
    if (!this.compiledShape) {
      const project = this.project;
      const { key } = project;
      const source = this.source;
      // a streamed answer's items are written once: only a page's are kept
      const page = this.q.limit !== -1 && this.q.offset + this.q.limit <= STREAM_AFTER;
      this.compiledShape = page && key !== undefined && source.shaped ? (r) => source.shaped!(r, key, project) : project;
    }
    return this.compiledShape;
  }

  /** Filter tests and sort comparisons, settled by the source (`settleTests` where it has one). */
  private tests<T>(evaluate: () => T): Promise<T> {
    return this.source.settleTests ? this.source.settleTests(evaluate) : this.source.settle(evaluate);
  }

  /**
   * A page of records answered: whole — or, when the caller writes the answer as it is read and the items may be large
   * (render data, relations expanded), as a stream projected a chunk, and within it a part, at a time (`lazy`).
   */
  private async page(recs: readonly Rec[], refs: readonly string[], meta: Record<string, number> | undefined): Promise<QueryResult> {
    if (!(this.ctx.lazy && (this.showsData || this.expands) && recs.length > 1)) {
      const data = await this.parts.answer(recs, refs);
      return meta ? { meta, data } : { data };
    }
    const stream = itemsOf(this.parts.inChunks(recs, refs));
    return meta ? { meta, data: [], stream, lazy: true } : { data: [], stream, lazy: true };
  }

  private refs(recs: readonly Rec[]): string[] {
    return recs.map((r) => this.source.ref(r));
  }

  private report(strategy: Execution['strategy']): void {
    this.ctx.report?.({ strategy, tested: this.tested, matched: this.matched });
  }

  /**
   * A scan (or the records by id): aggregated, or the best offset + limit kept as the batches arrive. A whole-scope scan
   * on a source keeping columns tests the filter there: counts are taken without records, else only matches are fed.
   */
  async scan(feed: Feed, wholeScope = false): Promise<QueryResult> {
    const { q, source, ctx } = this;
    // (the search with the filter: both tested on the columns when the search is one of their filters)
    const tested = withSearch(q.filter, q.search, this.schema);
    const compile = () => (wholeScope && tested !== undefined
      ? source.columns?.(this.resource, this.plan, tested, (node) => compileFilter(node, this.schema, ctx.schemas, source, this.work), this.work)
      : undefined);
    const cols = compile();
    if (cols) {
      const waited = { yes: false };
      const counted = this.whole ? await this.countOnColumns(cols) : await this.pageInOrder(cols, waited);
      if (counted) return counted;
      // a page that waited for an order being sorted, the sort dropped (rows removed, uuids or overlays changed
      // meanwhile): the filter and the scope are compiled again on the rows as they are now
      const now = (waited.yes ? compile() : undefined) ?? cols;
      this.onColumns = true;
      this.keep = () => true;
      feed = (take) => now.matches(take);
    }
    return this.whole ? this.aggregate(feed) : this.list(feed);
  }

  /** A page (not `limit=-1`) read from an order the source keeps sorted; filter_count counted on the columns. */
  private async pageInOrder(cols: ColumnScan, waited: { yes: boolean }): Promise<QueryResult | undefined> {
    const { q } = this;
    if (q.limit === -1 || !cols.inOrder) return undefined;
    // the source may keep the order's comparison past this request: it is compiled without the request's lookup
    const order = effectiveSort(q, this.schema);
    const cmp = compileSort(order, this.schema, this.ctx.schemas, NO_LOOKUP);
    const wanted = q.offset + q.limit;
    // filter_count reads every row of the scope: its pass keeps the matches while they are few, and the page is theirs,
    // sorted — a walk of the kept order would test every row again, in its order, before giving up (issue 44)
    const first = q.meta.includes('filter_count') && q.limit !== 0 && wanted <= FEW_MATCHES ? cols.countFirst?.(cmp, wanted, FEW_MATCHES) : undefined;
    if (first?.recs) {
      this.tested = first.tested;
      this.matched = first.matched;
      const meta = buildMeta(q, await this.total(this.tested), this.matched);
      this.report('page of the few matches');
      const recs = first.recs.slice(q.offset);
      return this.page(recs, this.refs(recs), meta);
    }
    // limit=0 (a count alone): no order is read, nor built
    const walked = q.limit === 0 ? { tested: 0, recs: [] } : await cols.inOrder(order, cmp, wanted);
    waited.yes = true;
    if (!walked) return undefined;
    const counted = first ?? (q.meta.includes('filter_count') ? cols.count() : undefined);
    this.tested = counted ? counted.tested : walked.tested;
    this.matched = counted ? counted.matched : walked.recs.length;
    const meta = buildMeta(q, await this.total(this.tested), this.matched);
    this.report('page of a kept order');
    const recs = walked.recs.slice(q.offset);
    return this.page(recs, this.refs(recs), meta);
  }

  /** `count` aggregates, grouped by at most two column fields, counted on the columns (undefined: not such a question). */
  private async countOnColumns(cols: ColumnScan): Promise<QueryResult | undefined> {
    const counted = countOnColumns(this.q, cols);
    if (!counted) return undefined;
    this.tested = counted.tested;
    this.matched = counted.matched;
    const meta = buildMeta(this.q, await this.total(counted.tested), this.matched);
    this.report('count on the columns');
    return meta ? { meta, data: counted.data } : { data: counted.data };
  }

  private async aggregate(feed: Feed): Promise<QueryResult> {
    const { q, source } = this;
    // held records (the replica) are kept as they are; fetched ones are reduced to the fields the selection reads
    const slim = Number.isFinite(source.compactAfter) ? [...fieldsToSelect(q, this.schema)] : null;
    // render uuids reach the answer only when grouped by, or aggregated over, the id
    const answersIds = q.groupBy.some((g) => g.path[0] === 'id') || q.aggregate.some((a) => a.field === 'id');
    const matched: Rec[] = [];
    const scanned = await feed(async (batch) => {
      this.tested += batch.length;
      const kept = await this.tests(() => batch.filter(this.keep));
      if (answersIds) source.remember(this.resource, this.refs(kept));
      for (const r of kept) matched.push(slim ? pick(r, slim) : r);
    });
    await source.flush();
    if (this.onColumns) this.tested = scanned;
    this.matched = matched.length;
    const meta = buildMeta(q, await this.total(scanned), matched.length);
    this.report(this.onColumns ? 'aggregate over the column matches' : 'aggregate over the scope');
    // (a json field is only counted — not null — in an aggregate: render data is read as the stand-in)
    const args = [matched, q.aggregate, q.groupBy, q.sort, q.limit, q.offset, this.schema, this.ctx.schemas, source, { numericStrings: true }] as const;
    // held records (nothing to fetch, no render data asked) are grouped a slice at a time, the event loop turning between
    const rows = !Number.isFinite(source.compactAfter) && !aggregatesJson(q.aggregate, q.groupBy, this.schema)
      ? await aggregateRowsInTurns(...args, pace)
      : await this.tests(() => aggregateRows(...args));
    return meta ? { meta, data: rows } : { data: rows };
  }

  private async list(feed: Feed): Promise<QueryResult> {
    const { q, source } = this;
    const everything = q.limit === -1;
    const wanted = everything ? Number.POSITIVE_INFINITY : q.offset + q.limit;
    // many wanted items from a source whose records are not held: candidates wait as sort keys and JSON bytes (not when
    // the selection expands relations — their bytes multiply — nor shows render data: records wait without it, and the
    // data is read as the answer is written)
    const compact = wanted > source.compactAfter && !this.expands && !this.showsData;
    // with limit=-1 from the first item, every match is answered: its pair is recorded as it is read
    const recordNow = everything && q.offset === 0;
    const keys = [...fieldsToSelect(q, this.schema)];
    type Candidate = { rec: Rec; ref: string; json?: RawJson };
    const best = new Best<Candidate>(wanted, (a, b) => this.cmp(a.rec, b.rec));
    // a sort through a relation reads related records: fetched (live) before the candidates are compared
    // (held records: a slice at a time, the event loop shared between — 38 keys over relations read for 21 000
    // candidates held it 0.7 s, attack pass 17, F3; a live source's misses are fetched for them all at once)
    const held = !Number.isFinite(source.compactAfter);
    const touch = this.relationalSort ? async (cs: readonly Candidate[]) => {
      const slice = held ? TOUCH_SLICE : cs.length;
      for (let i = 0; i < cs.length; i += slice) {
        await this.tests(() => { for (let j = i; j < Math.min(cs.length, i + slice); j++) this.cmp(cs[j]!.rec, cs[j]!.rec); });
        const step = held ? pace() : undefined;
        if (step) await step;
      }
    } : undefined;
    const scanned = await feed(async (batch) => {
      this.tested += batch.length;
      const bound = best.bound;
      let n = 0;
      const kept = await this.tests(() => {
        n = 0;
        const out: Rec[] = [];
        for (const r of batch) {
          if (!this.keep(r)) continue;
          n++;
          if (bound === undefined || this.cmp(r, bound.rec) < 0) out.push(r);
        }
        return out;
      });
      this.matched += n;
      if (compact) {
        const refs = this.refs(kept);
        const ready = await source.prepare(kept, refs, this.resource);
        if (recordNow) source.remember(this.resource, refs);
        const shaped = await this.parts.shape(ready);
        kept.forEach((r, i) => best.add({ rec: pick(r, keys), ref: recordNow ? '' : (refs[i] as string), json: RawJson.of(shaped[i]) }));
        if (recordNow) await source.flush();
      } else {
        for (const r of kept) best.add({ rec: r, ref: '' });
      }
      await best.pruneIfFull(touch);
    });
    await best.prune(touch);
    const chosen = best.items.slice(q.offset, everything ? undefined : q.offset + q.limit);
    best.clear();
    const meta = buildMeta(q, await this.total(scanned), this.matched);
    if (this.onColumns) this.tested = scanned;
    if (this.onColumns) this.report(best.pruned ? 'top-k over the column matches' : 'sort of the column matches');
    else this.report(best.pruned ? 'top-k over the scope' : 'sort of the scope');
    if (compact) return keptJsonStream(this.source, this.resource, chosen, recordNow, meta);
    const recs = chosen.map((c) => c.rec);
    if (recs.length <= STREAM_AFTER) return this.page(recs, this.refs(recs), meta);
    const stream = (async function* (job: Job) {
      for (let i = 0; i < recs.length; i += CHUNK) {
        const chunk = recs.slice(i, i + CHUNK);
        for await (const part of job.parts.answerParts(chunk, job.refs(chunk))) yield* part;
        await turn();
      }
    })(this);
    return meta ? { meta, data: [], stream } : { data: [], stream };
  }

  /**
   * The scope's runs, each already in date order, merged: items are settled a whole timestamp at a time (ties ordered
   * by the query's own order), filtered a batch at a time as runs are read, and reading stops once offset + limit are
   * settled. With `limit=-1` the answer streams and each batch waits as JSON bytes, not objects.
   */
  async walk(): Promise<QueryResult> {
    const { q, plan, source } = this;
    const desc = (plan.pushdown.order ?? 'desc') === 'desc';
    const all = q.limit === -1;
    // every item, waiting as JSON bytes until merged — unless the selection expands relations or shows render data
    // (records wait then, and are shaped a part at a time as they are written: a batch of 128 renders' data was 112 MB)
    const lazyAll = all && !this.expands && !this.showsData;
    type Entry = { at: number; rec: Rec; ref: string; json?: RawJson };
    // the source may test the filter (and a search that is one) on its rows before building records
    const tested = withSearch(q.filter, q.search, this.schema);
    const compile = (node: FilterNode) => compileFilter(node, this.schema, this.ctx.schemas, source, this.work);
    const rows = tested === undefined ? undefined : { filter: tested, compile, work: this.work };
    const runs = await source.walk<Entry>(plan, this.withData, async (batch, tested) => {
      this.tested += tested ?? batch.length;
      const kept = await this.tests(() => batch.filter((w) => this.keep(w.rec)));
      if (!lazyAll) return kept;
      const ready = await source.prepare(kept.map((k) => k.rec), kept.map((k) => k.ref), this.resource);
      const shaped = await this.parts.shape(ready);
      // only what ordering needs stays on the heap; the answer itself waits as bytes
      return kept.map((k, i) => ({ at: k.at, rec: pick(k.rec, ['id', 'date_created']), ref: k.ref, json: RawJson.of(shaped[i]) }));
    }, rows);
    const strategy = desc ? 'newest-first walk' : 'oldest-first walk';
    const job = this;
    const limit = all ? Number.MAX_SAFE_INTEGER : q.limit;
    const picked = mergedPage(runs, desc, (a, b) => job.cmp(a.rec, b.rec), q.offset, limit, () => { job.matched++; });
    if (!all) {
      const entries: Entry[] = [];
      for await (const batch of picked) for (const e of batch) entries.push(e);
      this.report(strategy);
      return this.page(entries.map((e) => e.rec), entries.map((e) => e.ref), undefined);
    }
    const merged = (async function* () {
      for await (const out of picked) {
        const refs = out.map((e) => e.ref);
        if (!lazyAll) {
          for await (const part of job.parts.answerParts(out.map((e) => e.rec), refs)) yield* part;
          continue;
        }
        source.remember(job.resource, refs);
        await source.flush();
        for (const e of out) yield e.json as RawJson;
      }
    })();
    this.report(strategy);
    return { data: [], stream: merged };
  }
}
