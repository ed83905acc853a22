import { readFileSync } from 'node:fs';

const start = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/);

/** The node flags the gateway runs with in production: those of `npm start` (the Dockerfile's CMD has the same). */
export const PRODUCTION_NODE_FLAGS: readonly string[] = start.filter((a) => a.startsWith('--'));

/** The environment `npm start` sets before node (`NAME=value` words; the Dockerfile's ENV has the same). */
export const PRODUCTION_ENV: Readonly<Record<string, string>> = Object.fromEntries(
  start.filter((a) => /^[A-Z_][A-Z0-9_]*=/.test(a)).map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]),
);
