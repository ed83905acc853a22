import { readFileSync } from 'node:fs';

/** The node flags the gateway runs with in production: those of `npm start` (the Dockerfile's CMD has the same). */
export const PRODUCTION_NODE_FLAGS: readonly string[] = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } })
  .scripts.start.split(/\s+/).filter((a) => a.startsWith('--'));
