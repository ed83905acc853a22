import type { Equivalent, GroupKey, StepArgs } from './equivalent.js';
import { callNeeds, comparesParts, comparesTimes, listParam, mainCall, oneLine, singular, statusTable } from './snippet-common.js';
import { JQ_LIKE } from './snippet-like.js';
import { jqFilter } from './snippet-filter.js';
import { JQ_DERIVE, jqDerive, onCall, shProcessIds, uuidName } from './snippet-derive.js';
import { jqChildren, jqRelate, shChildIds, uuidFile } from './snippet-joins.js';

/**
 * The curl rendering of an equivalent (src/migrate/snippets.ts renders all three): a POSIX sh script of curl calls with
 * the cursor loop, each call's items in a JSON file, then the client steps as one jq program. Pure.
 */

/** The environment variable a curl script reads a parameter from (`account.name` → `ACCOUNT_NAME`). */
export const envName = (name: string) => name.toUpperCase().replace(/[^A-Z0-9]+/g, '_');

/**
 * jq's time helpers: a v1 time in ms (seconds or ms given); an ISO 8601 date in ms (a date alone is midnight, no zone UTC,
 * an offset taken off — the held-out check of issue 39 found the zone ignored; null: null).
 */
export const JQ_TIMES = 'def ms: if . == null then null elif . < 100000000000 then . * 1000 else . end; ' +
    'def instant: if . == null then null else (if test("[T ]") then . else . + "T00:00:00" end) | ' +
    'capture("^(?<d>[0-9]{4}-[0-9]{2}-[0-9]{2})[T ](?<t>[0-9]{2}:[0-9]{2}(:[0-9]{2})?)' +
    '(\\\\.(?<f>[0-9]+))?(?<z>Z|[+-][0-9]{2}(:?[0-9]{2})?)?$") | ' +
    '((.d + "T" + (.t | if length == 5 then . + ":00" else . end) + "Z") | fromdateiso8601) * 1000 + (((.f // "") + "000")[0:3] | tonumber) - ' +
    '(if (.z // "Z") == "Z" then 0 else (.z | (if .[0:1] == "-" then -1 else 1 end) * ' +
    '((.[1:3] | tonumber) * 60 + (.[3:] | ltrimstr(":") | if . == "" then 0 else tonumber end)) * 60000) end) end; ';

/** The jq program of a client step (`$S`: v1 status → legacy status; parameters from the environment). */
/** A group key's value of the item in jq (a part of a date: a number string, as the legacy API keys it). */
function jqGroupKey(k: GroupKey): string {
  const val = k.field === 'status' ? '($S[.status // ""] // .status)' : `.${k.field}`;
  return k.part ? `(${val} | part("${k.part}") | if . == null then null else tostring end)` : val;
}

