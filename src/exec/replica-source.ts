import type { TextWork } from '../query/like.js';
import { traitsOf } from '../query/resources.js';
import type { CompareNode, FilterNode } from '../query/ast.js';
import type { Predicate, Rec } from '../query/compile.js';
import { compileColumnFilter, statusForm } from '../replica/team/column-filter.js';
import { RenderColumnScan, type TeamColumns } from '../replica/team/column-scan.js';
import { DataAtHand, readMissed, STAND_IN_HAND, withDataAtHand } from '../translate/data-at-hand.js';
import { RenderRecords, type RenderView } from '../replica/team/record-view.js';
import type { ReplicaSnapshot } from '../replica/reads/snapshot.js';
import type { MergeSource } from '../plan/merge.js';
import type { Plan } from '../plan/plan.js';
import { pace } from '../lib/pace.js';
import { ROUND_MS, TESTS_A_ROUND, TestTurn } from '../query/test-turn.js';
import { nextRound, stopIfGone, testInRounds } from './test-rounds.js';
import { CHUNK } from './answer-parts.js';
import type { ColumnScan, RecordSource, RowFilter, SourceDescription, Walked } from './source.js';

/** What the replica source is given by the read that uses it (signed URLs, id pairs, the clock). */
export interface ReplicaHooks {
  /** Called with the records about to be answered: signed URLs near expiry are refreshed. */
  readonly refresh: (recs: readonly Rec[], resource: string) => Promise<void>;
  /** Records the answered renders' uuid ↔ v1 pairs (so any instance resolves them). */
  readonly answered: (renderUuids: readonly string[]) => void;
  /** Writes the recorded pairs. */
  readonly flush: () => Promise<void>;
  /** The data the gateway sent for these renders (absent: none, `{}`), read from the store: the replica holds none. */
  readonly data: (v1Ids: readonly string[]) => Promise<ReadonlyMap<string, unknown>>;
  /** The stored size of these renders' data (absent: none), read without the data. */
  readonly dataSizes: (v1Ids: readonly string[]) => Promise<ReadonlyMap<string, number>>;
  /** Room for data being built (the key's and the instance's), waited for before it is read (`RenderDataReader.room`). */
  readonly room?: (bytes: number, holding: boolean) => Promise<() => void>;
  readonly now: number;
  /** The answer's end: once aborted (its client gone), a scan and its test rounds stop. */
  readonly gone?: AbortSignal;
}

/** Rounds of one evaluation that read render data missing from its hand, at most (each reads at least one render's). */
const DATA_ROUNDS = 16;

/** Rows a walk turns into records at a time: the first batch sized by the answer, each next one twice the last, up to the most. */
const WALK_BATCH_LEAST = 8;
const WALK_BATCH_MOST = 128;

/**
 * Records a scan hands on at a time; between batches (and between runs) it shares the event loop with `pace()`. A batch
 * of records tested against a costly filter is one turn: 16 384 of them (and every team's run under that, back to back)
 * held an instance 3 s for a 660-term relational `_or` (attack pass 13, H); 512 are a few tens of ms at that cost.
 */
const SCAN_BATCH = 512;

/** A row walked: its record's id (the name the executor records it by) is read only if it is answered. */
class WalkedRow implements Walked {
  constructor(readonly rec: Rec, readonly at: number) {}
  get ref(): string {
    return this.rec.id as string;
  }
}

/** One team's rows in a kept order, read a batch at a time as the merge pulls them. */
class RowRun<T> implements MergeSource<T> {
  private buffer: T[] = [];
  private at = 0;
  private i = 0;

  constructor(
    private readonly rows: readonly number[], private readonly next: (rows: readonly number[]) => Promise<T[]>, private size: number,
    private readonly gone?: AbortSignal,
  ) {}

  head(): T | undefined {
    return this.buffer[this.at];
  }

  async peek(): Promise<T | undefined> {
    while (this.at >= this.buffer.length && this.i < this.rows.length) {
      // a long walk shares the event loop a slice at a time
      const turn = this.i > 0 ? pace() : undefined;
      if (turn) await turn;
      if (this.i > 0) stopIfGone(this.gone);
      const slice = this.rows.slice(this.i, this.i + this.size);
      this.i += slice.length;
      this.size = Math.min(WALK_BATCH_MOST, this.size * 2);
      this.buffer = await this.next(slice);
      this.at = 0;
    }
    return this.head();
  }

  shift(): T | undefined {
    return this.buffer[this.at++];
  }
}

/**
 * The replica as a record source: the teams a request may read, held in memory. Relations are answered synchronously
 * (nothing outside these teams can be reached, so a miss is an answer); no v1 call is made except to refresh signed
 * URLs of answered records.
 */
export class ReplicaSource implements RecordSource {
  readonly kind = 'replica';
  readonly compactAfter = Number.POSITIVE_INFINITY;
  readonly nestedLimit: number;
  /** The tests relational walks may make a round (`settleTests` runs rounds until none stops short). */
  readonly turn = new TestTurn(TESTS_A_ROUND, { ms: ROUND_MS, now: () => performance.now() });

