import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../app.js';
import { legacyStandin } from '../compare/legacy-standin.js';
import { createDeps, type Deps } from '../deps.js';
import { createLogger } from '../log/logger.js';

/**
 * Starts the legacy stand-in beside a gateway's store: a reference gateway (its own scratch store, the same v1, the
 * same users and keys, the same JWT settings) answers as the old system would; the uuid pairs go to the gateway's store.
 */
export async function startStandin(deps: Deps, port: number, host = '127.0.0.1'): Promise<{ url: string; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'legacy-standin-'));
  const config = Object.freeze({ ...deps.config, DATABASE_URL: join(dir, 'reference.db'), ROUTE_MODES: undefined, routeModes: {}, LEGACY_BASE_URL: undefined });
  const refDeps = await createDeps(config, createLogger('silent'), { v1BaseUrl: deps.v1.options.baseUrl });
  for (const u of await deps.users.list()) {
    const full = await deps.users.byEmail(u.email);
    await refDeps.users.create({
      id: u.id, email: u.email, passwordHash: full?.passwordHash ?? null, firstName: u.firstName, lastName: u.lastName, role: u.role,
      v1Key: (await deps.users.v1Key(u.id)) ?? '', v1UserId: u.v1UserId, status: u.status === 'active' ? 'active' : 'unbound',
    });
  }
  const reference = await buildApp(refDeps);
  await reference.ready();
  const standin = legacyStandin({ reference, referenceIds: refDeps.ids, importPairs: (pairs) => deps.idMap.importPairs(pairs) });
  const url = await standin.app.listen({ port, host });
  return {
    url,
    async close() {
      await standin.app.close();
      await reference.close();
      await refDeps.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
