/**
 * The simulator for `npm run bench:staleness`, in its own process: the tiny world (or `--scale`'s) on the real clock
 * (seed 1), its first person's first team grown to `--projects` projects (those added have no renders yet, so the
 * gateway's backfill is quick). Prints the line `startSim` waits for, then the team's id.
 */
import { parseArgs } from 'node:util';
import { createSimulator } from '../src/sim/server.js';

const { values } = parseArgs({
  options: { port: { type: 'string', default: '0' }, projects: { type: 'string', default: '100' }, scale: { type: 'string', default: 'tiny' } },
});
const sim = createSimulator({ seed: 1, scale: values.scale as 'tiny', clock: 'real' });
const person = sim.world.listKeys()[0]!;
const team = person.teams[0]!.id;
const have = [...sim.world.projects.values()].filter((p) => p.teamId === team).length;
for (let i = have; i < Number(values.projects); i++) sim.world.addProject(team, `Bench project ${i}`);
const url = await sim.listen(Number(values.port));
process.stdout.write(`v1 simulator on ${url}\nteam ${team}\n`);
const stop = () => void sim.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
