import type { StepArgsOf } from './equivalent-model.js';
import { jqImported, jqUuid, jsV5, pyUuid, shSha1Map } from './snippet-derive.js';

/**
 * The joins written out in each snippet language. `relate`: each item given the v1 object of a many-to-one relation (a
 * render's project, from the calls that read it), under `<relation>_object`. `children`, a one-to-many list: a project's `renders`, an account's `projects`
 * and `renders` — the v1 ids of the children whose parent is the item, in the legacy order (the gateway's and Directus's
 * primary-key order: each id's UUID v5, as the gateway derives legacy ids), the first of them up to the nested default
 * limit — and their number (`count(renders)`: `renders_count`, a number string); the user's `accounts` and
 * `accounts_owned` (the teams the key reaches, in /v1/teams' order; owned: its role admin). The proof reads the printed
 * lists back through the report's id translation (src/migrate/snippet-answer.ts). Pure.
 */
type Children = StepArgsOf<'children'>;
type Relate = StepArgsOf<'relate'>;

export const jsRelate = (a: Relate): string =>
  `  { // ${a.as}: the item of ${a.from} whose id is the item's ${a.by}\n` +
  `    const by = new Map((r.${a.from} ?? []).map((y) => [y.id, y]));\n` +
  `    out = out.map((x) => ({ ...x, ${a.as}: by.get(val(x, '${a.by}')) ?? null }));\n  }`;

export const pyRelate = (a: Relate): string =>
  `    # ${a.as}: the item of ${a.from} whose id is the item's ${a.by}\n` +
  `    by = {y["id"]: y for y in r.get(${JSON.stringify(a.from)}, [])}\n` +
  `    out = [dict(x, ${a.as}=by.get(val(x, ${JSON.stringify(a.by)}))) for x in out]`;

export const jqRelate = (a: Relate): string =>
  `(($${a.from}[0] | map({key: .id, value: .}) | from_entries) as $by | map(.${a.as} = ($by[.${a.by} // ""] // null)))`;

/** What the step gives each item, as a comment. */
function says(a: Children): string {
  const which = a.by === null ? `every item of ${a.from}${a.admin ? ' where the role is admin' : ''}`
    : `the ${a.from} whose ${a.by} is its id`;
  const order = a.namespace ? ', in legacy-id order (UUID v5 of the v1 id)' : '';
  const first = a.limit === null ? '' : `, the first ${a.limit}`;
  return `${a.field}: the v1 ${a.objects ? 'objects' : 'ids'} of ${which}${order}${first}${a.count ? `; ${a.field}_count their number (a string)` : ''}`;
}

export function jsChildren(a: Children): string {
  const from = `(r.${a.from} ?? [])`;
  // (the objects themselves where fields are read through the list: `projects.title`)
  const cut = a.limit === null ? 'ids' : `ids.slice(0, ${a.limit})`;
  const set = [
    ...(a.list ? [`${JSON.stringify(a.field)}: ${a.objects ? `${cut}.map((id) => objects.get(id))` : cut}`] : []),
    ...(a.count ? [`${JSON.stringify(`${a.field}_count`)}: String(ids.length)`] : []),
  ].join(', ');
  // (the answer's items, or those of call `on`)
  const to = a.on ? `r.${a.on}` : 'out';
  const of = a.on ? `(r.${a.on} ?? [])` : 'out';
  if (a.by === null) {
    const ids = `${from}${a.admin ? ".filter((y) => y.role === 'admin')" : ''}.map((y) => y.id)`;
    return [`  { // ${says(a)}`, `    const ids = ${ids};`, `    ${to} = ${of}.map((x) => ({ ...x, ${set} }));`, '  }'].join('\n');
  }
  return [
    `  { // ${says(a)}`,
    ...(a.namespace ? jsV5(a.namespace) : []),
    '    const kids = new Map();',
    ...(a.objects ? [`    const objects = new Map(${from}.map((y) => [y.id, y]));`] : []),
    // (each child once: a project read twice gives its renders twice)
    `    for (const y of ${from}) { const k = val(y, '${a.by}'); if (!kids.has(k)) kids.set(k, new Set()); kids.get(k).add(y.id); }`,
    `    ${to} = ${of}.map((x) => {`,
    `      const ids = ${a.namespace
      ? '[...(kids.get(x.id) ?? [])].map((id) => [v5(id), id]).sort((p, q) => (p[0] < q[0] ? -1 : p[0] > q[0] ? 1 : 0)).map((p) => p[1])'
      : '[...(kids.get(x.id) ?? [])]'};`,
    `      return { ...x, ${set} };`,
    '    });',
    '  }',
  ].join('\n');
}

