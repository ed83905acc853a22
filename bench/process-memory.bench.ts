/**
 * npm run bench:process-memory — what a render held costs the gateway process as the system counts it (issue 43,
 * part 3b): the RSS of a gateway started as `npm start` starts it (compiled, production flags and settings) holding
 * the `staleness` world (200 000 renders, 2 teams × 100 projects), backfilled and then read as clients read (newest
 * first, title and date orders, counts, a page deep in the list), minus the RSS of the same gateway over the `tiny`
 * world after the same reads. Each is sampled after a quiet wait (PROCESS_MEMORY_QUIET_S, default 20 s: the syncs
 * still run), five samples a second apart, the median kept. Prints RSS and its anonymous share for both, and the bytes
 * a render; PROCESS_MEMORY_SCALE names the larger world (default staleness).
 */
import { backfilled, drain, indexState, log, median, procKb, sleep, startGateway, startSim, stop } from './support.js';

const QUIET_S = Number(process.env.PROCESS_MEMORY_QUIET_S ?? 20);
const SCALE = process.env.PROCESS_MEMORY_SCALE ?? 'staleness';


/** Reads clients make, each answered from the replica once it holds the teams (the kept orders built). */
const READS = [
  '/renders?limit=20&sort=-date_created',
  '/renders?limit=20&sort=title&page=3',
  '/renders?limit=20&sort=date_updated',
  '/renders?aggregate[count]=*&groupBy=status',
  '/renders?limit=20&page=400&meta=filter_count',
  '/renders?limit=20&filter[status][_eq]=complete&meta=total_count',
];

async function measure(scale: string): Promise<{ renders: number; rss: number; anon: number }> {
  const sim = await startSim(scale);
  const person = sim.people.reduce((a, p) => (p.teams.length > a.teams.length ? p : a));
  const gw = await startGateway(sim, person.api_key);
  try {
    await backfilled(gw, person.teams.length);
    for (const r of READS) for (let i = 0; i < 3; i++) {
      const d = await drain(gw, r);
      if (d.status !== 200) throw new Error(`${r}: ${d.status}`);
    }
    const renders = (await indexState(gw)).reduce((a, t) => a + t.renders, 0);
    await sleep(QUIET_S * 1000);
    const rss: number[] = [];
    const anon: number[] = [];
    for (let i = 0; i < 5; i++) {
      rss.push(procKb(gw.proc.pid!, 'VmRSS'));
      anon.push(procKb(gw.proc.pid!, 'RssAnon'));
      await sleep(1000);
    }
    const m = { rss: median(rss), anon: median(anon) };
    log(`${scale}: ${renders} renders, RSS ${(m.rss / 1024).toFixed(0)} MB (anonymous ${(m.anon / 1024).toFixed(0)} MB)`);
    return { renders, ...m };
  } finally {
    await stop(gw.proc);
    await stop(sim.proc);
  }
}

const empty = await measure('tiny');
const full = await measure(SCALE);
const per = (a: number, b: number) => Math.round(((b - a) * 1024) / (full.renders - empty.renders));
process.stdout.write(`${JSON.stringify({
  renders: full.renders, empty_renders: empty.renders,
  rss_mb: { empty: Math.round(empty.rss / 1024), full: Math.round(full.rss / 1024) },
  rss_per_render: per(empty.rss, full.rss), anon_per_render: per(empty.anon, full.anon),
})}\n`);