  constructor(readonly snapshot: ReplicaSnapshot, private readonly hooks: ReplicaHooks) {
    this.nestedLimit = snapshot.nestedLimit;
  }

  one(resource: string, id: string): Rec | undefined {
    return this.snapshot.one(resource, id);
  }

  many(resource: string, parent: Rec, field: string, parentResource: string): readonly Rec[] {
    return this.snapshot.many(resource, parent, field, parentResource);
  }

  manyAll(resource: string, parent: Rec, field: string, parentResource: string): readonly Rec[] {
    return this.snapshot.manyAll(resource, parent, field, parentResource);
  }

  shaped(rec: Rec, key: string, project: (r: Rec) => unknown): unknown {
    // a render's view is kept by its team's records, by row; any other record is projected
    const view = rec as Partial<RenderView>;
    // (an item shaped in a round that stopped short — a deep filter's walk — is provisional: not kept)
    return view.t instanceof RenderRecords && typeof view.row === 'number'
      ? view.t.shaped(view.row, key, () => project(rec), () => !this.turn.short) : project(rec);
  }

  /**
   * Runs `evaluate` with a hand of render data: the data it read and did not have is weighed, read from the store, and it
   * runs again, until nothing is missing (relations are held: nothing else is ever missing). Data that would take the
   * hand past `most` bytes (its stored size) is not read: HandFull. Each run is a round of `turn`: one whose relational
   * walks stopped short runs again after a turn of the event loop.
   */
  async settle<T>(evaluate: () => T, most = Number.POSITIVE_INFINITY, kept?: (drop: () => void) => void): Promise<T> {
    const hand = new DataAtHand();
    let done = false;
    const { dataSizes, data, room } = this.hooks;
    const store = { sizes: dataSizes, many: data, ...(room ? { room } : {}) };
    try {
      for (let round = 0; ; round++) {
        // (in rounds of tests: a deep _filter's relational walks stop when a round's allowance is spent, the event loop
        // turns, and the evaluation runs again from where they stopped — none after the client has gone)
        const { out, whole } = this.turn.round(() => withDataAtHand(hand, evaluate));
        if (!whole) {
          round--;
          await nextRound(this.hooks.gone);
          continue;
        }
        if (hand.missed === 0) {
          done = true;
          return out;
        }
        if (round >= DATA_ROUNDS) throw new Error(`render data still missing after ${DATA_ROUNDS} rounds`);
        await readMissed(hand, store, most);
      }
    } finally {
      if (done && kept) kept(() => hand.drop());
      else hand.drop();
    }
  }

  /**
   * Tests and comparisons read render data as a stand-in, never from the store: `data` is a json field, which a filter
   * tests only for null (`_null`, `_nnull`) and a sort compares as equal, and stored data is never null — the stand-in
   * `{}` answers both exactly as the data would (a filter on data read every render's data of the scope: attack pass 5).
   */
  settleTests<T>(evaluate: () => T): Promise<T> {
    return testInRounds(this.turn, () => withDataAtHand(STAND_IN_HAND, evaluate), undefined, this.hooks.gone);
  }

  ref(rec: Rec): string {
    return rec.id as string;
  }

  /**
   * The records of the plan's ids, a slice of ids at a time, the event loop turning between slices (a write by query
   * read its 40 000 items back by id in one turn, 0.4 s: attack pass 15's second re-check).
   */
  async byIds(resource: string, plan: Plan): Promise<Rec[]> {
    const ids = plan.ids;
    if (!ids || ids.length <= SCAN_BATCH) return this.snapshot.scope(resource, plan);
    const out: Rec[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < ids.length; i += SCAN_BATCH) {
      // (an id named in two slices, in two cases, is answered once, as one plan's ids are)
      const slice = ids.slice(i, i + SCAN_BATCH).filter((x) => !seen.has(x.toLowerCase()) && seen.add(x.toLowerCase()));
      for (const r of this.snapshot.scope(resource, { ...plan, ids: slice })) out.push(r);
      const turn = pace();
      if (turn) await turn;
      stopIfGone(this.hooks.gone);
    }
    return out;
  }

