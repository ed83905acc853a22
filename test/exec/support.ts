import { execute } from '../../src/exec/execute.js';
import type { Execution } from '../../src/exec/execution.js';
import type { RecordSource, Walked } from '../../src/exec/source.js';
import type { MergeSource } from '../../src/plan/merge.js';
import { planQuery, type Plan } from '../../src/plan/plan.js';
import { unlimited } from '../../src/query/budget.js';
import type { Rec } from '../../src/query/compile.js';
import { parseQuery } from '../../src/query/parse-query.js';
import type { ResourceSchema } from '../../src/query/schema.js';
import { RawJson } from '../../src/exec/raw-json.js';
import { ctx, mappings, schemas } from '../query/fixtures.js';

/** Records, a record source over them, and a plain reference evaluator: what the executor's tests share. */
export const P = ['aaaaaaaa-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000002', 'aaaaaaaa-0000-4000-8000-000000000003'];
const A = 'bbbbbbbb-0000-4000-8000-000000000001';
export const STATUSES = ['draft', 'ready', 'processing', 'complete', 'failed'];
export const TITLES = ['alpha', 'Beta', 'beta', 'gamma', 'Ünïcødé', 'zeta', 'Alpha render'];

export interface Seed { project: number; status: number; title: number; at: number }
export const render = (s: Seed, i: number): Rec => ({
  id: `cccccccc-0000-4000-8000-${String(i).padStart(12, '0')}`, user_created: null, date_updated: null, process_id: null, playback_id: null,
  download_ready: false, data: {}, output: null, account: A, project: P[s.project], status: STATUSES[s.status], title: TITLES[s.title],
  // few distinct instants: many ties, which the executor must order by the query's own rule
  date_created: new Date(Date.UTC(2026, 0, 1) + s.at * 60_000).toISOString(),
});

/**
 * A record source over plain records, as the executor sees any source: batches of a chosen size, runs per project in
 * date order with ties in an arbitrary order, refs of its own, and a log of what was prepared and remembered.
 */
export class ArraySource implements RecordSource {
  readonly kind = 'live';
  readonly nestedLimit: number = 25;
  readonly remembered: string[] = [];
  readonly prepared: string[] = [];
  /** What the executor asked, in order: prepare (its size), remember (its size), flush, and the withData of walks and scans. */
  readonly events: string[] = [];
  scans = 0;
  constructor(protected readonly recs: Rec[], private readonly batch: number, readonly compactAfter: number, private readonly shuffle: number) {}
  one(resource: string, id: string): Rec | undefined { return resource === 'render' ? this.recs.find((r) => r.id === id) : undefined; }
  many(_resource: string, _parent: Rec, _field: string, _parentResource: string): readonly Rec[] { return []; }
  manyAll(_resource: string, _parent: Rec, _field: string, _parentResource: string): readonly Rec[] { return []; }
  async settle<T>(evaluate: () => T): Promise<T> { return evaluate(); }
  ref(rec: Rec): string { return `ref:${rec.id as string}`; }
  private scope(plan: Plan): Rec[] {
    return this.recs.filter((r) => (!plan.scope.projects || plan.scope.projects.includes(r.project as string)) && (!plan.ids || plan.ids.includes(r.id as string)));
  }
  async byIds(_resource: string, plan: Plan): Promise<Rec[]> { return this.scope(plan); }
  async walk<T extends { readonly at: number }>(plan: Plan, withData: boolean, convert: (batch: Walked[]) => Promise<T[]>): Promise<MergeSource<T>[]> {
    this.events.push(`walk data=${withData}`);
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
  async scan(_resource: string, plan: Plan, withData: boolean, take: (batch: readonly Rec[]) => Promise<void> | void): Promise<number> {
    this.scans++;
    this.events.push(`scan data=${withData}`);
    const all = this.scope(plan);
    for (let i = 0; i < all.length; i += this.batch) await take(all.slice(i, i + this.batch));
    return all.length;
  }
  async total(): Promise<number> { return this.recs.length; }
  async prepare(recs: readonly Rec[], refs: readonly string[], resource: string): Promise<Rec[]> {
    if (resource !== 'render') throw new Error(`prepare asked for ${resource}`);
    recs.forEach((r, i) => { if (refs[i] !== this.ref(r)) throw new Error(`prepare: ${String(refs[i])} does not name ${r.id as string}`); });
    this.events.push(`prepare ${recs.length}`);
    this.prepared.push(...recs.map((r) => r.id as string));
    return [...recs];
  }
  remember(resource: string, refs: readonly string[]): void {
    if (resource !== 'render') throw new Error(`remember asked for ${resource}`);
    this.events.push(`remember ${refs.length}`);
    this.remembered.push(...refs);
  }
  async flush(): Promise<void> { this.events.push('flush'); }
  describe() { return { kind: 'live' as const, ageMs: 0, calls: [] }; }
}

/** The reference: a plain evaluator of the rules the generated queries use, written out here (not the gateway's). */
const collator = new Intl.Collator('en', { sensitivity: 'variant' });
export interface Case { status?: string[]; project?: string; title?: string; sort: string; limit: number; offset: number; meta?: string }
export function reference(all: Rec[], c: Case): { data: string[]; meta?: Record<string, number> } {
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

export async function run(source: RecordSource, c: Case): Promise<{ data: string[]; meta?: Record<string, number>; plan: Plan; how?: Execution }> {
  const q = parseQuery(query(c), schemas.render as ResourceSchema, ctx());
  const plan = planQuery(q, 'render', { statusToV1: mappings.status.toV1, schemas });
  let how: Execution | undefined;
  const result = await execute('render', q, plan, source, { schemas, budget: unlimited(), report: (h) => { how = h; } });
  const items: unknown[] = [...result.data];
  if (result.stream) for await (const x of result.stream) items.push(x);
  const data = items.map((x) => ((x instanceof RawJson ? JSON.parse(Buffer.from(x.json).toString()) : x) as { id: string }).id);
  return { data, ...(result.meta ? { meta: result.meta } : {}), plan, ...(how ? { how } : {}) };
}

