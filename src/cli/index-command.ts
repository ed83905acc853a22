import { AdminError } from '../admin/operations.js';
import type { Deps } from '../deps.js';
import { repair, verifyTeam, type Drift } from '../replica/sync/verify.js';
import type { V1Session } from '../v1/client.js';
import { out } from './out.js';
import { startProgress, type ProgressOptions, type Sample } from './progress.js';
import { UsageError } from './usage-error.js';
import { v1Failure } from './v1-failure.js';

/** How the command reports progress (tests give a sink, a clock and their own ticks). */
export interface IndexCommandOptions {
  readonly progress?: Pick<ProgressOptions, 'sink' | 'now' | 'schedule' | 'lineEveryMs'>;
  /** The v1 asked, as said when it does not answer (its URL, where the URL came from, and what to do). */
  readonly v1?: { readonly where: string; readonly hint: string };
}

const warn = (line: string) => { process.stderr.write(`  ! ${line}\n`); };

/**
 * The teams to work on: those named, else every team some bound key reaches. A key whose teams could not be listed is
 * said on stderr, with the cause in its own words (v1 unreachable, or the key refused), and counted in `failed`.
 */
async function teamsFor(deps: Deps, named: readonly string[] | undefined, failed: { keys: number }, o: IndexCommandOptions): Promise<string[]> {
  if (named?.length) return [...new Set(named)];
  const ids = new Set<string>();
  for (const u of await deps.users.boundUsers()) {
    try {
      for (const t of (await (await deps.v1For(u.id)).teams()).data) ids.add(t.id);
    } catch (e) {
      failed.keys++;
      const who = (await deps.users.byId(u.id))?.email ?? `user ${u.id}`;
      const why = v1Failure(e);
      if (why.kind === 'refused') {
        warn(`v1 ${why.words.replace('the key', `the key of ${who}`)}: the teams it reaches were not listed (users rebind ${who} --key sk_…)`);
      } else {
        const cause = why.kind === 'other' ? `failed: ${why.words}` : why.kind === 'unreachable' ? `is ${why.words}${o.v1?.hint ?? ''}` : why.words;
        warn(`the teams of ${who}'s key could not be listed: v1 at ${o.v1?.where ?? deps.v1.options.baseUrl} ${cause}`);
      }
    }
  }
  return [...ids].sort();
}

/** What `index sync` says of a team it did not sync. */
function notSynced(deps: Deps, e: unknown, o: IndexCommandOptions): string {
  const why = v1Failure(e);
  if (why.kind === 'unreachable') return `v1 at ${o.v1?.where ?? deps.v1.options.baseUrl} is ${why.words}${o.v1?.hint ?? ''}`;
  return why.kind === 'other' ? why.words : `v1 ${why.words}`;
}

