/**
 * The scale model against the code: a real gateway (SQLite, its clock the simulator's manual clock) over the simulator
 * over HTTP, its replica holding the teams one key reaches, ticked every 250 ms of simulated time for four minutes with
 * every team kept read and no renders created; the simulator counts the sync's v1 calls of the last three minutes. The
 * model simulates the same teams (their projects, one key, no webhooks) with the same settings. BENCH_CHECK_RATE renders
 * a second are created meanwhile (spread over the teams evenly, over each team's projects by the model's Zipf shares;
 * they move for the simulator's 4 s). Also the rows the store changed (SQLite's total_changes) beside the model's
 * statements. BENCH_CHECK_HOOKS teams (the first ones) get their renders' transitions as webhooks do (applied as the
 * receiver applies a delivery: the render written, the team's webhook time), a delivery a transition, and their secrets
 * are configured (issue 43: such a team is trusted, reconciled every WEBHOOK_RECONCILE_MS — measure over at least that
 * many minutes, BENCH_CHECK_MINUTES=21); the model's teams alike. One process, seconds.
 * usage: tsc -p tsconfig.bench.json && node dist/bench/scale-model-check.js
 *        (BENCH_CHECK_SCALE=demo|small|bench|wide, BENCH_CHECK_RATE=0, BENCH_CHECK_HOOKS=0)
 */
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { Rng } from '../src/sim/rng.js';
import { LIFECYCLE_MS, SCALES, type Scale } from '../src/sim/generator.js';
import { startGateway } from '../test/helpers/gateway.js';
import { startSim } from '../test/helpers/sim.js';
import { DEFAULT_SETTINGS, simulateSync, zipfShares, type Costs, type Team } from './scale-model-core.js';

// `wide`: two teams of 400 projects of 25 renders (a scale of this check only), where one sync does not fit a minute's budget
(SCALES as Record<string, Scale>).wide = { teams: 2, projectsPerTeam: 400, templatesPerProject: 1, rendersPerProject: 25, people: 4 };
const scale = (process.env.BENCH_CHECK_SCALE ?? 'demo') as keyof typeof SCALES;
const rate = Number(process.env.BENCH_CHECK_RATE ?? 0);
const hooks = Number(process.env.BENCH_CHECK_HOOKS ?? 0);
const costs = (JSON.parse(readFileSync(new URL('../../bench/scale-costs.json', import.meta.url), 'utf8')) as { costs: Costs }).costs;
const running = await startSim({ scale });
const teamIds = running.keys[0]!.teams.map((t) => t.id);
// the first BENCH_CHECK_HOOKS teams have webhooks registered (their secrets configured): trusted, as the model's are
const secrets = Object.fromEntries(teamIds.slice(0, hooks).map((id) => [id, `whsec_check_${id}`]));
const gw = await startGateway({ INDEX_ACTIVE_MS: '3600000', LOG_LEVEL: 'silent', WEBHOOK_SECRETS: JSON.stringify(secrets) }, {},
  { sim: running, simClock: true });
