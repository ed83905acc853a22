import { setFlagsFromString } from 'node:v8';
import type { Config } from './schema.js';

/**
 * Process-wide runtime settings that follow from the configuration (called once, by main). Only the
 * V8 heap growing factor today: V8 reads it at every full collection, so setting it at start-up is enough.
 */
export function applyRuntimeSettings(config: Pick<Config, 'HEAP_GROWTH_PERCENT'>, setFlags: (flags: string) => void = setFlagsFromString): string[] {
  const flags: string[] = [];
  if (config.HEAP_GROWTH_PERCENT > 0) flags.push(`--heap-growing-percent=${config.HEAP_GROWTH_PERCENT}`);
  for (const f of flags) setFlags(f);
  return flags;
}