/** `legacy-gateway index status | sync | verify [--repair]`. */
export async function indexCommand(
  deps: Deps, action: string | undefined, named: readonly string[] | undefined, repairing = false, o: IndexCommandOptions = {},
): Promise<number> {
  const index = deps.replica;
  if (!index) throw new AdminError('the render index is disabled (INDEX_ENABLED=false)');
  if (action === 'status') {
    for (const t of await index.status()) {
      const times = `last sync ${t.last_sync ?? '—'}  last webhook ${t.last_webhook ?? '—'}`;
      out(`${t.team}  ${t.state.padEnd(11)}  ${String(t.renders).padStart(7)} renders  ${times}`);
    }
    return 0;
  }
  if (action === 'sync') {
    const failed = { keys: 0 };
    const teams = await teamsFor(deps, named, failed, o);
    if (teams.length === 0 && failed.keys === 0) {
      const anyone = (await deps.users.boundUsers()).length > 0;
      out(anyone ? 'nothing to sync: the bound users\' keys reach no team'
        : 'nothing to sync: no active user has a v1 key (legacy-gateway users add, users import, users rebind)');
      return 0;
    }
    // a named team no bound key reaches is refused before anything is written (its row would stay "backfilling")
    const unreached: string[] = [];
    try {
      if (named?.length) for (const team of teams) if (!(await deps.readers.userFor(team))) unreached.push(team);
    } catch (e) {
      throw new AdminError(`index sync --team: the teams the bound keys reach could not be listed: ${notSynced(deps, e, o)}; nothing was synced`);
    }
    if (unreached.length > 0) {
      throw new AdminError(`no bound key reaches ${unreached.join(', ')}: nothing was synced (--team takes the id of a team a bound user's key ` +
        'reaches; index sync without --team syncs them all)');
    }
    const left: string[] = [];
    // progress: the renders in the index of the teams synced so far and of the one under way (its backfill grows it)
    let counted = 0;
    let at = 0;
    const progress = startProgress({
      label: 'index sync', unit: 'renders', ...o.progress,
      sample: async () => {
        const team = teams[at];
        const s = team ? (await index.status()).find((x) => x.team === team) : undefined;
        const rest = teams.length - at - 1;
        return { done: counted + (s?.renders ?? 0), left: `team ${at + 1} of ${teams.length} (${team}), ${rest} team${rest === 1 ? '' : 's'} left` };
      },
    });
    try {
      for (const [i, team] of teams.entries()) {
        at = i;
        const before = (await index.status()).find((x) => x.team === team)?.last_sync ?? null;
        try {
          await index.syncNow([team]);
        } catch (e) {
          left.push(team);
          warn(`${team}: not synced: ${notSynced(deps, e, o)}`);
          continue;
        }
        const s = (await index.status()).find((x) => x.team === team);
        if (!s || s.state !== 'ready' || s.last_sync === before) {
          left.push(team);
          const idle = 'its v1 call budget is spent this minute (INDEX_SYNC_CALLS_PER_MIN, INDEX_SYNC_CALLS_PER_KEY_PER_MIN) or another instance ' +
            'is syncing it; run index sync again in a minute';
          warn(`${team}: not synced: ${s?.last_error ?? idle}`);
          continue;
        }
        counted += s.renders;
        out(`${team}: ${s.state}, ${s.renders} renders in ${s.projects} projects, ${s.sync_calls_last_minute} v1 calls`);
      }
    } finally {
      progress.stop();
    }
    if (left.length + failed.keys === 0) return 0;
    const keys = failed.keys ? `${failed.keys} bound key${failed.keys === 1 ? '' : 's'} could not be asked for their teams` : '';
    const teamsLeft = left.length ? `${left.length} of ${teams.length} teams were not synced (${left.join(', ')})` : '';
    throw new AdminError(`index sync did not finish: ${[teamsLeft, keys].filter(Boolean).join('; ')} — the causes are above`);
  }
  if (action === 'verify') {
    const drift: Drift[] = [];
    const sessions = new Map<string, V1Session | undefined>();
    const sessionFor = async (team: string) => {
      if (!sessions.has(team)) sessions.set(team, (await deps.readers.sessionFor(team, { onCall: () => undefined }, 'gateway-index-verify'))?.session);
      return sessions.get(team);
    };
    const failed = { keys: 0 };
    let unreachable = 0;
    const teams = await teamsFor(deps, named, failed, o);
    // progress: the teams compared with v1, then the extra renders a repair looks up on v1 one by one
    let at: Sample = { done: 0, total: teams.length, phase: 'comparing with v1', unit: 'teams' };
    const progress = startProgress({ label: 'index verify', unit: 'teams', ...o.progress, sample: () => at });
    let done: Awaited<ReturnType<typeof repair>> | undefined;
    try {
      for (const [i, team] of teams.entries()) {
        at = { ...at, done: i, note: `${drift.length} differences so far (${team})` };
        const session = await sessionFor(team);
        if (!session) { out(`${team}: no bound key reaches this team`); unreachable++; continue; }
        const found = await verifyTeam(index.store, session, team);
        for (const d of found) out(`${team}  ${d.kind}  ${d.id}${d.detail ? `  ${d.detail}` : ''}`);
        out(`${team}: ${found.length === 0 ? 'no drift' : `${found.length} differences`}`);
        drift.push(...found);
      }
      unreachable += failed.keys;
      if (!repairing) return drift.length + unreachable > 0 ? 1 : 0;
      let looked = 0;
      const live = new Set(drift.flatMap((d) => (d.live ? [d.id] : [])));
      const extra = drift.filter((d) => d.kind === 'extra render' && !live.has(d.id)).length;
      at = { done: 0, total: extra, phase: 'repairing: extra renders looked up', unit: 'renders' };
      done = await repair(index.store, drift, async (team) => {
        at = { ...at, done: looked++ };
        return sessionFor(team);
      }, deps.clock.now());
    } finally {
      progress.stop();
    }
    for (const team of done.teams) await deps.bus.publish('index_drop', team); // running instances read these teams again
    out(`repaired: ${done.rewritten} renders written from v1, ${done.removed} removed`);
    const left = drift.filter((d) => d.kind !== 'missing render' && d.kind !== 'extra render' && d.kind !== 'render differs');
    for (const d of left) out(`not repaired (run index sync): ${d.team}  ${d.kind}  ${d.id}`);
    return left.length + unreachable > 0 ? 1 : 0;
  }
  throw new UsageError(`unknown index command "${action ?? ''}" (sync, verify, status)`);
}
