import type { StepArgsOf } from './equivalent-model.js';
import { LETTERS } from '../translate/records.js';
import { importedParam } from './equivalent-model.js';
import { jsParam } from './snippet-common.js';

/** A Python expression: the legacy uuid of the v1 id `id` — imported (the `<type>_uuids` parameter), else UUID v5 in `namespace`. */
export function pyUuid(namespace: string, id: string): string {
  const v5 = `str(uuid.uuid5(uuid.UUID(${JSON.stringify(namespace)}), ${id}))`;
  const imp = importedParam(namespace);
  return imp ? `((params.get(${JSON.stringify(imp)}) or {}).get(${id}) or ${v5})` : v5;
}

/**
 * A jq program with `$imp` bound first: the ids export's imported pairs of the type derived in `namespace` (the
 * `<type>_uuids` parameter, a JSON object in the environment; {} when not given).
 */
export function jqImported(namespace: string, program: string): string {
  const imp = importedParam(namespace);
  return imp ? `(($ENV.${imp.toUpperCase().replace(/[^A-Z0-9]+/g, '_')} // "") | if . == "" then {} else fromjson end) as $imp | ${program}` : program;
}

/** A jq expression: the legacy uuid of v1 id `$i` — `$imp`'s (see jqImported), else `v5` of its SHA-1 in `$<file>`. */
export const jqUuid = (namespace: string, file: string): string =>
  (importedParam(namespace) ? `($imp[$i] // ($${file}[0][$i] | v5))` : `($${file}[0][$i] | v5)`);

/**
 * A render's derived fields written out in each snippet language, as the gateway derives them (src/translate/records.ts,
 * src/translate/outputs.ts): `download_ready` (complete, with a master URL), `process_id` (RFC 4122 UUID v5 of the v1 id
 * in the gateway's process namespace) and `output` (v1 variants under the legacy keys — mappings/outputs.json; the
 * poster a still, else the project's thumbnail); a template's `slug`, `description` (HTML paragraphs), and `date_created`
 * and `poster` (its project's); an account's `owner` (its team's first admin, a v1 user id the report's id translation
 * turns into the legacy uuid). Pure.
 */
type Derive = StepArgsOf<'derive'>;
const SLOTS = ['high', 'medium', 'low'] as const;

/** The namespace's 16 bytes as octal escapes for sh's printf (POSIX printf has no \x). */
const octal = (uuid: string) => (uuid.replace(/-/g, '').match(/../g) ?? []).map((h) => `\\${parseInt(h, 16).toString(8).padStart(3, '0')}`).join('');

/**
 * The lines of a Node block defining `v5(id)`: the legacy uuid of a v1 id — the imported one the ids export pairs it with
 * (the `<type>_uuids` parameter), else the RFC 4122 UUID v5 of it in `namespace`.
 */
export const jsV5 = (namespace: string): string[] => [
  "    const { createHash } = await import('node:crypto');",
  `    const ns = Buffer.from(${JSON.stringify(namespace.replace(/-/g, ''))}, 'hex');`,
  ...(importedParam(namespace) ? [`    const imported = ${jsParam(importedParam(namespace) as string)} ?? {};`] : []),
  '    const v5 = (id) => {',
  ...(importedParam(namespace) ? ['      if (Object.hasOwn(imported, id)) return imported[id];'] : []),
  "      const d = createHash('sha1').update(Buffer.concat([ns, Buffer.from(id, 'utf8')])).digest();",
  '      d[6] = (d[6] & 0x0f) | 0x50; d[8] = (d[8] & 0x3f) | 0x80;',
  "      const h = d.subarray(0, 16).toString('hex');",
  '      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;',
  '    };',
];