function jqStep(a: StepArgs): string {
  const val = (f: string) => (f === 'status' ? '($S[.status // ""] // .status)' : `.${f}`);
  const env = (p: string) => `$ENV.${envName(p)}`;
  switch (a.op) {
    case 'derive':
      return onCall(a, 'jq', jqDerive(a));
    case 'children':
      return jqChildren(a);
    case 'relate':
      return jqRelate(a);
    case 'constant':
      // (on the items of call `on`: its slurped variable bound again, for the steps after)
      return a.on ? `([$${a.on}[0] | map(.${a.field} = ${JSON.stringify(a.value)})]) as $${a.on} | .` : `map(.${a.field} = ${JSON.stringify(a.value)})`;
    case 'merge':
      return `sort_by(${a.desc ? '-' : ''}.created_at)`;
    case 'filter':
      return jqFilter(a, val, env);
    case 'search':
      return `map(select([.name, $S[.status // ""]] | map(select(type == "string") | like(${env(a.param)}; "in"; true)) | any))`;
    case 'sort':
      // a stable sort per key, the last key first (as the Python snippet does); a descending one between two reverses, so
      // that its ties keep the order the later keys gave them (held-out check of issue 39: `sort_by(.name, .created_at)`
      // dropped the second key's direction and the first's collation)
      return [...a.keys].reverse()
        .map((k) => {
          const key = `${val(k.field)}${k.number ? ' | tonumber' : ''} | textkey`;
          return k.desc ? `reverse | sort_by(${key}) | reverse` : `sort_by(${key})`;
        }).join(' | ');
    case 'page':
      return a.offset ? `.[(${env(a.offset)} | tonumber):((${env(a.offset)} | tonumber) + (${env(a.limit)} | tonumber))]`
        : `.[:(${env(a.limit)} | tonumber)]`;
    case 'keep':
      return `map(.${a.field} = ${env(a.param)})`;
    case 'aggregate': {
      // (one object a function: min of two fields is {min: {a: …, b: …}})
      const byFn = new Map<string, string[]>();
      let count: string | undefined;
      for (const f of a.fns) {
        let v: string;
        if (f.fn === 'count') v = 'length';
        else if (f.fn === 'countDistinct') v = `(map(.${f.field} | select(. != null) | tostring) | unique | length)`;
        else {
          // a v1 time (seconds or ms) as the legacy ISO date, its milliseconds kept
          v = `(map(.${f.field} | select(. != null) | if . < 100000000000 then . * 1000 else . end) | ${f.fn} | if . == null then null else ` +
            `((. / 1000 | floor | todate | sub("Z$"; "")) + "." + ((. % 1000 | floor | tostring) as $m | ("000" + $m)[($m | length):]) + "Z") end)`;
        }
        if (f.fn === 'count' && f.field === '*') { count = v; continue; }
        byFn.set(f.fn, [...(byFn.get(f.fn) ?? []), `${JSON.stringify(f.as)}: ${v}`]);
      }
      const parts = [...(count ? [`count: ${count}`] : []), ...[...byFn].map(([fn, kv]) => `${fn}: {${kv.join(', ')}}`)];
      if (!a.groups) return `[{${parts.join(', ')}}]`;
      // (a row per group: keyed by its keys' values, the aggregates over its items)
      const keys = a.groups.map((k) => `${JSON.stringify(k.as)}: (.[0] | ${jqGroupKey(k)})`).join(', ');
      return `group_by([${a.groups.map(jqGroupKey).join(', ')}]) | map({${keys}} + {${parts.join(', ')}})`;
    }
    case 'attach':
      return `(($${a.from}[0] | map({key: .id, value: .${a.field}}) | from_entries) as $by | map(.${a.as} = $by[.${a.by}]))`;
    case 'meta':
      return a.from ? `($${a.from}[0] | length) as $${a.count} | .` : `length as $${a.count} | .`;
    case 'count': {
      const n = a.of ? `{${JSON.stringify(a.of)}: length}` : 'length';
      const key = a.groupBy && a.part ? `(${val(a.groupBy)} | part("${a.part}") | if . == null then null else tostring end)` : a.groupBy ? val(a.groupBy) : '';
      const k = JSON.stringify(a.as ?? a.groupBy);
      if (a.groupBy && a.also) {
        const keys = [{ field: a.groupBy, as: a.as ?? a.groupBy, part: a.part }, ...a.also];
        const fields = keys.map((x) => `${JSON.stringify(x.as)}: (.[0] | ${jqGroupKey(x)})`).join(', ');
        return `group_by([${keys.map(jqGroupKey).join(', ')}]) | map({${fields}, count: ${n}})`;
      }
      const order = a.ordered ? ` | sort_by(.[${k}] == null, (.[${k}] // ${a.ordered === 'number' ? '"0" | tonumber' : '""'}))` : '';
      return a.groupBy
        ? `group_by(${key}) | map({${k}: (.[0] | ${key}), count: ${n}})${order}`
        : `[{count: ${n}}]`;
    }
  }
}

/**
 * Text in jq as the other languages compare it. `lower`: lower case in Latin (with Latin-1 and Latin Extended-A),
 * Greek and Cyrillic letters, as JavaScript's toLowerCase — jq's own `ascii_downcase` leaves `É` as it is (held-out
 * check of issue 39: a search for "CAFÉ" found nothing). `textkey`: the order the legacy collation gives, approximated
 * as the Python snippet does — letters first, accents stripped (Latin-1 and Latin Extended-A), case folded; then the
 * text itself; nulls last.
 */
const FOLDED = Array.from({ length: 0x180 - 0xc0 }, (_, i) => String.fromCodePoint(0xc0 + i).normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase());
export const JQ_TEXT = 'def lower: explode | map(if (. >= 65 and . <= 90) or (. >= 192 and . <= 222 and . != 215) or (. >= 913 and . <= 939 and . != 930) ' +
  'or (. >= 1040 and . <= 1071) then . + 32 elif . >= 1024 and . <= 1039 then . + 80 elif . == 376 then 255 ' +
  'elif ((. >= 256 and . <= 311) or (. >= 330 and . <= 375)) and . % 2 == 0 and . != 304 then . + 1 ' +
  'elif ((. >= 313 and . <= 328) or (. >= 377 and . <= 382)) and . % 2 == 1 then . + 1 else . end) | implode; ' +
  `def textkey: if . == null then [1] elif type == "string" then [0, (lower | explode | map(if . >= 192 and . < 384 then ${JSON.stringify(FOLDED)}[. - 192] ` +
  'else ([.] | implode) end) | add // ""), ' +
  '(explode | map(if . >= 65 and . <= 90 then . + 32 elif . >= 97 and . <= 122 then . - 32 else . end) | implode)] else [0, .] end; ';

