import type { GroupKey, StepArgs, V1Call } from './equivalent.js';
import { callNeeds, expr, listParam, pathExpr, singular } from './snippet-common.js';
import { onCall, pyDerive } from './snippet-derive.js';
import { pyFilter } from './snippet-filter.js';
import { pyChildren, pyRelate } from './snippet-joins.js';

/** The Python snippet's calls and steps (src/migrate/snippets.ts writes the function around them). Pure. */

export function pyCall(c: V1Call): string {
  const q = `{${Object.entries(c.query).map(([k, v]) => `${JSON.stringify(k)}: ${expr(v, c.each, 'py')}`).join(', ')}}`;
  const path = pathExpr(c.path, c.each, 'py');
  let one: string;
  if (c.method === 'POST') {
    const body = `{${Object.entries(c.body ?? {}).map(([k, v]) => `${JSON.stringify(k)}: ${expr(v, c.each, 'py')}`).join(', ')}}`;
    one = `r[${JSON.stringify(c.name)}].append(post(${path}, {k: v for k, v in ${body}.items() if v is not None}))`;
  } else {
    const stop = c.stopAfter ? 'params.get("offset", 0) + params["limit"]' : 'None';
    const read = c.cursor ? `listing(${path}, ${q}, ${stop})` : `items(get(${path}, ${q}))`;
    const tagged = c.tag && c.each ? `(dict(y, ${c.tag}=${singular(c.each)}["id"]) for y in ${read})` : read;
    one = `r[${JSON.stringify(c.name)}].extend(${tagged})`;
  }
  const head = `    # ${c.why}\n    r.setdefault(${JSON.stringify(c.name)}, [])\n`;
  const needs = callNeeds(c).map((n) => `params.get(${JSON.stringify(n)}) is not None`);
  const loops: string[] = needs.length ? [`if ${needs.join(' and ')}:`] : [];
  const list = c.each ? listParam(c.each) : undefined;
  const over = list ? `[v for v in params[${JSON.stringify(list)}] if v is not None]` : `r[${JSON.stringify(c.each)}]`;
  if (c.each) loops.push(`for ${singular(c.each)} in ${over}:`);
  if (c.perStatus) loops.push('for v1_status in V1_STATUSES.get(params.get("status"), []):');
  return head + [...loops, one].map((l, i) => `${'    '.repeat(i + 1)}${l}`).join('\n');
}

