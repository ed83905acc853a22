import { AdminError } from '../admin/operations.js';
import type { Deps } from '../deps.js';
import { repair, verifyTeam, type Drift } from '../replica/verify.js';
import type { V1Session } from '../v1/client.js';
import { out } from './out.js';
import { UsageError } from './usage-error.js';


/** The teams to work on: those named, else every team some bound key reaches. */
async function teamsFor(deps: Deps, named: readonly string[] | undefined): Promise<string[]> {
  if (named?.length) return [...new Set(named)];
  const ids = new Set<string>();
  for (const u of await deps.users.boundUsers()) {
    try {
      for (const t of (await (await deps.v1For(u.id)).teams()).data) ids.add(t.id);
    } catch (e) {
      process.stderr.write(`  ! the key of user ${u.id} was refused (${(e as Error).message}); its teams are skipped\n`);
    }
  }
  return [...ids].sort();
}

/** `legacy-gateway index status | sync | verify [--repair]`. */
export async function indexCommand(deps: Deps, action: string | undefined, named: readonly string[] | undefined, repairing = false): Promise<number> {
  const index = deps.index;
  if (!index) throw new AdminError('the render index is disabled (INDEX_ENABLED=false)');
  if (action === 'status') {
    for (const t of await index.status()) {
      const times = `last sync ${t.last_sync ?? '—'}  last webhook ${t.last_webhook ?? '—'}`;
      out(`${t.team}  ${t.state.padEnd(11)}  ${String(t.renders).padStart(7)} renders  ${times}`);
    }
    return 0;
  }
  if (action === 'sync') {
    const teams = await teamsFor(deps, named);
    // a named team no bound key reaches is refused before anything is written (its row would stay "backfilling")
    const unreached: string[] = [];
    if (named?.length) for (const team of teams) if (!(await deps.readers.userFor(team))) unreached.push(team);
    if (unreached.length > 0) {
      throw new AdminError(`no bound key reaches ${unreached.join(', ')}: nothing was synced (--team takes the id of a team a bound user's key ` +
        'reaches; index sync without --team syncs them all)');
    }
    for (const team of teams) {
      await index.syncNow([team]);
      const s = (await index.status()).find((x) => x.team === team);
      out(`${team}: ${s?.state ?? 'unknown'}, ${s?.renders ?? 0} renders in ${s?.projects ?? 0} projects, ${s?.sync_calls_last_minute ?? 0} v1 calls`);
    }
    return 0;
  }
  if (action === 'verify') {
    const drift: Drift[] = [];
    const sessions = new Map<string, V1Session | undefined>();
    const sessionFor = async (team: string) => {
      if (!sessions.has(team)) sessions.set(team, (await deps.readers.sessionFor(team, { onCall: () => undefined }, 'gateway-index-verify'))?.session);
      return sessions.get(team);
    };
    let unreachable = 0;
    for (const team of await teamsFor(deps, named)) {
      const session = await sessionFor(team);
      if (!session) { out(`${team}: no bound key reaches this team`); unreachable++; continue; }
      const found = await verifyTeam(index.store, session, team);
      for (const d of found) out(`${team}  ${d.kind}  ${d.id}${d.detail ? `  ${d.detail}` : ''}`);
      out(`${team}: ${found.length === 0 ? 'no drift' : `${found.length} differences`}`);
      drift.push(...found);
    }
    if (!repairing) return drift.length + unreachable > 0 ? 1 : 0;
    const done = await repair(index.store, drift, sessionFor, deps.clock.now());
    for (const team of done.teams) await deps.bus.publish('index_drop', team); // running instances read these teams again
    out(`repaired: ${done.rewritten} renders written from v1, ${done.removed} removed`);
    const left = drift.filter((d) => d.kind !== 'missing render' && d.kind !== 'extra render' && d.kind !== 'render differs');
    for (const d of left) out(`not repaired (run index sync): ${d.team}  ${d.kind}  ${d.id}`);
    return left.length + unreachable > 0 ? 1 : 0;
  }
  throw new UsageError(`unknown index command "${action ?? ''}" (sync, verify, status)`);
}
