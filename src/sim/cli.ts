import { parseArgs } from 'node:util';
import { SCALES } from './generator.js';
import { createSimulator } from './server.js';

const HELP = `npm run sim -- [options]: the v1 simulator on its own (every v1 endpoint, a generated world, loopback /_sim admin routes)

  --port 4010        the port to listen on (0: any free port)
  --host 127.0.0.1   the address to listen on
  --seed 1           the world's seed (the same seed and scale: the same world)
  --scale demo       the world's size: ${Object.keys(SCALES).join(', ')}
  --clock real       real, or manual (time moves only through POST /_sim/clock)
  --url-ttl 300      seconds a signed output URL lasts
  --help             this help

People and their keys: GET /_sim/keys on the simulator. The gateway's demo (npm start) starts its own simulator.`;

/** `npm run sim -- --port 4010 --seed 1 --scale demo --clock real` (`--url-ttl 300`: seconds a signed output URL lasts) */
function options() {
  try {
    return parseArgs({
      options: {
        port: { type: 'string', default: '4010' },
        host: { type: 'string', default: '127.0.0.1' },
        seed: { type: 'string', default: '1' },
        scale: { type: 'string', default: 'demo' },
        clock: { type: 'string', default: 'real' },
        'url-ttl': { type: 'string', default: '300' },
        help: { type: 'boolean' },
      },
    }).values;
  } catch (e) {
    // a mistyped option: one line and the usage exit code, no stack trace
    process.stderr.write(`${(e as Error).message.replace(/\. To specify a positional argument.*$/s, '')} (npm run sim -- --help lists the options)\n`);
    process.exit(2);
  }
}
const values = options();
if (values.help) {
  process.stdout.write(`${HELP}\n`);
  process.exit(0);
}
const problems: string[] = [];
if (!Object.hasOwn(SCALES, values.scale as string)) problems.push(`--scale must be one of ${Object.keys(SCALES).join(', ')} (got "${values.scale}")`);
if (!/^\d+$/.test(values.port as string) || Number(values.port) > 65535) problems.push(`--port must be a port number (got "${values.port}")`);
if (!/^\d+$/.test(values.seed as string)) problems.push(`--seed must be a whole number (got "${values.seed}")`);
const ttl = values['url-ttl'] as string;
if (!/^\d+$/.test(ttl) || Number(ttl) < 1) problems.push(`--url-ttl must be a whole number of seconds ≥ 1 (got "${ttl}")`);
if (values.clock !== 'real' && values.clock !== 'manual') problems.push(`--clock must be real or manual (got "${values.clock}")`);
if (problems.length > 0) {
  process.stderr.write(`${problems.join('\n')}\n`);
  process.exit(2);
}
const sim = createSimulator({
  seed: Number(values.seed),
  scale: values.scale as 'tiny',
  clock: values.clock === 'manual' ? 'manual' : 'real',
  urlTtlS: Number(ttl),
});
const url = await sim.listen(Number(values.port), values.host).catch((e: unknown) => {
  const code = (e as { code?: string }).code;
  const why = code === 'EADDRINUSE' ? 'already in use (EADDRINUSE); --port takes another' : (e as Error).message;
  process.stderr.write(`cannot listen on ${values.host}:${values.port}: ${why}\n`);
  return process.exit(1);
});
const keys = sim.world.listKeys();
process.stdout.write(`v1 simulator on ${url} (seed ${values.seed}, scale ${values.scale}); OpenAPI at ${url}/openapi.json\n`);
process.stdout.write(`people and keys: GET ${url}/_sim/keys  (${keys.length} people)\n`);
const stop = () => void sim.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
