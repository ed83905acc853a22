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