export function pyChildren(a: Children): string {
  const from = `r.get(${JSON.stringify(a.from)}, [])`;
  const cut = (ids: string) => `${ids}${a.limit === null ? '' : `[:${a.limit}]`}`;
  const set = (ids: string) => [
    ...(a.list ? [`${JSON.stringify(a.field)}: ${a.objects ? `[objects[i] for i in ${cut(ids)}]` : cut(ids)}`] : []),
    ...(a.count ? [`${JSON.stringify(`${a.field}_count`)}: str(len(${ids}))`] : []),
  ].join(', ');
  const to = a.on ? `r[${JSON.stringify(a.on)}]` : 'out';
  const of = a.on ? `r.get(${JSON.stringify(a.on)}, [])` : 'out';
  if (a.by === null) {
    return [`    # ${says(a)}`, `    ids = [y["id"] for y in ${from}${a.admin ? ' if y.get("role") == "admin"' : ''}]`,
      `    ${to} = [dict(x, **{${set('ids')}}) for x in ${of}]`].join('\n');
  }
  return [
    `    # ${says(a)}`,
    ...(a.namespace ? ['    import uuid'] : []),
    '    kids = {}',
    ...(a.objects ? [`    objects = {y["id"]: y for y in ${from}}`] : []),
    `    for y in ${from}:`,
    `        kids.setdefault(val(y, ${JSON.stringify(a.by)}), {})[y["id"]] = True`,
    a.namespace
      ? `    kids = {k: sorted(v, key=lambda i: ${pyUuid(a.namespace, 'i')}) for k, v in kids.items()}`
      : '    kids = {k: list(v) for k, v in kids.items()}',
    `    ${to} = [dict(x, **{${set('kids.get(x["id"], [])')}}) for x in ${of}]`,
  ].filter(Boolean).join('\n');
}

/** The jq file a step's v1 ids are hashed into for their legacy order (`renders_uuid`). */
export const uuidFile = (a: Children): string | null => (a.namespace ? `${a.on ? `${a.on}_` : ''}${a.field}_uuid` : null);

/** The jq of the step (`$<from>`: the call's items, slurped; `$<field>_uuid`: v1 id → the SHA-1 `v5` makes a UUID of). */
export function jqChildren(a: Children): string {
  const cut = a.limit === null ? '$ids' : `$ids[:${a.limit}]`;
  const set = [
    ...(a.list ? [`.${a.field} = ${a.objects ? `(${cut} | map(. as $i | $objects[$i]))` : cut}`] : []),
    ...(a.count ? [`.${a.field}_count = ($ids | length | tostring)`] : []),
  ].join(' | ');
  // (the items of call `on`: its slurped variable bound again, for the steps after)
  const onto = (program: string) => (a.on ? `([$${a.on}[0] | ${program}]) as $${a.on} | .` : program);
  if (a.by === null) {
    return onto(`(($${a.from}[0]${a.admin ? ' | map(select(.role == "admin"))' : ''} | map(.id)) as $ids | map(${set}))`);
  }
  const file = uuidFile(a);
  const order = file && a.namespace ? ` | sort_by(. as $i | ${jqUuid(a.namespace, file)})` : '';
  const objects = a.objects ? `($${a.from}[0] | map({key: .id, value: .}) | from_entries) as $objects | ` : '';
  const imported = (program: string) => (a.namespace ? jqImported(a.namespace, program) : program);
  const kids = `($${a.from}[0] | group_by(.${a.by}) | map({key: .[0].${a.by}, value: (map(.id) | unique${order})}) | from_entries) as $kids`;
  return onto(imported(`${objects}(${kids} | map(($kids[.id] // []) as $ids | ${set}))`));
}

/** The sh lines hashing the children's v1 ids for their legacy order (none when the call's order is kept). */
export function shChildIds(a: Children): string[] {
  const file = uuidFile(a);
  return file && a.namespace ? shSha1Map(a.field, a.namespace, a.from, file) : [];
}