export function pyStep(a: StepArgs): string {
  switch (a.op) {
    case 'derive':
      return onCall(a, 'py', pyDerive(a));
    case 'children':
      return pyChildren(a);
    case 'relate':
      return pyRelate(a);
    case 'constant': {
      const [to, of] = a.on ? [`r[${JSON.stringify(a.on)}]`, `r.get(${JSON.stringify(a.on)}, [])`] : ['out', 'out'];
      return `    ${to} = [dict(x, **{${JSON.stringify(a.field)}: json.loads(${JSON.stringify(JSON.stringify(a.value))})}) for x in ${of}]  # legacy only`;
    }
    case 'merge':
      return `    out.sort(key=lambda x: x["created_at"], reverse=${a.desc ? 'True' : 'False'})`;
    case 'filter':
      return pyFilter(a);
    case 'search':
      return `    s = params[${JSON.stringify(a.param)}]\n` +
        '    out = [x for x in out if any(isinstance(t, str) and like(t, s, "in", True) for t in (x.get("name"), STATUS.get(x.get("status"))))]';
    case 'sort':
      // a stable sort per key, last key first
      return [...a.keys].reverse()
        .map((k) => {
          const v = `val(x, ${JSON.stringify(k.field)})`;
          return `    out.sort(key=lambda x: text_key(${k.number ? `float(${v})` : v}), reverse=${k.desc ? 'True' : 'False'})`;
        }).join('\n');
    case 'page':
      return a.offset ? `    out = out[params["${a.offset}"]:params["${a.offset}"] + params["${a.limit}"]]` : `    out = out[:params["${a.limit}"]]`;
    case 'keep':
      return `    out = [dict(x, ${a.field}=params[${JSON.stringify(a.param)}]) for x in out]  # the value you keep yourself`;
    case 'aggregate': {
      const lines = ['    row = {}'];
      for (const f of a.fns) {
        const put = `row.setdefault(${JSON.stringify(f.fn)}, {})[${JSON.stringify(f.as)}]`;
        if (f.fn === 'count') lines.push(f.field === '*' ? '    row["count"] = len(out)' : `    ${put} = len(out)`);
        else if (f.fn === 'countDistinct') lines.push(`    ${put} = len({str(v) for v in (val(x, ${JSON.stringify(f.field)}) for x in out) if v is not None})`);
        else {
          lines.push(`    ts = [t * 1000 if t < 1e11 else t for t in (val(x, ${JSON.stringify(f.field)}) for x in out) if t is not None]`);
          lines.push(`    ${put} = iso(${f.fn}(ts)) if ts else None`);
        }
      }
      if (!a.groups) {
        lines.push('    out = [row]');
        return lines.join('\n');
      }
      // (a row per group: keyed by its keys' values, the aggregates over its items)
      const row = a.groups.map((k, i) => `${JSON.stringify(k.as)}: k[${i}]`).join(', ');
      return ['    groups = {}', '    for x in out:', `        groups.setdefault((${a.groups.map(pyGroupKey).join(', ')},), []).append(x)`,
        '    def group_row(k, out):', ...lines.map((l) => `    ${l}`), `        row.update({${row}})`, '        return row',
        '    out = [group_row(k, xs) for k, xs in groups.items()]'].join('\n');
    }
    case 'attach':
      return `    by = {y["id"]: y.get(${JSON.stringify(a.field)}) for y in r.get(${JSON.stringify(a.from)}, [])}\n` +
        `    out = [dict(x, ${a.as}=by.get(x.get(${JSON.stringify(a.by)}))) for x in out]`;
    case 'meta':
      return `    meta["${a.count}"] = len(${a.from ? `r.get(${JSON.stringify(a.from)}, [])` : 'out'})`;
    case 'count': {
      const n = (x: string) => (a.of ? `{${JSON.stringify(a.of)}: ${x}}` : x);
      if (!a.groupBy) return `    out = [{"count": ${n('len(out)')}}]`;
      if (a.also) {
        const keys = [{ field: a.groupBy, as: a.as ?? a.groupBy, part: a.part }, ...a.also];
        return `    groups = {}\n    for x in out:\n        k = (${keys.map(pyGroupKey).join(', ')},)\n` +
          '        groups[k] = groups.get(k, 0) + 1\n' +
          `    out = [{${keys.map((k, i) => `${JSON.stringify(k.as)}: k[${i}]`).join(', ')}, "count": ${n('n')}} for k, n in groups.items()]`;
      }
      const key = a.part ? `(lambda p: None if p is None else str(p))(part(val(x, ${JSON.stringify(a.groupBy)}), ${JSON.stringify(a.part)}))`
        : `val(x, ${JSON.stringify(a.groupBy)})`;
      const k = JSON.stringify(a.as ?? a.groupBy);
      const by = a.ordered === 'number' ? `float(g[${k}])` : `g[${k}]`;
      return `    groups = {}\n    for x in out:\n        k = ${key}\n        groups[k] = groups.get(k, 0) + 1\n` +
        `    out = [{${k}: k, "count": ${n('n')}} for k, n in groups.items()]` +
        (a.ordered ? `\n    out.sort(key=lambda g: (g[${k}] is None, ${by} if g[${k}] is not None else 0))  # the legacy order` : '');
    }
  }
}

/** A group key's value of item `x` in Python (a part of a date: a number string, as the legacy API keys it). */
const pyGroupKey = (k: GroupKey): string => (k.part
  ? `(lambda p: None if p is None else str(p))(part(val(x, ${JSON.stringify(k.field)}), ${JSON.stringify(k.part)}))`
  : `val(x, ${JSON.stringify(k.field)})`);

