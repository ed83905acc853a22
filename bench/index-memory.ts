/**
 * Run by bench:index with --expose-gc, on the store a benchmarked gateway left: the memory the render index holds for
 * its teams (their v1 state and the legacy records built from it), measured between two full collections.
 * usage: node --expose-gc dist/bench/index-memory.js  (environment as for the gateway)
 */
import { loadConfig } from '../src/config/schema.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/log/logger.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const deps = await createDeps(loadConfig(process.env), createLogger('silent'));
const teams = (await deps.replica!.status()).map((t) => t.team);
gc();
const before = process.memoryUsage().heapUsed;
let renders = 0;
for (const id of teams) {
  const t = await deps.replica!.load(id);
  if (!t) continue;
  t.renderRecords(); // the legacy records a scan builds (kept)
  t.newestFirst();
  renders += t.size;
}
gc();
const after = process.memoryUsage().heapUsed;
process.stdout.write(`${JSON.stringify({ teams: teams.length, renders, bytes: after - before })}\n`);
await deps.close();