export function jsDerive(a: Derive): string {
  switch (a.field) {
    case 'owner':
      return [
        "  { // owner: the team's first admin by joined_at (then by id)",
        '    const admins = new Map();',
        `    for (const y of r.${a.from} ?? []) if (y.role === 'admin') admins.set(y.team_id, [...(admins.get(y.team_id) ?? []), y]);`,
        '    const first = (t) => (admins.get(t) ?? []).sort((p, q) => p.joined_at - q.joined_at || p.id.localeCompare(q.id))[0]?.id ?? null;',
        '    out = out.map((x) => ({ ...x, owner: first(x.id) }));',
        '  }',
      ].join('\n');
    case 'slug':
      return [
        '  { // slug: the name in lower-case ASCII words joined by - (accents dropped, a few letters spelled out)',
        `    const L = ${JSON.stringify(LETTERS)};`,
        "    const slug = (s) => s.replace(/./gu, (c) => L[c] ?? c).normalize('NFKD').replace(/[\\u0300-\\u036f]/g, '').toLowerCase()",
        "      .replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');",
        '    out = out.map((x) => ({ ...x, slug: slug(x.name ?? \'\') }));',
        '  }',
      ].join('\n');
    case 'description':
      return [
        '  { // description: the text escaped, as HTML paragraphs (a blank line between them, <br> for a newline)',
        "    const E = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '\"': '&quot;', \"'\": '&#39;' };",
        "    const html = (t) => (t == null ? null : t.replace(/[&<>\"']/g, (c) => E[c]).split(/\\n{2,}/)",
        "      .map((p) => `<p>${p.replace(/\\n/g, '<br>')}</p>`).join(''));",
        '    out = out.map((x) => ({ ...x, description: html(x.description ?? null) }));',
        '  }',
      ].join('\n');
    case 'date_created':
    case 'poster': {
      const v = a.field === 'poster' ? 'p?.thumbnail_url ?? null'
        : 'p?.created_at == null ? null : new Date(p.created_at < 1e11 ? p.created_at * 1000 : p.created_at).toISOString()';
      return `  { // ${a.field}: the template's project's ${a.field === 'poster' ? 'thumbnail' : 'creation time'}\n` +
        `    const by = new Map((r.${a.from} ?? []).map((p) => [p.id, p]));\n` +
        `    out = out.map((x) => { const p = by.get(x.project_id); return { ...x, ${a.field}: ${v} }; });\n  }`;
    }
    case 'download_ready':
      return `  out = out.map((x) => ({ ...x, download_ready: x.status === 'complete' && typeof x.output?.[${JSON.stringify(a.master)}] === 'string' }));`;
    case 'process_id':
    case 'legacy_uuid':
      return [
        `  { // ${uuidName(a)}: the UUID v5 of the ${a.of ? `${a.of.path} ` : ''}v1 id in the gateway's ` +
          `${a.field === 'process_id' ? 'process' : 'id'} namespace (RFC 4122)`,
        ...jsV5(a.namespace),
        a.of ? `    out = out.map((x) => { const id = val(x, ${JSON.stringify(a.of?.path)}); return { ...x, ${a.of?.as}: id == null ? null : v5(id) }; });`
          : `    out = out.map((x) => ({ ...x, ${a.field}: v5(x.id) }));`,
        '  }',
      ].join('\n');
    case 'output':
      return [
        '  { // output: v1 variants under the legacy keys (the poster: a still, else the project\'s thumbnail)',
        `    const M = ${JSON.stringify(a.rule)};`,
        `    const thumbs = new Map((r.${a.thumbnails} ?? []).map((p) => [p.id, p.thumbnail_url ?? null]));`,
        '    const legacy = (o, thumb) => {',
        '      if (!o) return null;',
        '      const res = { poster: null, low: null, medium: null, high: null, master: o[M.master] ?? null };',
        '      const used = new Set([M.master]);',
        `      for (const slot of ${JSON.stringify(SLOTS)}) {`,
        '        const n = M.byName[slot].find((v) => o[v] !== undefined && !used.has(v));',
        '        if (n) { res[slot] = o[n]; used.add(n); }',
        '      }',
        '      const rest = Object.keys(o).filter((v) => !used.has(v) && !M.stills.includes(v) && !M.ignored.includes(v) && M.sizeOrder.includes(v))',
        '        .sort((a, b) => M.sizeOrder.indexOf(a) - M.sizeOrder.indexOf(b));',
        `      for (const slot of ${JSON.stringify(SLOTS)}) if (res[slot] === null && rest.length > 0) res[slot] = o[rest.shift()] ?? null;`,
        '      const still = M.stills.find((v) => o[v] !== undefined);',
        '      res.poster = still ? o[still] : thumb;',
        '      return res;',
        '    };',
        "    out = out.map((x) => ({ ...x, output: x.status === 'complete' ? legacy(x.output, thumbs.get(x.project?.id) ?? null) : null }));",
        '  }',
      ].join('\n');
  }
}