/** The environment variables a curl script reads its parameters from, each once. */
const envNames = (e: Equivalent): string[] => [...new Set(['LIMIT', 'OFFSET', ...e.params.map((p) => envName(p.name))])];

/** A curl script (POSIX sh, curl and jq): the calls with the cursor loop, then the client steps as jq. */
export function renderCurl(e: Equivalent): string {
  const lines = [
    '#!/bin/sh',
    `# V1 (base URL) and KEY (a v1 key) in the environment; parameters too: ${envNames(e).join(', ')}`,
    'set -eu',
    '# (no call is piped: a failed call — a revoked key, a 404, a 429 — ends the script with an error, never with an empty answer)',
    'list() { # every item of a v1 list: next_cursor is passed until it is null (a short page is not the end)',
    '  CURSOR=',
    '  while :; do',
    '    PAGE=$(curl -sSf -G "$1" ${CURSOR:+--data-urlencode "cursor=$CURSOR"} -H "Authorization: Bearer $KEY")',
    `    printf '%s\\n' "$PAGE" | jq -c '.data[]'`,
    `    CURSOR=$(printf '%s\\n' "$PAGE" | jq -r '.next_cursor // empty'); [ -n "$CURSOR" ] || break`,
    '  done',
    '}',
    'one() {',
    '  BODY=$(curl -sSf "$1" -H "Authorization: Bearer $KEY")',
    `  printf '%s\\n' "$BODY" | jq -c 'if (.data | type) == "array" then .data[] else . end'`,
    '}',
  ];
  for (const c of e.calls) {
    const item = c.each ? singular(c.each) : null;
    let loopPath: string | null = null;
    const sh = (v: string) => {
      const m = /^\{([^}]+)\}$/.exec(v);
      if (!m) return v;
      const name = (m[1] ?? '').replace(/, optional$/, '');
      if (name === 'v1_status') return '$V1_STATUS';
      if (item && name.startsWith(`${item}.`)) {
        loopPath = `.${name.split('.').slice(1).join('.')}`;
        return `$${envName(name)}`;
      }
      return `$${envName(name)}`;
    };
    const path = c.path.replace(/\{[^}]+\}/g, sh);
    const qs = Object.entries(c.query).map(([k, v]) => `${k}=${sh(v)}`).join('&');
    const url = `"$V1${path}${qs ? `?${qs}` : ''}"`;
    lines.push(`# ${c.name}: ${c.why}`);
    if (c.method === 'POST') {
      const body = Object.entries(c.body ?? {}).filter(([, v]) => !v.includes('optional'));
      const args = body.map(([k, v]) => (k === 'values' ? `--argjson ${k} "${sh(v)}"` : `--arg ${k} "${sh(v)}"`)).join(' ');
      lines.push(`BODY=$(curl -sSf -X POST "$V1${path}" -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \\`);
      lines.push(`  -d "$(jq -n ${args} '{${body.map(([k]) => `${k}: $${k}`).join(', ')}}')")`);
      lines.push(`printf '%s\\n' "$BODY" | jq -s '.' > ${c.name}.json`);
      continue;
    }
    const table = JSON.stringify(e.statuses ?? {});
    const fetch = c.perStatus
      ? `for V1_STATUS in $(jq -rn --arg s "$STATUS" --argjson T '${table}' '$T[$s][]?'); do ${c.cursor ? 'list' : 'one'} ${url}; done`
      : `${c.cursor ? 'list' : 'one'} ${url}`;
    const list = c.each ? listParam(c.each) : undefined;
    if (list) {
      // each id of the list parameter, given as a JSON array or a comma-separated list
      // (a null among them names nothing: left out)
      const ids = `$(printf '%s' "$${envName(list)}" | tr -d '[]" ' | tr ',' '\\n' | sed '/^null$/d' | tr '\\n' ' ')`;
      lines.push(`for ${envName(item ?? '')} in ${ids}; do ${fetch}; done > ${c.name}.jsonl`);
    } else if (item && c.each) {
      const v = `${envName(item)}_${envName((loopPath ?? '.id').slice(1))}`;
      lines.push(`jq -r '.[] | ${loopPath ?? '.id'}' ${c.each}.json > ${c.name}.each`);
      // (each item given the id of the one it was read for: a file first, so a failed call still ends the script)
      const tag = c.tag ? ` > ${c.name}.part; jq -c --arg t "$${v}" '. + {${c.tag}: $t}' ${c.name}.part` : '';
      lines.push(`while read -r ${v}; do ${fetch}${tag}; done < ${c.name}.each > ${c.name}.jsonl`);
    } else {
      // (a parameter it needs left unset — null, `project _eq null` —: nothing read)
      const needs = callNeeds(c).map((n) => `[ -n "\${${envName(n)}:-}" ]`);
      lines.push(needs.length ? `if ${needs.join(' && ')}; then ${fetch}; fi > ${c.name}.jsonl` : `${fetch} > ${c.name}.jsonl`);
    }
    lines.push(`jq -s '.' ${c.name}.jsonl > ${c.name}.json`);
  }
  const steps = e.clientSteps.filter((s) => s.args).map((s) => jqStep(s.args as StepArgs));
  for (const s of e.clientSteps) if (s.args?.op === 'derive') lines.push(...shProcessIds(s.args, ('on' in s.args && s.args.on) || (mainCall(e) ?? 'none')));
  for (const s of e.clientSteps) if (s.args?.op === 'children') lines.push(...shChildIds(s.args));
  for (const s of e.clientSteps) {
    if (s.kind !== 'translate' && !s.args) lines.push(`# TODO (not done by this script): ${oneLine(s.detail)}`);
  }
  // a v1 time in ms (seconds or ms given); an ISO 8601 date in ms (its zone ignored: UTC; a date alone is midnight)
  const defs = comparesTimes(e) ? JQ_TIMES : '';
  // a part of a v1 time in UTC, as the legacy API reads it (week: the ISO week; weekday: 0 = Sunday; month from 1)
  const parts = comparesParts(e) ? 'def part($p): if . == null then null else (ms / 1000 | floor) as $s | ($s | gmtime) as $g | ' +
    '{year: $g[0], month: ($g[1] + 1), day: $g[2], hour: $g[3], minute: $g[4], second: ($g[5] | floor), weekday: $g[6], ' +
    'week: ($s | strftime("%V") | tonumber)}[$p] end; ' : '';
  const text = steps.some((x) => x.includes('lower') || x.includes('textkey') || x.includes('like(')) ? JQ_TEXT : '';
  const like = steps.some((x) => x.includes('like(')) ? JQ_LIKE : '';
  const counts = e.clientSteps.flatMap((x) => (x.args?.op === 'meta' ? [`${x.args.count}: $${x.args.count}`] : []));
  const program = `${steps.length ? steps.join(' | ') : '.'}${counts.length ? ` | {meta: {${counts.join(', ')}}, data: .}` : ''}`;
  // (a call's items another step reads: --slurpfile)
  const read = e.clientSteps.flatMap((x) => (x.args?.op === 'attach' || x.args?.op === 'relate' ? [x.args.from]
    : x.args?.op === 'meta' && x.args.from ? [x.args.from]
    : x.args?.op === 'children' ? [x.args.from, ...(x.args.on ? [x.args.on] : [])] : x.args?.op === 'constant' && x.args.on ? [x.args.on]
    : x.args?.op === 'derive' && x.args.field === 'output' ? [x.args.thumbnails, ...(x.args.on ? [x.args.on] : [])]
    : x.args?.op === 'derive' && 'on' in x.args && x.args.on ? [x.args.on]
    : x.args?.op === 'derive' && (x.args.field === 'date_created' || x.args.field === 'poster' || x.args.field === 'owner') ? [x.args.from] : []));
  const ids = e.clientSteps.flatMap((x) => (x.args?.op === 'derive' && (x.args.field === 'process_id' || x.args.field === 'legacy_uuid')
    ? [` --slurpfile ${uuidName(x.args)} ${uuidName(x.args)}.json`]
    : x.args?.op === 'children' && uuidFile(x.args) ? [` --slurpfile ${uuidFile(x.args)} ${uuidFile(x.args)}.json`] : [])).join('');
  const slurp = [...new Set(read)].map((f) => ` --slurpfile ${f} ${f}.json`).join('') + ids;
  const derive = e.clientSteps.some((x) => (x.args?.op === 'derive' && x.args.field !== 'download_ready') || (x.args?.op === 'children' && x.args.namespace))
    ? JQ_DERIVE : '';
  lines.push(`jq --argjson S '${JSON.stringify(statusTable(e))}'${slurp} '${defs}${parts}${text}${like}${derive}${program}' ${mainCall(e) ?? 'none'}.json`);
  return lines.join('\n');
}
