/**
 * npm run bench:staleness — how stale a legacy list is without webhooks (issue #29): from a render's creation in v1
 * to its first appearance in a legacy list, and from its completion in v1 (processing → complete) to the list showing
 * it complete, beside the bounds the gateway states on /_gateway/index.
 *
 * The simulator (real clock, its own process: bench/staleness-sim.ts) holds one team of STALENESS_PROJECTS projects
 * (default 100; those added have no renders, so the backfill is quick); the gateway runs as a deployment would
 * (compiled, production settings, default sync budget, no webhooks configured). Once the team is backfilled, a render is
 * made in v1 every second for STALENESS_SECONDS (default 60) seconds, in turn in STALENESS_ACTIVE (default 5) projects,
 * and one every STALENESS_QUIET_EVERY seconds (default 15; 0: none) in another, quiet project each time; every render
 * completes about 4 s after it is made. Meanwhile a legacy list (`/renders?sort=-date_created&fields=title,status`,
 * its limit varied so no two reads in a row ask the same query) is read every STALENESS_POLL_MS (default 100) ms until
 * every render showed up complete. Prints p50/p95/p99/max of each and the stated bounds (their range over the run), and
 * how many renders were seen later than the bound stated just before each was made. STALENESS_SCALE=staleness: the world
 * of 200 000 renders in 2 teams × 100 projects (issue 43); the renders are then made in its projects (none is empty).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort, get, log, OPERATOR, sleep, startGateway, stop, type Sim, type SimPerson } from './support.js';

const num = (name: string, d: number) => (process.env[name] === undefined ? d : Number(process.env[name]));
const PROJECTS = num('STALENESS_PROJECTS', 100);
const ACTIVE = num('STALENESS_ACTIVE', 5);
const SECONDS = num('STALENESS_SECONDS', 60);
const QUIET_EVERY = num('STALENESS_QUIET_EVERY', 15);
const POLL_MS = num('STALENESS_POLL_MS', 100);
/** The simulator's world (`SCALES`): `staleness` is 200 000 renders in 2 teams × 100 projects (issue 43's done-when). */
const SCALE = process.env.STALENESS_SCALE ?? 'tiny';

