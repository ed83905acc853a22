/**
 * node dist/bench/columns.bench.js (after `tsc -p tsconfig.bench.json`) — #28's four questions in process, on one team
 * of N renders (BENCH_RENDERS, 100 000) held by a TeamReplica: the executor over the replica source with its columns,
 * and with them hidden (the record path), each question BENCH_RUNS times (15) after a first (which builds a kept order,
 * or starts building it); p50 and max, and the p50 of writing the answer's body (its JSON text, as the answer is sent).
 * Every request is distinct, as in bench:scale (an always-true `filter[date_created][_lte]` a second apart). No HTTP,
 * no store, no sync: what the executor costs, nothing else. BENCH_WORLD=sim: the team is the simulator world's (titles
 * of every kind, signed outputs; bench/sim-team.ts) instead of plain generated renders.
 */
import { loadMappings } from '../src/config/mappings.js';
import { execute } from '../src/exec/execute.js';
import type { Execution } from '../src/exec/execution.js';
import { bodyJson } from '../src/lib/item-bytes.js';
import { ReplicaSource } from '../src/exec/replica-source.js';
import type { RecordSource } from '../src/exec/source.js';
import { planQuery } from '../src/plan/plan.js';
import { unlimited } from '../src/query/budget.js';
import { parseQuery } from '../src/query/parse-query.js';
import type { ResourceSchema } from '../src/query/schema.js';
import { recordBuilder } from '../src/replica/team/records.js';
import { ReplicaSnapshot } from '../src/replica/reads/snapshot.js';
import { TeamReplica } from '../src/replica/team/team-replica.js';
import type { IdMapStore } from '../src/store/idmap.js';
import { IdTranslator } from '../src/translate/ids.js';
import { RENDER_STATUSES } from '../src/v1/schemas.js';
import { simTeam } from './sim-team.js';

const N = Number(process.env.BENCH_RENDERS ?? 100_000);
const T0 = 1_700_000_000;
const mappings = loadMappings('mappings');
const schemas = mappings.schemas;
const ids = new IdTranslator({ imported: async () => [] } as unknown as IdMapStore);
const builder = recordBuilder({ ids, mappings, timeUnit: 'auto' }, () => ({}), {});
const team = { id: 'team_big', name: 'big', account_id: 'acct_big', role: 'admin' as const, created_at: T0 };
const sim = process.env.BENCH_WORLD === 'sim' ? simTeam(N) : undefined;
const t = sim?.team ?? new TeamReplica({ team, members: [], state: 'ready', backfilledAt: 1, syncedAt: 1, webhookAt: null }, builder);
for (let p = 0; p < (sim ? 0 : 100); p++) {
  const project = {
    id: `proj_${p}`, name: `p${p}`, team: { id: team.id, name: team.name }, created_by: null, created_at: T0, updated_at: null, thumbnail_url: null,
  };
  t.setProject({ project, templates: [], backfilled: true }, 1);
}
const words = ['alpha', 'Beta', 'gamma', 'delta', 'Épsilon', 'zeta', 'eta', 'theta'];
for (let i = 0; i < (sim ? 0 : N); i++) {
  t.apply({
    id: `rend_${i}`, name: `${words[i % 8]} ${(i * 7919) % N}`, status: RENDER_STATUSES[i % RENDER_STATUSES.length]!, type: 'cloud',
    project: { id: `proj_${i % 100}`, team: team.id }, created_by: `user_${i % 13}`, created_at: T0 + i * 10, updated_at: i % 3 ? T0 + i * 10 + 5 : null,
  }, 1);
}
const source = new ReplicaSource(new ReplicaSnapshot([t], 25), { refresh: async () => {}, answered: () => {}, flush: async () => {}, data: async () => new Map(), dataSizes: async () => new Map(), now: 10 });
const records: RecordSource = new Proxy(source, { get: (o, k) => (k === 'columns' ? undefined : Reflect.get(o, k, o)) });
const ctx = { schemas, dynamic: { now: new Date(), userId: 'u', roleId: 'r', user: { id: 'u' } }, limitDefault: 100 };
const ONLY = process.env.BENCH_ONLY;
const QUESTIONS: [string, Record<string, unknown>][] = [
  ['count grouped by status', { aggregate: { count: '*' }, groupBy: ['status'] }],
  ['filtered list newest 20', { filter: { status: { _eq: 'complete' } }, sort: '-date_created', limit: '20' }],
  ['sort=title&page=50&limit=20', { sort: 'title', page: '50', limit: '20' }],
  ['filter + meta=filter_count', { filter: { status: { _eq: 'complete' } }, meta: 'filter_count' }],
  // (issue 44: a title predicate and a search, counted, as an integration's search box asks)
  ['title _contains + filter_count, limit 20', { filter: { title: { _contains: 'gamma 7' } }, meta: 'filter_count', limit: '20' }],
  ['title _icontains + filter_count, limit 20', { filter: { title: { _icontains: 'épsilon 7' } }, meta: 'filter_count', limit: '20' }],
  ['search + filter_count, limit 20', { search: 'delta 9', meta: 'filter_count', limit: '20' }],
];

let n = 0;
async function ask(src: RecordSource, raw: Record<string, unknown>): Promise<{ ms: number; write: number; how?: string }> {
  const bound = new Date(Date.UTC(2100, 0, 1) + n++ * 1000).toISOString();
  const filter = { _and: [...(raw.filter ? [raw.filter] : []), { date_created: { _lte: bound } }] };
  const q = parseQuery({ ...raw, filter: JSON.stringify(filter) }, schemas.render as ResourceSchema, ctx);
  const plan = planQuery(q, 'render', { statusToV1: mappings.status.toV1, schemas });
  let how: Execution | undefined;
  const t0 = process.hrtime.bigint();
  const res = await execute('render', q, plan, src, { schemas, budget: unlimited(), report: (h) => { how = h; } });
  if (res.stream) for await (const x of res.stream) void x;
  const t1 = process.hrtime.bigint();
  bodyJson(res.meta ? { meta: res.meta, data: res.data } : { data: res.data });
  const write = Number(process.hrtime.bigint() - t1) / 1e6;
  return { ms: Number(t1 - t0) / 1e6, write, ...(how ? { how: how.strategy } : {}) };
}

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const world = sim ? 'simulator world' : 'generated';
console.log(`| question (${N.toLocaleString('en')} renders, one team, ${world}) | path | first | p50 | max | body written, p50 | how |`);
console.log('|---|---|---|---|---|---|---|');
for (const [name, raw] of QUESTIONS.filter(([q]) => !ONLY || q.includes(ONLY))) {
  for (const [label, src] of [['records', records], ['columns', source]] as const) {
    const first = await ask(src, raw);
    // a kept order being sorted off the question is given its turns before the runs are timed
    await new Promise((r) => setTimeout(r, 2000));
    const times: number[] = [];
    const writes: number[] = [];
    let how: string | undefined;
    for (let i = 0; i < RUNS; i++) {
      const x = await ask(src, raw);
      times.push(x.ms);
      writes.push(x.write);
      how = x.how;
    }
    times.sort((a, b) => a - b);
    writes.sort((a, b) => a - b);
    const mid = RUNS >> 1;
    const p50 = `**${times[mid]!.toFixed(2)} ms**`;
    console.log(`| ${name} | ${label} | ${first.ms.toFixed(1)} ms | ${p50} | ${times[RUNS - 1]!.toFixed(1)} ms | ${writes[mid]!.toFixed(3)} ms | ${how} |`);
  }
}