export function pyDerive(a: Derive): string {
  switch (a.field) {
    case 'owner':
      return [
        "    # owner: the team's first admin by joined_at (then by id)",
        `    admins = sorted((y for y in r.get(${JSON.stringify(a.from)}, []) if y.get("role") == "admin"), key=lambda y: (y["joined_at"], y["id"]))`,
        '    out = [dict(x, owner=next((y["id"] for y in admins if y["team_id"] == x["id"]), None)) for x in out]',
      ].join('\n');
    case 'slug':
      return [
        '    # slug: the name in lower-case ASCII words joined by - (accents dropped, a few letters spelled out)',
        '    import re',
        `    L = json.loads(${JSON.stringify(JSON.stringify(LETTERS))})`,
        '    def slug(s):',
        '        s = unicodedata.normalize("NFKD", "".join(L.get(c, c) for c in s))',
        '        s = "".join(c for c in s if not ("\\u0300" <= c <= "\\u036f")).lower()',
        '        return re.sub(r"[^a-z0-9]+", "-", s).strip("-")',
        '    out = [dict(x, slug=slug(x.get("name") or "")) for x in out]',
      ].join('\n');
    case 'description':
      return [
        '    # description: the text escaped, as HTML paragraphs (a blank line between them, <br> for a newline)',
        '    import re',
        '    def html(t):',
        '        if t is None:',
        '            return None',
        '        e = t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace(\'"\', "&quot;").replace("\'", "&#39;")',
        '        return "".join("<p>" + p.replace("\\n", "<br>") + "</p>" for p in re.split(r"\\n{2,}", e))',
        '    out = [dict(x, description=html(x.get("description"))) for x in out]',
      ].join('\n');
    case 'date_created':
    case 'poster': {
      const v = a.field === 'poster' ? 'p.get("thumbnail_url")'
        : '(None if p.get("created_at") is None else iso(p["created_at"] * 1000 if p["created_at"] < 1e11 else p["created_at"]))';
      return `    # ${a.field}: the template's project's ${a.field === 'poster' ? 'thumbnail' : 'creation time'}\n` +
        `    by = {p["id"]: p for p in r.get(${JSON.stringify(a.from)}, [])}\n` +
        `    out = [dict(x, ${a.field}=(lambda p: ${v})(by.get(x.get("project_id")) or {})) for x in out]`;
    }
    case 'download_ready':
      return `    out = [dict(x, download_ready=(x.get("status") == "complete" and ` +
        `isinstance((x.get("output") or {}).get(${JSON.stringify(a.master)}), str))) for x in out]`;
    case 'process_id':
    case 'legacy_uuid':
      return [
        `    # ${uuidName(a)}: the UUID v5 of the ${a.of ? `${a.of.path} ` : ''}v1 id in the gateway's ` +
          `${a.field === 'process_id' ? 'process' : 'id'} namespace (RFC 4122)`,
        '    import uuid',
        a.of ? `    out = [dict(x, ${a.of.as}=(lambda i: None if i is None else ${pyUuid(a.namespace, 'i')})` +
          `(val(x, ${JSON.stringify(a.of.path)}))) for x in out]`
          : `    out = [dict(x, ${a.field}=${pyUuid(a.namespace, 'x["id"]')}) for x in out]`,
      ].join('\n');
    case 'output':
      return [
        "    # output: v1 variants under the legacy keys (the poster: a still, else the project's thumbnail)",
        `    M = json.loads(${JSON.stringify(JSON.stringify(a.rule))})`,
        `    thumbs = {p["id"]: p.get("thumbnail_url") for p in r.get(${JSON.stringify(a.thumbnails)}, [])}`,
        '    def legacy_output(o, thumb):',
        '        if o is None:',
        '            return None',
        '        res = {"poster": None, "low": None, "medium": None, "high": None, "master": o.get(M["master"])}',
        '        used = {M["master"]}',
        `        for slot in ${JSON.stringify(SLOTS)}:`,
        '            n = next((v for v in M["byName"][slot] if v in o and v not in used), None)',
        '            if n is not None:',
        '                res[slot] = o[n]',
        '                used.add(n)',
        '        rest = sorted((v for v in o if v not in used and v not in M["stills"] and v not in M["ignored"] and v in M["sizeOrder"]),',
        '                      key=M["sizeOrder"].index)',
        `        for slot in ${JSON.stringify(SLOTS)}:`,
        '            if res[slot] is None and rest:',
        '                res[slot] = o.get(rest.pop(0))',
        '        still = next((v for v in M["stills"] if v in o), None)',
        '        res["poster"] = o[still] if still is not None else thumb',
        '        return res',
        '    out = [dict(x, output=(legacy_output(x.get("output"), thumbs.get((x.get("project") or {}).get("id")))',
        '                           if x.get("status") == "complete" else None)) for x in out]',
      ].join('\n');
  }
}

