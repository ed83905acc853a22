/**
 * The scale model against the code: a real gateway (SQLite, its clock the simulator's manual clock) over the simulator
 * over HTTP, its replica holding the teams one key reaches, ticked every 250 ms of simulated time for four minutes with
 * every team kept read and no renders created; the simulator counts the sync's v1 calls of the last three minutes. The
 * model simulates the same teams (their projects, one key, no webhooks) with the same settings. One process, seconds.
 * usage: tsc -p tsconfig.bench.json && node dist/bench/scale-model-check.js   (BENCH_CHECK_SCALE=demo|small|bench)
 */
import { readFileSync } from 'node:fs';
import { startGateway } from '../test/helpers/gateway.js';
import { DEFAULT_SETTINGS, simulateSync, zipfShares, type Costs, type Team } from './scale-model-core.js';

const scale = process.env.BENCH_CHECK_SCALE ?? 'demo';
const costs = (JSON.parse(readFileSync(new URL('../../bench/scale-costs.json', import.meta.url), 'utf8')) as { costs: Costs }).costs;
const gw = await startGateway({ INDEX_ACTIVE_MS: '3600000', LOG_LEVEL: 'silent' }, { scale }, { simClock: true });
const sim = gw.s.sim;
await gw.addUser(0, 'check@example.com');
const teamIds = gw.s.keys[0]!.teams.map((t) => t.id);
await gw.deps.index!.syncNow(teamIds);
// renders still moving in the seeded world end; the first syncs see them final
sim.clock.advance(60_000);
const calls = () => [...sim.stats].filter(([k]) => k !== 'GET /v1/teams' && k !== 'GET /v1/me').reduce((n, [, v]) => n + v, 0);
const index = gw.deps.index!;
let before = 0;
for (let ms = 0; ms < 4 * 60_000; ms += DEFAULT_SETTINGS.tickMs) {
  if (ms === 60_000) before = calls();
  sim.clock.advance(DEFAULT_SETTINGS.tickMs);
  for (const id of teamIds) {
    const t = await index.load(id);
    if (t) t.readAt = sim.world.clock.now();
  }
  await index.tick();
}
const real = (calls() - before) / 3;
const teams: Team[] = [];
for (const [i, id] of teamIds.entries()) {
  const t = (await index.load(id))!;
  teams.push({ id: i, renders: Math.max(1, t.size), projectShares: zipfShares(t.projects.size), key: 1, webhooks: false, readDraw: 1 });
}
const model = simulateSync({ teams, keys: 1 }, teams, { name: 'check', createdPerSec: 0, readShare: 1 }, costs, DEFAULT_SETTINGS);
process.stdout.write(`${JSON.stringify({
  scale, teams: teams.length, projects: teams.map((t) => t.projectShares.length), codeCallsPerMin: real, modelCallsPerMin: model.callsPerMin,
  ratio: Number((real / model.callsPerMin).toFixed(3)), byEndpoint: Object.fromEntries(sim.stats),
})}\n`);
await gw.close();
