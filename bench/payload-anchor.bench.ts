/**
 * npm run bench:payload-anchor — what moving an answer of a given size costs on this machine, whatever computed it: a
 * Fastify server (its own process, the production node flags) sending a fixed JSON body of BENCH_BODY_BYTES (default
 * 96 000: the size of `filter[status][_eq]=complete&meta=filter_count`'s answer, 100 full renders) to autocannon at 16
 * connections for BENCH_SECONDS (10), beside the same server's hello-world. The anchor of bench:scale's
 * "filter + meta=filter_count" row: the gateway's p50 there cannot be below this one's.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { PRODUCTION_NODE_FLAGS } from './production-flags.js';
import { freePort } from './support.js';

const BYTES = Number(process.env.BENCH_BODY_BYTES ?? 96_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

// a body of render-like records, about BYTES long
const records: Record<string, unknown>[] = [];
let size = 12;
for (let n = 0; size < BYTES; n++) {
  const r = {
    id: `00000000-0000-5000-8000-${String(n).padStart(12, '0')}`, status: 'complete', title: `Holiday render ${n}`, date_created: '2026-11-20T10:00:00.000Z',
    date_updated: '2026-11-20T10:05:00.000Z', project: '11111111-1111-5111-8111-111111111111', account: '22222222-2222-5222-8222-222222222222',
    user_created: null, download_ready: true, process_id: null, playback_id: null, data: {},
    output: { master: `https://cdn.example/renders/${n}/master.mp4?expires=1790000000&signature=${'ab'.repeat(32)}` },
  };
  records.push(r);
  size += JSON.stringify(r).length + 1;
}
const body = JSON.stringify({ meta: { filter_count: 50_000 }, data: records });

const server = join(tmpdir(), `payload-anchor-${process.pid}.mjs`);
writeFileSync(server, `
import Fastify from '${join(process.cwd(), 'node_modules/fastify/fastify.js')}';
import { readFileSync } from 'node:fs';
const body = readFileSync(process.argv[2], 'utf8');
const app = Fastify();
app.get('/hello', async () => ({ hello: 'world' }));
app.get('/body', (_req, reply) => { reply.type('application/json; charset=utf-8').send(body); });
await app.listen({ port: Number(process.argv[3]), host: '127.0.0.1' });
console.log('ready');
`);
const bodyFile = `${server}.json`;
writeFileSync(bodyFile, body);
const port = await freePort();
const proc = spawn(process.execPath, [...PRODUCTION_NODE_FLAGS, server, bodyFile, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
await new Promise<void>((resolve) => proc.stdout!.on('data', (d: Buffer) => { if (d.toString().includes('ready')) resolve(); }));

const run = async (path: string) => {
  const r = await autocannon({ url: `http://127.0.0.1:${port}${path}`, connections: 16, duration: SECONDS });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
};
const hello = await run('/hello');
const sent = await run('/body');
proc.kill();
console.log(`| Fastify, the same process and node flags, 16 connections, ${SECONDS} s | p50 | p99 | req/s |`);
console.log('|---|---|---|---|');
console.log(`| hello-world | ${hello.p50} ms | ${hello.p99} ms | ${hello.rps.toFixed(0)} |`);
console.log(`| a fixed ${(body.length / 1000).toFixed(0)} kB JSON body (${records.length} render-like records) | ${sent.p50} ms | ${sent.p99} ms | ${sent.rps.toFixed(0)} |`);
console.log(`${new Date().toISOString()}, Node ${process.version}`);
