import { UsageError } from './usage-error.js';

/** One command of the help: the names it answers to (`group action`) and its lines as the whole help shows them. */
interface Entry { readonly names: readonly string[]; readonly lines: string }

const entry = (names: string | readonly string[], lines: string): Entry => ({ names: typeof names === 'string' ? [names] : names, lines });

const ENTRIES: readonly Entry[] = [
  entry('migrate', `  migrate                                   apply the store migrations`),
  entry('migrate report', `  migrate report [--client ID] [--format md|json|html] [--out FILE] [--skip-proof]
                                            the migration guide: per client (user:<id>, static:<token id>, with
                                            ~<user-agent family>) its query shapes, their v1 equivalents and snippets,
                                            proofs against v1, blocked fields and a verdict (docs/migration.md);
                                            --client names one (a client id, a principal or a label; without it
                                            the report lists them all)`),
  entry('migrate label', `  migrate label CLIENT --label TEXT | --clear
                                            names a client (user:<id>~<family>) or every client of a principal
                                            (user:<id>, static:<token id>) in the migration report`),
  entry('users add', `  users add --email E --password P --key sk_… [--first F] [--last L] [--role uuid] [--id uuid]
                                            (--password-stdin / --key-stdin, or LEGACY_GATEWAY_PASSWORD /
                                            LEGACY_GATEWAY_KEY, keep secrets out of the process list)`),
  entry('users import', `  users import FILE.json|FILE.csv [--check] [--skip-existing|--update]
                                            legacy export: id,email,password,first_name,last_name,role[,v1_key];
                                            --check reports every bad row and writes nothing; progress on stderr`),
  entry('users list', `  users list`),
  entry('users remove', `  users remove EMAIL|ID`),
  entry('users rebind', `  users rebind EMAIL|ID --key sk_…|--key-stdin`),
  entry(['users suspend', 'users activate'], `  users suspend EMAIL|ID / users activate EMAIL|ID`),
  entry('tokens create', `  tokens create EMAIL|ID [--name N]         prints the static token once`),
  entry('tokens list', `  tokens list [EMAIL|ID]`),
  entry('tokens revoke', `  tokens revoke TOKEN_ID`),
  entry('tokens import', `  tokens import FILE.json|FILE.csv          the legacy system's static tokens (a directus_users export: id,email,token)`),
  entry('ids import', `  ids import FILE.json|FILE.csv             legacy uuid ↔ v1 id pairs (legacy_id,v1_id)`),
  entry('ids export', `  ids export [--out FILE.csv]`),
  entry('mappings report', `  mappings report [--json]                  every legacy field and its source`),
  entry('compare link', `  compare link [--minutes 60] [--base URL]  a short-lived read-only browser link to the comparison report (signed with
                                            GATEWAY_ADMIN_TOKEN; in demo mode, the demo's own)`),
  entry('index sync', `  index sync [--team team_…]…              backfill (resuming at its checkpoints) or sync the render index of the given
                                            teams, or of every team a bound key reaches; progress on stderr; exits 1
                                            when a team it meant to sync was not synced (each named with the cause)`),
  entry('index verify', `  index verify [--team team_…]… [--repair] compare the index with live v1; prints each difference (the field, the
                                            index's value and v1's), exits 1 on drift; --repair writes v1's own state
                                            over differing, missing, foreign or future-dated renders (exit 0 when that
                                            leaves no drift; project and template drift: run index sync)`),
  entry('index status', `  index status                              per team: state, renders, last sync, last webhook`),
  entry('legacy-standin', `  legacy-standin [--port 8070]              a runnable stand-in for the legacy system (to try proxy/shadow/compare)`),
  entry('deprecations list', `  deprecations list [--json]                the deprecation rules as set (docs/migration.md#moving-clients-…)`),
  entry('deprecations set', `  deprecations set --file rules.json        replaces every rule with the file's {"rules":[…]}, validated first (a bad
                                            rule sets nothing and names its field); running gateways follow`),
  entry('deprecations clear', `  deprecations clear                        removes every rule: no header, brownout or sunset any more`),
  entry('deprecations progress', `  deprecations progress [--client ID] [--json]
                                            per rule and client: calls since the rule was set, refused, last call,
                                            days left (ID: user:<uuid> or static:<token id>)`),
  entry('replay', `  replay FILE.jsonl --legacy URL --gateway URL --gateway-token T [--threshold 0.05] [--writes]
                                            T: a gateway access token or static token of the user whose requests
                                            were recorded (the recorded Authorization goes to the legacy side)
                                            recorded legacy requests sent to both sides, diffed;
                                            exits 1 when a route's diff rate passes the threshold, or when the
                                            legacy side refused a recorded request (401/403: not compared)`),
];

const HEAD = `legacy-gateway — the gateway's operator command line`;
const FOOT = `Environment as for the gateway (DATABASE_URL, ENCRYPTION_KEY, V1_BASE_URL …; --v1 URL overrides V1_BASE_URL).
A failure is one line on stderr (--debug adds the stack trace); exit 78: configuration, 2: usage, 1: any other failure.
legacy-gateway COMMAND --help: the help of one command (legacy-gateway users --help: of the users commands).`;

/** The whole help. */
export const USAGE = `${HEAD}\n\n${ENTRIES.map((e) => e.lines).join('\n')}\n\n${FOOT}`;

/**
 * The help of `legacy-gateway [group [action]] --help`: the whole help with no group, the group's commands, or the one
 * command; a group or command that does not exist is a usage error.
 */
export function helpFor(group: string | undefined, action: string | undefined): string {
  if (!group) return USAGE;
  // a command without an action (replay FILE, legacy-standin) takes its next word as an argument
  const alone = ENTRIES.some((e) => e.names.includes(group) && !ENTRIES.some((x) => x.names.some((n) => n.startsWith(`${group} `))));
  const name = action && !alone ? `${group} ${action}` : group;
  const found = ENTRIES.filter((e) => e.names.some((n) => n === name || (name === group && n.split(' ')[0] === group)));
  if (found.length === 0) throw new UsageError(`unknown command "${name}" (legacy-gateway --help lists the commands)`);
  return `legacy-gateway ${name}\n\n${found.map((e) => e.lines).join('\n')}\n\n${FOOT}`;
}

/** The commands of a group that is no command itself (`users` → `users add`, `users list`, …); undefined for any other word. */
export function groupCommands(group: string): string[] | undefined {
  const names = ENTRIES.flatMap((e) => e.names);
  if (names.includes(group)) return undefined;
  const commands = [...new Set(names.filter((n) => n.startsWith(`${group} `)).map((n) => n.split(' ').slice(0, 2).join(' ')))];
  return commands.length > 0 ? commands : undefined;
}