/** The simulator process of this bench: the tiny world with its first team grown to PROJECTS projects. */
async function startStalenessSim(): Promise<Sim & { team: string }> {
  const port = await freePort();
  const proc: ChildProcess = spawn(process.execPath, ['dist/bench/staleness-sim.js', '--port', String(port), '--projects', String(PROJECTS), '--scale', SCALE],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  const team = await new Promise<string>((resolve, reject) => {
    let text = '';
    proc.stdout!.on('data', (d: Buffer) => {
      text += d.toString();
      const m = /team (\S+)\n/.exec(text);
      if (m) resolve(m[1]!);
    });
    proc.once('exit', (code) => reject(new Error(`the simulator exited (${code})`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return { proc, url, team, people: (await (await fetch(`${url}/_sim/keys`)).json()) as SimPerson[] };
}

const ms = (v: number) => (Math.abs(v) < 1e11 ? v * 1000 : v);
const v1 = async (sim: Sim, key: string, path: string, body?: unknown) => {
  const r = await fetch(sim.url + path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return r.json() as Promise<any>;
};
type Row = {
  team: string; state: string; bound_ms: number; active_bound_ms: number; active_projects: number; sync_calls_last_minute: number;
  last_sync_started: string | null;
};
const status = async (base: string) =>
  ((await (await fetch(`${base}/_gateway/index`, { headers: { authorization: `Bearer ${OPERATOR}` } })).json()) as { data: Row[] }).data;

const quantile = (xs: readonly number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : (s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] as number);
};
const secs = (x: number) => (Number.isNaN(x) ? '–' : `${(x / 1000).toFixed(2)} s`);

const sim = await startStalenessSim();
const person = sim.people[0]!;
const gw = await startGateway(sim, person.api_key);
interface Made { readonly name: string; readonly id: string; readonly project: string; readonly quiet: boolean; readonly createdAt: number;
  /** The team's bound_ms on /_gateway/index just before the render was made. */
  readonly bound: number; seenAt?: number; completeAt?: number; completeSeenAt?: number }
const made = new Map<string, Made>();
try {
  // the backfill of every team of the key (the first read starts it)
  const t0 = performance.now();
  await (await get(gw, '/renders?limit=1')).text();
  const ready = (rows: Row[]) => rows.some((r) => r.team === sim.team && r.state === 'ready') && rows.length >= person.teams.length;
  while (!ready(await status(gw.base))) await sleep(100);
  log(`team ${sim.team}: ${PROJECTS} projects backfilled in ${(performance.now() - t0).toFixed(0)} ms`);
  // a large backfill spends its minute's sync budget (its calls are counted, never refused): the steady state is measured
  // from the next minute on (the bound stated until then counts the wait; STALENESS_AFTER_BACKFILL=1 measures it too)
  if (process.env.STALENESS_AFTER_BACKFILL !== '1') {
    log(`waiting ${(60 - (Date.now() / 1000) % 60).toFixed(0)} s for the next minute (the backfill's calls count in this one)`);
    await sleep(60_000 - (Date.now() % 60_000) + 1_000);
  }
  const projects: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await v1(sim, person.api_key, `/v1/projects?team_id=${sim.team}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    projects.push(...(page.data as { id: string }[]).map((p) => p.id));
    cursor = page.next_cursor;
  } while (cursor);
  const empty: string[] = [];
  for (const p of projects) if ((await v1(sim, person.api_key, `/v1/renders?project_id=${p}&limit=1`)).data.length === 0) empty.push(p);
  // (a world whose projects all hold renders — STALENESS_SCALE — makes renders in its own projects)
  const pool = empty.length > ACTIVE ? empty : projects;
  const active = pool.slice(0, ACTIVE);
  const quiet = pool.slice(ACTIVE);

  // the legacy list, read every POLL_MS until told to stop
  let polling = true;
  let reads = 0;
  const poller = (async () => {
    while (polling) {
      const started = performance.now();
      const limit = made.size + 50 + (reads++ % 50);
      const r = await get(gw, `/renders?sort=-date_created&limit=${limit}&fields=title,status`);
      const body = (await r.json()) as { data?: { title: string; status: string }[] };
      const at = Date.now();
      for (const item of body.data ?? []) {
        const m = made.get(item.title);
        if (!m) continue;
        m.seenAt ??= at;
        if (item.status === 'complete') m.completeSeenAt ??= at;
      }
      await sleep(Math.max(0, POLL_MS - (performance.now() - started)));
    }
  })();
  const rows: Row[] = [];
  const sampler = setInterval(() => void status(gw.base).then((s) => { const r = s.find((x) => x.team === sim.team); if (r) rows.push(r); }), 500);

  // one render a second in the active projects, one every QUIET_EVERY seconds in a quiet one
  const start = Date.now();
  for (let i = 0; i < SECONDS; i++) {
    await sleep(Math.max(0, start + i * 1_000 - Date.now()));
    const make = async (project: string, quietOne: boolean) => {
      const name = `staleness ${made.size} ${quietOne ? 'quiet' : 'active'}`;
      const bound = (await status(gw.base)).find((x) => x.team === sim.team)?.bound_ms ?? Number.NaN;
      const r = await v1(sim, person.api_key, '/v1/renders', { project_id: project, name });
      made.set(name, { name, id: r.id, project, quiet: quietOne, createdAt: ms(r.created_at), bound });
    };
    await make(active[i % active.length]!, false);
    if (QUIET_EVERY > 0 && i % QUIET_EVERY === QUIET_EVERY - 1 && quiet.length > 0) await make(quiet[Math.floor(i / QUIET_EVERY) % quiet.length]!, true);
  }
  log(`${made.size} renders made; waiting for the list to show every one complete`);
  const deadline = Date.now() + 300_000;
  while ([...made.values()].some((m) => m.completeSeenAt === undefined) && Date.now() < deadline) await sleep(500);
  polling = false;
  await poller;
  clearInterval(sampler);
  for (const m of made.values()) {
    const r = await v1(sim, person.api_key, `/v1/renders/${m.id}`);
    if (r.status === 'complete') m.completeAt = ms(r.updated_at);
  }

  const all = [...made.values()];
  const table = (label: string, xs: number[], of: number) =>
    `| ${label} | ${xs.length}/${of} | ${secs(quantile(xs, 0.5))} | ${secs(quantile(xs, 0.95))} | ${secs(quantile(xs, 0.99))} | ${secs(Math.max(...xs))} |`;
  const appear = (quietOnes: boolean) => all.filter((m) => m.quiet === quietOnes && m.seenAt !== undefined).map((m) => m.seenAt! - m.createdAt);
  // a status change of a render the list showed before it completed (re-polled at every sync), and of one it first showed complete
  const changed = (before: boolean) => all
    .filter((m) => m.completeAt !== undefined && m.completeSeenAt !== undefined && (m.seenAt! < m.completeSeenAt!) === before)
    .map((m) => m.completeSeenAt! - m.completeAt!);
  const spread = (f: (r: Row) => number) => (rows.length === 0 ? '–' : `${Math.min(...rows.map(f))}–${Math.max(...rows.map(f))}`);
  const range = (f: (r: Row) => number) => (rows.length === 0 ? '–' : `${secs(Math.min(...rows.map(f)))} – ${secs(Math.max(...rows.map(f)))}`);
  // seen later than the bound stated before it was made (a poll period of slack: the list is read every POLL_MS)
  // the syncs seen (their starts, sampled every 500 ms): the longest wait between two
  const starts = [...new Set(rows.map((r) => r.last_sync_started).filter((x): x is string => x !== null))].map((x) => Date.parse(x)).sort((a, b) => a - b);
  const gaps = starts.slice(1).map((x, i) => x - starts[i]!);
  const late = all.filter((m) => m.seenAt === undefined || !(m.seenAt - m.createdAt <= m.bound + POLL_MS));
  const worst = Math.max(...all.map((m) => ((m.seenAt ?? Infinity) - m.createdAt) / m.bound));
  const out = [
    `### Staleness without webhooks${SCALE === 'tiny' ? '' : ` (world \`${SCALE}\`)`}: one team of ${PROJECTS} projects, a render a second in ${ACTIVE} of them for ${SECONDS} s`
      + (QUIET_EVERY > 0 ? `, one every ${QUIET_EVERY} s in a quiet one` : ''),
    '',
    `Legacy list read every ${POLL_MS} ms (${reads} reads). Stated on /_gateway/index during the run: bound_ms ${range((r) => r.bound_ms)}, `
      + `active_bound_ms ${range((r) => r.active_bound_ms)}, active_projects ${spread((r) => r.active_projects)}, `
      + `sync calls in a minute up to ${rows.length === 0 ? '–' : Math.max(...rows.map((r) => r.sync_calls_last_minute))}.`,
    '',
    '| from v1 to a legacy list | renders | p50 | p95 | p99 | max |',
    '|---|---|---|---|---|---|',
    table('created, active projects', appear(false), all.filter((m) => !m.quiet).length),
    table('created, quiet projects', appear(true), all.filter((m) => m.quiet).length),
    table('processing → complete, listed before', changed(true), all.length),
    table('processing → complete, first listed complete', changed(false), all.length),
    '',
    `Seen later than the bound_ms stated just before it was made (+ ${POLL_MS} ms, the poll): **${late.length} of ${all.length}**; `
      + `the latest, ${worst.toFixed(2)} × its bound. Syncs seen: ${starts.length}, the longest time between two starts `
      + `${secs(Math.max(0, ...gaps))}, p50 ${secs(quantile(gaps, 0.5))}.`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  await stop(gw.proc);
  await stop(sim.proc);
}
