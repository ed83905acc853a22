import { readFileSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { AdminError } from '../admin/operations.js';
import { buildApp } from '../app.js';
import type { Deps } from '../deps.js';
import { progressOf } from '../deprecate/progress.js';
import { RULE_LIMITS, type Rule } from '../deprecate/rules.js';
import { RulesError } from '../deprecate/service.js';
import { out } from './out.js';
import { UsageError } from './usage-error.js';

/** `legacy-gateway deprecations list | set --file F | clear | progress [--client ID]`. */
export async function deprecationsCommand(deps: Deps, argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv], allowPositionals: true,
    options: { file: { type: 'string' }, json: { type: 'boolean' }, client: { type: 'string' }, debug: { type: 'boolean' } },
  });
  const [action, extra] = positionals;
  // (--help is answered by src/cli/help.ts, without a store)
  if (!action) throw new UsageError('deprecations needs a command: list, set, clear or progress (legacy-gateway deprecations --help)');
  if (extra !== undefined) throw new UsageError(`deprecations ${action} takes no argument "${extra}" (legacy-gateway deprecations --help)`);
  const d = deps.deprecations;
  switch (action) {
    case 'list': {
      const rules = d.list();
      if (values.json) out(JSON.stringify({ rules: rules.map((s) => s.rule) }, null, 2));
      else if (!rules.length) out('no deprecation rules');
      else for (const s of rules) out(ruleLine(s.rule as Rule));
      return 0;
    }
    case 'set':
    case 'clear': {
      const body = action === 'clear' ? { rules: [] } : readRules(values.file);
      // the rules name legacy routes: the app's routes are known once it is built (nothing listens; no replica started)
      const app = await buildApp({ ...deps, replica: null });
      try {
        await app.ready();
        const set = await d.replace(body).catch((e: unknown) => {
          throw e instanceof RulesError ? new AdminError(`${values.file}: nothing was set: ${e.message}`) : e;
        });
        out(set.length ? `set ${set.length} rule${set.length === 1 ? '' : 's'}: ${set.map((s) => s.id).join(', ')}` : 'cleared: no deprecation rules');
      } finally {
        await app.close();
      }
      return 0;
    }
    case 'progress': {
      await d.flush();
      // a client as the migration report names it; any other text would only ever find no calls
      if (values.client !== undefined && !CLIENT_ID.test(values.client)) {
        throw new UsageError(
          `--client is a client as the migration report names it: user:<uuid>, user:<uuid>~<family> or static:<token id> (got "${values.client}")`,
        );
      }
      const principal = values.client?.split('~')[0];
      const progress = progressOf(d.list(), await d.calls(principal), deps.clock.now());
      if (values.json) { out(JSON.stringify(progress, null, 2)); return 0; }
      for (const p of progress) {
        const left = p.days_left === null ? 'no sunset' : `${p.days_left} days left (sunset ${p.sunset})`;
        out(`${p.rule}  ${p.route}  ${p.client}  ${p.mode}  ${left}`);
        if (!p.clients.length) out('    no calls since it was set');
        for (const c of p.clients) {
          out(`    ${c.client}  ${c.calls} call${c.calls === 1 ? '' : 's'}  ${c.refused} refused  ${c.observed} observed  last ${c.last_seen}`);
        }
      }
      if (!progress.length) out('no deprecation rules');
      return 0;
    }
    default:
      throw new UsageError(`unknown command "deprecations ${action}" (legacy-gateway deprecations --help lists them)`);
  }
}

/** A client id as the migration report names one (src/auth/client-id.ts). */
const CLIENT_ID = /^(user:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|static:\S+?)(~\S+)?$/i;

function readRules(file: string | undefined): unknown {
  if (!file) throw new UsageError('deprecations set needs --file rules.json');
  if (statSync(file).size > RULE_LIMITS.bodyBytes) throw new AdminError(`${file}: larger than ${RULE_LIMITS.bodyBytes} bytes`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as unknown;
  } catch (e) {
    throw new AdminError(`${file} is not JSON: ${(e as Error).message}`);
  }
}

function ruleLine(r: Rule): string {
  const windows = (r.brownouts ?? []).map((b) => `${b.start} ${b.minutes} min`).join(', ');
  return [r.id, r.match.route, r.match.client ?? '*', r.mode ?? 'enforce', `deprecated ${r.deprecation}`, r.sunset ? `sunset ${r.sunset}` : 'no sunset',
    windows ? `brownouts ${windows}` : '', r.link ?? ''].filter(Boolean).join('  ');
}