/** The jq of a derive step (`$process_id`, `$legacy_uuid`: v1 id → the hex SHA-1 the script computed; `$<call>`: its items). */
export function jqDerive(a: Derive): string {
  switch (a.field) {
    case 'owner':
      return `(($${a.from}[0] | map(select(.role == "admin")) | sort_by(.joined_at, .id)) as $adm | ` +
        'map(.id as $t | .owner = ([$adm[] | select(.team_id == $t)] | first | if . == null then null else .id end)))';
    case 'slug':
      return 'map(.slug = (.name // "" | slug))';
    case 'description':
      return 'map(.description = (.description | html))';
    case 'date_created':
    case 'poster':
      return `(($${a.from}[0] | map({key: .id, value: .}) | from_entries) as $pj | ` +
        `map(.${a.field} = ($pj[.project_id // ""] // {} | ${a.field === 'poster' ? '.thumbnail_url // null'
          : '.created_at | if . == null then null else isoms end'})))`;
    case 'download_ready':
      return `map(.download_ready = (.status == "complete" and ((.output // {})[${JSON.stringify(a.master)}] | type) == "string"))`;
    case 'process_id':
    case 'legacy_uuid':
      return jqImported(a.namespace, a.of
        ? `map(.${a.of.as} = (.${a.of.path} as $i | if $i == null then null else ${jqUuid(a.namespace, a.of.as)} end))`
        : `map(.${a.field} = (.id as $i | ${jqUuid(a.namespace, uuidName(a))}))`);
    case 'output':
      return `(($${a.thumbnails}[0] | map({key: .id, value: .thumbnail_url}) | from_entries) as $th | ` +
        `map(($th[.project.id // ""] // null) as $t | .output = (if .status == "complete" then (.output | legacy_output(${JSON.stringify(a.rule)}; $t)) ` +
        'else null end)))';
  }
}

/** A slug's characters from U+0080 to U+017F in jq (jq has no NFKD): each one's code points, as the gateway spells it. */
const SLUG_LETTERS = Array.from({ length: 0x180 - 0x80 }, (_, i) => {
  const c = String.fromCodePoint(0x80 + i);
  return [...(LETTERS[c] ?? c).normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase()].map((x) => x.codePointAt(0) as number);
});

/**
 * The jq definitions the derive steps use. `slug` spells out characters up to U+017F (Latin-1 and Latin Extended-A:
 * `º`, `²`, accents): a character past them that NFKD makes ASCII (an accented letter, a ligature) becomes a `-` where
 * the gateway keeps its letters (Node and Python normalise every character).
 */
