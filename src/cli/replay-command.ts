import { readFileSync } from 'node:fs';
import { AdminError } from '../admin/operations.js';
import { replay, ReplayAuthError, ReplayInputError, ReplayModeError, reportText } from '../compare/replay.js';
import { Comparator } from '../compare/service.js';
import type { Deps } from '../deps.js';
import { CompareStore } from '../store/compare.js';
import { openDb } from '../store/db.js';
import { migrate } from '../store/migrations.js';
import { out } from './out.js';
import { UsageError } from './usage-error.js';

/** The options `replay` reads. */
export interface ReplayCommandOptions {
  readonly legacy?: string | undefined;
  readonly gateway?: string | undefined;
  readonly 'gateway-token'?: string | undefined;
  readonly threshold?: string | undefined;
  readonly writes?: boolean | undefined;
}

/** `legacy-gateway replay FILE.jsonl --legacy URL --gateway URL --gateway-token T`: the migration gate's exit code. */
export async function replayCommand(deps: Deps, file: string | undefined, values: ReplayCommandOptions): Promise<number> {
  if (!file || !values.legacy || !values.gateway || !values['gateway-token']) {
    throw new UsageError('replay needs FILE, --legacy, --gateway and --gateway-token');
  }
  const threshold = values.threshold === undefined ? 0.05 : Number(values.threshold);
  if (!(threshold >= 0 && threshold <= 1)) throw new UsageError('--threshold is a share between 0 and 1');
  const lines = readFileSync(file, 'utf8').split('\n');
  // results of this run only: an in-memory store; ids resolve through the gateway's own store
  const scratch = await openDb(':memory:');
  try {
    await migrate(scratch.kysely);
    const store = new CompareStore(scratch.kysely);
    const options = {
      legacyUrl: values.legacy, gatewayUrl: values.gateway, gatewayToken: values['gateway-token'], threshold,
      includeWrites: values.writes ?? false, source: file,
    };
    const r = await replay(lines, options, new Comparator(deps.ids, store, deps.mappings.comparison), store).catch((e: unknown) => {
      if (e instanceof ReplayModeError) e.message = `replay refused: ${e.message}`;
      if (e instanceof ReplayInputError) throw new AdminError(`replay: nothing was sent: ${e.message}`);
      throw e instanceof ReplayAuthError ? new AdminError(`replay stopped: ${e.message}`) : e;
    });
    out(reportText(r.report, threshold));
    const share = `${(threshold * 100).toFixed(1)} %`;
    if (r.refused.length > 0) {
      const named = r.refused.slice(0, 5).map((x) => `${x.at} (${x.status}${x.code ? ` ${x.code}` : ''} on ${x.request})`).join(', ');
      out(`not compared: ${r.refused.length} recorded request${r.refused.length === 1 ? '' : 's'} the legacy side refused with the recorded ` +
        `credentials (401/403): ${named}${r.refused.length > 5 ? ` and ${r.refused.length - 5} more` : ''}; record them again with a valid legacy token`);
    }
    if (r.failing.length > 0) out(`FAIL: over ${share}: ${r.failing.join(', ')}`);
    else if (r.refused.length > 0) out(`FAIL: every route compared is at or under ${share}, but ${r.refused.length} requests were not compared`);
    else out(`OK: every route at or under ${share}${r.skipped ? ` (${r.skipped} writes not replayed)` : ''}`);
    return r.exitCode;
  } finally {
    await scratch.close();
  }
}
