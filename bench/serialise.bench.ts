/**
 * node dist/bench/serialise.bench.js (after `tsc -p tsconfig.bench.json`) — the answered page's serialisation in
 * process: a team of the simulator's world (BENCH_RENDERS, 100 000 renders; unicode and 250-character titles, signed
 * outputs), pages of 20 and 100 full render records (`fields=*`) answered by the executor and written as the answer
 * body: as before the kept items (every record projected and JSON.stringify'd; its full record built, or kept from the
 * last page), and with the team's kept items, cold (let go before each page) and warm (the same rows answered again).
 * µs per record, median of 40 pages each.
 */
import { bodyJson } from '../src/lib/item-bytes.js';
import { execute } from '../src/exec/execute.js';
import type { RecordSource } from '../src/exec/source.js';
import { planQuery } from '../src/plan/plan.js';
import { unlimited } from '../src/query/budget.js';
import { parseQuery } from '../src/query/parse-query.js';
import type { ResourceSchema } from '../src/query/schema.js';
import { mappings, simTeam } from './sim-team.js';

const N = Number(process.env.BENCH_RENDERS ?? 100_000);
const schemas = mappings.schemas;
const { team, source } = simTeam(N);
const kept = source();
// the replica source without kept items: what every page cost before
const plain: RecordSource = new Proxy(kept, { get: (o, k) => (k === 'shaped' ? undefined : Reflect.get(o, k, o)) });
const ctx = { schemas, dynamic: { now: new Date(), userId: 'u', roleId: 'r', user: { id: 'u' } }, limitDefault: 100 };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** One page: executed, then written as the answer body; ms for each part. */
async function page(src: RecordSource, n: number, at: number, write: (body: unknown) => string | Buffer | undefined) {
  const q = parseQuery({ limit: String(n), offset: String(at) }, schemas.render as ResourceSchema, ctx);
  const plan = planQuery(q, 'render', { statusToV1: mappings.status.toV1, schemas });
  const t0 = performance.now();
  const res = await execute('render', q, plan, src, { schemas, budget: unlimited() });
  const t1 = performance.now();
  const text = write({ data: res.data });
  const t2 = performance.now();
  return { exec: t1 - t0, write: t2 - t1, bytes: Buffer.byteLength(text ?? '') };
}

console.log(`| page (${N.toLocaleString('en')} renders, fields=*) | way | answer (executor) | body written | µs a record | bytes |`);
console.log('|---|---|---|---|---|---|');
const records = team.renderColumns() as unknown as { clearFull(): void };
// (the bytes sent: a string is encoded before it is written)
const stringified = (b: unknown) => Buffer.from(JSON.stringify(b));
const WAYS = [
  ['before, cold', plain, stringified], ['before, warm full records', plain, stringified],
  ['kept items, cold', kept, bodyJson], ['kept items, warm', kept, bodyJson],
] as const;
for (const n of [20, 100]) {
  for (const [way, src, writer] of WAYS) {
    const exec: number[] = [];
    const write: number[] = [];
    let bytes = 0;
    for (let i = 0; i < 41; i++) {
      // cold: the team's full records and kept items let go before each page (as rows answered for the first time)
      if (way.endsWith('cold')) records.clearFull();
      const x = await page(src, n, 0, writer);
      if (i === 0) continue;
      exec.push(x.exec);
      write.push(x.write);
      bytes = x.bytes;
    }
    const e = median(exec);
    const w = median(write);
    console.log(`| ${n} records | ${way} | ${e.toFixed(3)} ms | ${w.toFixed(3)} ms | ${((e + w) * 1000 / n).toFixed(1)} | ${bytes} |`);
  }
}
