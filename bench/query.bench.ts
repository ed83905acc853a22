/**
 * npm run bench:query — the compiled legacy-filter evaluator against sift and mingo on 100 000 generated
 * render records, for representative filters. Prints records/second and the ratio to each anchor,
 * measured in the same run (machines are noisy: compare ratios, not absolute numbers).
 */
import { execFileSync } from 'node:child_process';
import { Query as MingoQuery } from 'mingo';
import siftModule from 'sift';
import { loadMappings } from '../src/config/mappings.js';
import { compileFilter, type Lookup, type Rec } from '../src/query/compile.js';
import { parseQuery } from '../src/query/parse-query.js';
import { Rng } from '../src/sim/rng.js';

const N = 100_000;
const sift = ((siftModule as unknown as { default?: unknown }).default ?? siftModule) as (q: Record<string, unknown>) => (r: unknown) => boolean;
const mappings = loadMappings('mappings');
const schemas = mappings.schemas;
const rng = new Rng(42);
const now = Date.UTC(2026, 5, 15);
const statuses = ['draft', 'ready', 'processing', 'encoding', 'complete', 'failed'];
const projects: Rec[] = Array.from({ length: 200 }, (_, i) => ({ id: `p-${i}`, title: `Project ${i % 7 === 0 ? 'Launch' : 'Other'} ${i}`, account: `a-${i % 10}` }));
const projectById = new Map(projects.map((p) => [p.id as string, p]));
const words = ['Summer', 'Launch', 'Promo', 'Teaser', 'Recap', 'Intro', 'Outro'];
// Records arrive from JSON (v1 answers), so build them the same way: flat strings, as in production.
const records: Rec[] = JSON.parse(JSON.stringify(Array.from({ length: N }, (_, i) => {
  const p = projects[i % projects.length]!;
  return {
    id: `r-${i}`, title: `${rng.pick(words)} render ${i}`, status: rng.pick(statuses), project: p.id, account: p.account,
    date_created: new Date(now - rng.int(0, 365) * 86_400_000).toISOString(), download_ready: rng.chance(0.5), user_created: rng.chance(0.1) ? null : 'u-1',
  };
})));
// the anchors get the relation joined in, as they have no lookup
const joined = records.map((r) => ({ ...r, project: projectById.get(r.project as string) }));
const lookup: Lookup = { one: (_res, id) => projectById.get(id), many: () => [] };
const since = new Date(now - 30 * 86_400_000).toISOString();

const cases: { name: string; legacy: unknown; mongo: Record<string, unknown> }[] = [
  { name: 'equality', legacy: { status: { _eq: 'complete' } }, mongo: { status: 'complete' } },
  { name: '_in list', legacy: { status: { _in: ['draft', 'ready', 'failed'] } }, mongo: { status: { $in: ['draft', 'ready', 'failed'] } } },
  { name: 'date range $NOW(-30 days)', legacy: { date_created: { _gte: '$NOW(-30 days)' } }, mongo: { date_created: { $gte: since } } },
  { name: '_contains', legacy: { title: { _contains: 'Launch' } }, mongo: { title: { $regex: 'Launch' } } },
  {
    name: 'nested _and/_or',
    legacy: { _or: [{ _and: [{ status: { _eq: 'complete' } }, { download_ready: { _eq: true } }] }, { _and: [{ status: { _in: ['failed', 'draft'] } }, { user_created: { _null: true } }] }] },
    mongo: { $or: [{ $and: [{ status: 'complete' }, { download_ready: true }] }, { $and: [{ status: { $in: ['failed', 'draft'] } }, { user_created: null }] }] },
  },
  { name: 'relational path', legacy: { project: { title: { _starts_with: 'Project Launch' } } }, mongo: { 'project.title': { $regex: '^Project Launch' } } },
];

/** Best of 9 runs after two warm-ups (the least disturbed run; the same rule for every contender). */
function rate(fn: () => number): { perSec: number; matched: number } {
  let matched = fn();
  fn();
  let best = Infinity;
  for (let i = 0; i < 9; i++) {
    const t = performance.now();
    matched = fn();
    best = Math.min(best, performance.now() - t);
  }
  return { perSec: N / (best / 1000), matched };
}

const fmt = (n: number) => `${(n / 1e6).toFixed(2)} M/s`;

/** One case, measured for all three contenders; printed as JSON for the parent. */
function measureCase(c: (typeof cases)[number]): { name: string; ours: number; sift: number; mingo: number } {
  const q = parseQuery({ filter: JSON.stringify(c.legacy) }, schemas.render!, { schemas, dynamic: { now: new Date(now), userId: null, roleId: null }, limitDefault: 100 });
  const ours = rate(() => { const p = compileFilter(q.filter, schemas.render!, schemas, lookup); let n = 0; for (const r of records) if (p(r)) n++; return n; });
  const s = rate(() => { const t = sift(c.mongo); let n = 0; for (const r of joined) if (t(r)) n++; return n; });
  const m = rate(() => { const t = new MingoQuery(c.mongo); let n = 0; for (const r of joined) if (t.test(r)) n++; return n; });
  if (ours.matched !== s.matched || ours.matched !== m.matched) throw new Error(`${c.name}: results differ (ours ${ours.matched}, sift ${s.matched}, mingo ${m.matched})`);
  return { name: c.name, ours: ours.perSec, sift: s.perSec, mingo: m.perSec };
}

if (process.env.BENCH_CASE !== undefined) {
  process.stdout.write(JSON.stringify(measureCase(cases[Number(process.env.BENCH_CASE)]!)));
} else {
  // every case in a fresh process: no contender inherits another case's JIT state
  const rows: string[] = ['| filter | gateway | sift | mingo | × sift | × mingo |', '|---|---|---|---|---|---|'];
  let minRatio = Infinity;
  for (let i = 0; i < cases.length; i++) {
    const out = execFileSync(process.execPath, [process.argv[1]!], { env: { ...process.env, BENCH_CASE: String(i) }, encoding: 'utf8' });
    const r = JSON.parse(out) as { name: string; ours: number; sift: number; mingo: number };
    minRatio = Math.min(minRatio, r.ours / r.sift);
    rows.push(`| ${r.name} | ${fmt(r.ours)} | ${fmt(r.sift)} | ${fmt(r.mingo)} | ${(r.ours / r.sift).toFixed(1)}× | ${(r.ours / r.mingo).toFixed(1)}× |`);
  }
  process.stdout.write(`${rows.join('\n')}\n\n${N} records, best of 9 runs each, every filter in its own process, Node ${process.version}. Lowest ratio to sift: ${minRatio.toFixed(1)}× (goal ≥ 3×).\n`);
}
