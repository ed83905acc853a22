/**
 * A start-up failure the operator fixes outside the gateway (a port taken, a database down): one line naming the
 * variable to look at, no stack trace. `exitCode`: 1 (78 is kept for configuration errors).
 */
export class StartupError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
    this.name = 'StartupError';
  }
}

const LISTEN_CAUSES: Record<string, string> = {
  EADDRINUSE: 'is already in use (EADDRINUSE): another process listens there',
  EACCES: 'may not be used by this user (EACCES: ports under 1024 need privileges)',
  EADDRNOTAVAIL: 'is on an address this machine does not have (EADDRNOTAVAIL)',
};

/**
 * A listen that failed, as one line naming its variable (`PORT`, `SIM_PORT`, `METRICS_PORT`) and, for an address,
 * the host variable too; undefined for an error that is not about the address.
 */
export function listenProblem(e: unknown, variable: string, port: number, host: string, hostVariable?: string): string | undefined {
  const code = (e as { code?: unknown })?.code;
  const cause = typeof code === 'string' ? LISTEN_CAUSES[code] : undefined;
  if (!cause) return undefined;
  const where = hostVariable ? `${variable}=${port} on ${hostVariable}=${host}` : `${variable}=${port} (on ${host})`;
  return `${where} ${cause}; set ${variable} to a free port`;
}

/** Runs a listen, turning an address failure into a StartupError naming the variable; other errors pass as they are. */
export async function listening<T>(variable: string, port: number, host: string, listen: () => Promise<T>, hostVariable?: string): Promise<T> {
  try {
    return await listen();
  } catch (e) {
    const problem = listenProblem(e, variable, port, host, hostVariable);
    throw problem ? new StartupError(problem) : e;
  }
}

/**
 * Mapping files not found at all — a relative MAPPINGS_DIR read from a folder that is not the gateway's (the bin run
 * elsewhere): one line saying where they were looked for. Undefined for any other mapping problem.
 */
export function missingMappings(e: unknown, dir: string, cwd: string): string | undefined {
  const problems = (e as { problems?: unknown } | undefined)?.problems;
  if ((e as Error | undefined)?.name !== 'MappingError' || !Array.isArray(problems) || problems.length === 0) return undefined;
  if (!problems.every((p) => typeof p === 'string' && p.includes('ENOENT'))) return undefined;
  const absolute = dir.startsWith('/');
  const where = absolute ? dir : `${cwd.replace(/\/$/, '')}/${dir.replace(/^\.\//, '')}`;
  return `invalid mappings: no mapping files in ${where} (MAPPINGS_DIR=${dir}${absolute ? '' : ', read from the current folder'}): ` +
    `${absolute ? '' : 'run it from the gateway\'s folder, or '}set MAPPINGS_DIR to the gateway's mappings folder`;
}