export const JQ_DERIVE = 'def slug: explode | map(if . >= 65 and . <= 90 then [. + 32] elif . >= 128 and . < 384 then ' +
  `${JSON.stringify(SLUG_LETTERS)}[. - 128] else [.] end) | add // [] | implode | gsub("[^a-z0-9]+"; "-") | sub("^-+"; "") | sub("-+$"; ""); ` +
  'def html: if . == null then null else gsub("&"; "&amp;") | gsub("<"; "&lt;") | gsub(">"; "&gt;") | gsub("\\""; "&quot;") ' +
  '| gsub("\\u0027"; "&#39;") | [splits("\\n\\n+")] | map("<p>" + gsub("\\n"; "<br>") + "</p>") | add end; ' +
  'def isoms: (if . < 100000000000 then . * 1000 else . end) as $t | ($t / 1000 | floor | todate | sub("Z$"; "")) + "." + ' +
  '(($t % 1000 | floor | tostring) as $m | ("000" + $m) | .[($m | length):]) + "Z"; ' +
  'def v5: . as $h | ("0123456789abcdef" | explode | index($h[16:17] | explode)) as $n | ' +
  '$h[0:8] + "-" + $h[8:12] + "-5" + $h[13:16] + "-" + ("89ab" | .[($n % 4):($n % 4 + 1)]) + $h[17:20] + "-" + $h[20:32]; ' +
  'def legacy_output($M; $thumb): if . == null then null else . as $o ' +
  '| reduce ("high", "medium", "low") as $slot ' +
  '({used: [$M.master], out: {poster: null, low: null, medium: null, high: null, master: ($o[$M.master] // null)}}; ' +
  '. as $st | ([$M.byName[$slot][] | select(. as $n | $o[$n] != null and ($st.used | index([$n])) == null)] | first) as $n ' +
  '| if $n != null then .out[$slot] = $o[$n] | .used += [$n] else . end) ' +
  '| . as $st | ([$o | keys[] | select(. as $n | ($st.used | index([$n])) == null and ($M.stills | index([$n])) == null ' +
  'and ($M.ignored | index([$n])) == null and ($M.sizeOrder | index([$n])) != null)] ' +
  '| sort_by(. as $n | $M.sizeOrder | index([$n]))) as $rest ' +
  '| reduce ("high", "medium", "low") as $slot ({out: $st.out, rest: $rest}; ' +
  'if .out[$slot] == null and (.rest | length) > 0 then .out[$slot] = $o[.rest[0]] | .rest |= .[1:] else . end) ' +
  '| .out | .poster = ([$M.stills[] | select(. as $n | $o[$n] != null)] | first | if . == null then $thumb else $o[.] end) end; ';

/**
 * The sh lines that compute each item's SHA-1 for `process_id` or `legacy_uuid` (sha1sum, else macOS's `shasum`: neither,
 * the script stops), read by the jq program. `from`: the file of the items.
 */
export function shProcessIds(a: Derive, from: string): string[] {
  if (a.field !== 'process_id' && a.field !== 'legacy_uuid') return [];
  return shSha1Map(uuidName(a), a.namespace, from, uuidName(a), a.of?.path);
}

/** The field a uuid step writes (and the file of its SHA-1s in the curl script): its own, or the related item's `as`. */
export const uuidName = (a: Extract<Derive, { field: 'process_id' | 'legacy_uuid' }>): string => a.of?.as ?? (a.on ? `${a.on}_${a.field}` : a.field);

/**
 * A derive step onto the items of call `on` (a one-to-many list's children) rather than the answer's: the step's code run
 * with `out` bound to them, in each language.
 */
export function onCall(a: Derive, lang: 'js' | 'py' | 'jq', code: string): string {
  const on = 'on' in a ? a.on : undefined;
  if (!on) return code;
  if (lang === 'js') return `  { // (onto the items of ${on})
    let out = r.${on} ?? [];
${code.replace(/^/gm, '  ')}
    r.${on} = out;
  }`;
  if (lang === 'py') {
    const call = JSON.stringify(on);
    return [`    answer = out  # (onto the items of ${on})`, `    out = r.get(${call}, [])`, code, `    r[${call}] = out`, '    out = answer'].join('\n');
  }
  return `([$${on}[0] | ${code}]) as $${on} | .`;
}

/**
 * The sh lines writing `<to>.json`: each v1 id (at `path`) of the items in `<from>.json` → the hex SHA-1 of `namespace` and it (what
 * jq's `v5` makes a UUID v5 of). `what` names the field in the comment.
 */
export function shSha1Map(what: string, namespace: string, from: string, to: string, path = 'id'): string[] {
  return [
    `# ${what}: SHA-1 of the gateway's namespace (16 bytes) and the v1 id, made a UUID v5 in jq (sha1sum, or macOS's shasum)`,
    'SHA1=$(command -v sha1sum || command -v shasum) || { echo "sha1sum or shasum is needed" >&2; exit 3; }',
    `jq -r '.[].${path} // empty' ${from}.json | while read -r ID; do`,
    `  printf '%s %s\\n' "$ID" "$({ printf '${octal(namespace)}'; printf '%s' "$ID"; } | $SHA1 | cut -c1-40)"`,
    `done | jq -R -s 'split("\\n") | map(select(length > 0) | split(" ") | {key: .[0], value: .[1]}) | from_entries' > ${to}.json`,
  ];
}
