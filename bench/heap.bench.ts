/**
 * npm run bench:heap — what HEAP_GROWTH_PERCENT does to the peak heap of a process that keeps ~30 MB live and churns
 * garbage that lives long enough to be promoted (as entries waiting in merge buffers do). Each setting in its own
 * child process; the figures are the children's own peak heapUsed.
 */
import { spawnSync } from 'node:child_process';

const CHURN = `
  const v8 = await import('node:v8');
  if (Number(process.env.PCT) > 0) v8.setFlagsFromString('--heap-growing-percent=' + process.env.PCT);
  const live = Array.from({ length: 200000 }, (_, i) => ({ i, s: 'live-' + i }));
  let peak = 0;
  let window = [];
  for (let i = 0; i < 3000000; i++) {
    window.push({ i, s: 'entry-' + i });
    if (window.length === 100000) window = [];
    if (i % 1000 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
  }
  process.stdout.write(String(Math.round(peak / 1048576) + live.length * 0));
`;
const peak = (pct: number) => Number(spawnSync(process.execPath, ['--input-type=module', '-e', CHURN], { env: { ...process.env, PCT: String(pct) }, encoding: 'utf8' }).stdout);
const rows = [0, 25, 40, 100].map((pct) => [pct, peak(pct)] as const);
process.stdout.write(`| HEAP_GROWTH_PERCENT | peak heap |\n|---|---|\n${rows.map(([p, mb]) => `| ${p === 0 ? "0 (V8's own)" : p} | ${mb} MB |`).join('\n')}\n`);
process.stdout.write(`Node ${process.version}; a lower percentage bounds the heap nearer to the live set (~30 MB here).\n`);
