/** v1 timestamps (seconds or milliseconds) → ISO 8601 with milliseconds and Z, as Directus `timestamp` fields. */
export type TimeUnit = 'auto' | 's' | 'ms';

/** Values below 1e11 are seconds (1e11 s is the year 5138; 1e11 ms is 1973). */
export function toIso(v: number | null, unit: TimeUnit): string | null {
  if (v === null || !Number.isFinite(v)) return null;
  return new Date(epochMs(v, unit)).toISOString();
}

/** A v1 timestamp in epoch milliseconds, by the configured unit. */
export function epochMs(v: number, unit: TimeUnit): number {
  return unit === 'ms' ? v : unit === 's' ? v * 1000 : Math.abs(v) < 1e11 ? v * 1000 : v;
}
