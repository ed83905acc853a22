import { parseArgs } from 'node:util';
import { createSimulator } from './server.js';

/** `npm run sim -- --port 4010 --seed 1 --scale demo --clock real` */
const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '4010' },
    host: { type: 'string', default: '127.0.0.1' },
    seed: { type: 'string', default: '1' },
    scale: { type: 'string', default: 'demo' },
    clock: { type: 'string', default: 'real' },
  },
});
const sim = createSimulator({
  seed: Number(values.seed),
  scale: values.scale as 'tiny',
  clock: values.clock === 'manual' ? 'manual' : 'real',
});
const url = await sim.listen(Number(values.port), values.host);
const keys = sim.world.listKeys();
process.stdout.write(`v1 simulator on ${url} (seed ${values.seed}, scale ${values.scale}); OpenAPI at ${url}/openapi.json\n`);
process.stdout.write(`people and keys: GET ${url}/_sim/keys  (${keys.length} people)\n`);
const stop = () => void sim.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