  async walk<T extends { readonly at: number }>(
    plan: Plan, _withData: boolean, convert: (batch: Walked[], tested?: number) => Promise<T[]>, filter?: RowFilter,
  ): Promise<MergeSource<T>[]> {
    const projects = plan.scope.projects ? this.snapshot.projectIds(plan.scope.projects) : null;
    const asc = plan.pushdown.order === 'asc';
    const long = plan.stopAfter === null || plan.stopAfter > CHUNK;
    const first = Math.min(WALK_BATCH_MOST, Math.max(WALK_BATCH_LEAST, plan.stopAfter ?? WALK_BATCH_MOST));
    const whole = filter?.filter ? filter.compile(filter.filter) : undefined;
    const teams = this.snapshot.inScope(plan);
    // (a large team's order is sorted a slice at a time the first time it is walked)
    const orders = await Promise.all(teams.map((t) => t.newestFirstReady()));
    return teams.map((t, k) => {
      // a walk that may write before it ends (limit=-1, or more than a chunk) outlives this turn of the event loop, and
      // renders may arrive meanwhile: it walks a copy of the kept order; a page's walk ends within the turn, on the order itself
      const kept = orders[k] as readonly number[];
      const records = t.renderColumns();
      const cols = records.c;
      // the filter tested on the columns first (a row with an overlay on its record): only the rows passing it become records
      const test = filter?.filter && whole ? compileColumnFilter(filter.filter, records, (node) => filter.compile(node), whole, filter.work) : undefined;
      const rows = asc ? [...kept].reverse() : long ? kept.slice() : kept;
      return new RowRun<T>(rows, (slice) => {
        const batch: Walked[] = [];
        let tested = 0;
        for (const row of slice) {
          if (projects && !projects.has(t.projectOfRow(row))) continue;
          tested++;
          if (test && !test(row)) continue;
          const rec = t.view(row);
          // the created column orders the walk: v1's time as a number, seconds or milliseconds (as the records read it)
          const raw = cols.created[row] as number;
          batch.push(new WalkedRow(rec, raw < 1e11 ? raw * 1000 : raw));
        }
        return test ? convert(batch, tested) : convert(batch);
      }, first, this.hooks.gone);
    });
  }

  /**
   * Each team's records of the scope; a large team's a slice at a time, the event loop given a turn between slices (a
   * question over 100 000 renders does not hold it), over a copy of the team's list (renders may arrive meanwhile).
   */
  async scan(resource: string, plan: Plan, _withData: boolean, take: (batch: readonly Rec[]) => Promise<void> | void): Promise<number> {
    let n = 0;
    for (const run of this.snapshot.runs(resource, plan)) {
      n += run.length;
      // (a run is copied before the first turn it spans: the team's records may change meanwhile)
      const held = run.length <= SCAN_BATCH ? run : run.slice();
      for (let i = 0; i < held.length; i += SCAN_BATCH) {
        await take(held.length <= SCAN_BATCH ? held : held.slice(i, i + SCAN_BATCH));
        const turn = pace();
        if (turn) await turn;
        stopIfGone(this.hooks.gone);
      }
    }
    return n;
  }

  /** A render filter answered on the columns of the teams in scope (undefined: some part of it is not a column). */
  columns(resource: string, plan: Plan, filter: FilterNode | null, compile: (node: FilterNode) => Predicate, work?: TextWork): ColumnScan | undefined {
    if (!traitsOf(resource).rows || plan.ids) return undefined;
    const whole = filter ? compile(filter) : () => true;
    const leaf = (node: CompareNode) => compile(node);
    const projects = plan.scope.projects ? [...new Set(plan.scope.projects.map((u) => u.toLowerCase()))] : null;
    const teams: TeamColumns[] = [];
    for (const t of this.snapshot.inScope(plan)) {
      const test = compileColumnFilter(filter, t.renderColumns(), leaf, whole, work);
      if (!test) return undefined;
      const rows = projects ? projects.flatMap((u) => { const v1 = t.projectV1(u); return v1 ? [t.projectRows(v1)] : []; }) : null;
      const cols = t.renderColumns();
      const codes = rows ? new Set(rows.filter((r) => r.length > 0).map((r) => cols.c.project[r[0] as number] as number)) : null;
      const form = rows ? undefined : statusForm(filter, cols, leaf);
      teams.push({ cols, test, rows, projects: codes, sorted: (name, cmp) => t.sortedRowsReady(name, cmp), ...(form ? { form } : {}) });
    }
    return new RenderColumnScan(teams);
  }

  async total(resource: string): Promise<number> {
    return this.snapshot.count(resource);
  }

  async prepare(recs: readonly Rec[], _refs: readonly string[], resource: string): Promise<Rec[]> {
    if (!traitsOf(resource).signedUrls) return [...recs];
    await this.hooks.refresh(recs, resource);
    // refreshed URLs replaced some records: answer the current ones (a render's view reads its row, which a refresh
    // rewrites in place: it is its own current record)
    return recs.map((r) => ((r as Partial<RenderView>).t instanceof RenderRecords ? r : this.snapshot.one(resource, r.id as string) ?? r));
  }

  remember(resource: string, refs: readonly string[]): void {
    if (traitsOf(resource).rows && refs.length > 0) this.hooks.answered(refs);
  }

  flush(): Promise<void> {
    return this.hooks.flush();
  }

  describe(): SourceDescription {
    return {
      kind: 'replica',
      ageMs: this.snapshot.ageMs(this.hooks.now),
      calls: [{ call: 'GET /v1/renders/{id}', times: 'each answered render whose signed URLs are due', note: 'nothing else: the replica holds the scope' }],
    };
  }
}