const sim = gw.s.sim;
await gw.addUser(0, 'check@example.com');
await gw.deps.replica!.syncNow(teamIds);
// renders still moving in the seeded world end; the first syncs see them final
sim.clock.advance(60_000);
const calls = () => [...sim.stats].filter(([k]) => k !== 'GET /v1/teams' && k !== 'GET /v1/me').reduce((n, [, v]) => n + v, 0);
const changes = async () => Number((await sql<{ n: number }>`select total_changes() as n`.execute(gw.deps.db.kysely)).rows[0]!.n);
const index = gw.deps.replica!;
const person = sim.world.people.get(gw.s.keys[0]!.user_id)!;
const projectsOf = new Map<string, string[]>();
for (const p of sim.world.projects.values()) if (teamIds.includes(p.teamId)) projectsOf.set(p.teamId, [...(projectsOf.get(p.teamId) ?? []), p.id]);
// the seeded world leaves one team without credits: renders are created in the others
const creating = teamIds.filter((id) => (sim.world.teams.get(id)?.credits ?? 0) > 0);
const rng = new Rng(3);
// webhooks: each transition of a render of the first BENCH_CHECK_HOOKS teams, applied as the receiver applies a delivery
const hooked = new Set(teamIds.slice(0, hooks));
const deliveries: Promise<void>[] = [];
let delivered = 0;
let deliveredBefore = 0;
sim.world.onTransition((tr) => {
  if (hooked.has(tr.render.teamId)) delivered++;
  if (hooked.has(tr.render.teamId)) deliveries.push(index.applyRender(sim.world.renderView(tr.render), { webhook: true }));
});
let before = 0;
let changedBefore = 0;
let owed = 0;
let created = 0;
// minutes measured after the first (BENCH_CHECK_MINUTES, 3): a team synced less than once a minute needs more
const minutes = Number(process.env.BENCH_CHECK_MINUTES ?? 3);
for (let ms = 0; ms < (minutes + 1) * 60_000; ms += DEFAULT_SETTINGS.tickMs) {
  if (ms === 60_000) {
    before = calls();
    changedBefore = await changes();
    deliveredBefore = delivered;
  }
  sim.clock.advance(DEFAULT_SETTINGS.tickMs);
  for (owed += (rate * DEFAULT_SETTINGS.tickMs) / 1000; owed >= 1; owed--) {
    const projects = projectsOf.get(creating[created % creating.length]!)!;
    const shares = zipfShares(projects.length);
    let u = rng.next();
    const at = shares.findIndex((w) => (u -= w) < 0);
    sim.world.createRender(person, { project_id: projects[at < 0 ? 0 : at]!, name: `check ${created++}` });
  }
  sim.world.tick();
  await Promise.all(deliveries.splice(0));
  for (const id of teamIds) {
    const t = await index.load(id);
    if (t) t.readAt = sim.world.clock.now();
  }
  await index.tick();
}
const real = (calls() - before) / minutes;
const rowsPerSec = ((await changes()) - changedBefore) / (minutes * 60);
const teams: Team[] = [];
for (const [i, id] of teamIds.entries()) {
  const t = (await index.load(id))!;
  // new renders: an even share for each team creating, none for the others
  const activity = creating.includes(id) ? 1 : 0;
  teams.push({ id: i, renders: t.size, activity, projectShares: zipfShares(t.projects.size), key: 1, webhooks: hooked.has(id), readDraw: 1 });
}
const moveS = Object.values(LIFECYCLE_MS).reduce((a, b) => a + b, 0) / 1000;
const simCosts: Costs = {
  ...costs, renderDurationS: { ...costs.renderDurationS, value: moveS },
  webhookDeliveriesPerRender: { ...costs.webhookDeliveriesPerRender, value: Object.keys(LIFECYCLE_MS).length },
};
const model = simulateSync({ teams, keys: 1 }, teams, { name: 'check', createdPerSec: rate, readShare: 1 }, simCosts, DEFAULT_SETTINGS, minutes);
process.stdout.write(`${JSON.stringify({
  scale, minutes, teams: teams.length, projects: teams.map((t) => t.projectShares.length), codeCallsPerMin: real, modelCallsPerMin: model.callsPerMin,
  ratio: Number((real / model.callsPerMin).toFixed(3)), createdPerSec: rate, hooks, modelHooked: model.hookedCallsPerMin,
  deliveriesPerSec: Number(((delivered - deliveredBefore) / (minutes * 60)).toFixed(2)), codeRowsChangedPerSec: Number(rowsPerSec.toFixed(2)),
  modelRowsPerSec: Number(model.syncRowsPerSec.toFixed(2)), modelStatementsPerSec: Number(model.syncWritesPerSec.toFixed(2)),
  byEndpoint: Object.fromEntries(sim.stats),
})}\n`);
if (process.env.BENCH_CHECK_DEBUG) process.stderr.write(`${JSON.stringify(await index.status())}\n`);
await gw.close();
await running.sim.close();
