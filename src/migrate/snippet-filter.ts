import { FLAG_TESTS, TEXT_TESTS, type FilterCond, type StepArgsOf } from './equivalent-model.js';
import { COMPARE, jsParam, PART_COMPARE, TIME_LISTS } from './snippet-common.js';
import { own } from '../lib/own.js';

/**
 * A filter step written out in each snippet language: each condition a test of an item (`x`, or `.` in jq) against its
 * parameter — as the legacy API tests it (text as SQL `LIKE`, dates as instants, parts of dates in UTC, flags either
 * way) — the items kept that pass every condition, or (`any`: an `_or` of different fields) every condition of one
 * branch. Pure.
 */
type Filter = StepArgsOf<'filter'>;

/** The branches of an `any` step, each its conditions in order. */
function branches(a: Filter): FilterCond[][] {
  const out: FilterCond[][] = [];
  for (const c of a.conds) (out[c.branch ?? 0] ??= []).push(c);
  return out.filter(Boolean);
}

/** A condition as a JavaScript predicate of `x`. */
function jsCond(c: FilterCond): string {
  const v = jsParam(c.param);
  const got = `val(x, '${c.field}')`;
  const flag = own(FLAG_TESTS, c.test);
  if (flag) {
    const has = flag === 'absent' || flag === 'present' ? 'v == null' : "v == null || v === ''";
    const yes = flag === 'absent' || flag === 'blank';
    return `(x) => { const v = ${got}; return (${has}) === ${yes ? '' : '!'}(${v} === true || ${v} === 'true'); }`;
  }
  const text = own(TEXT_TESTS, c.test);
  if (text) return `(x) => { const v = ${got}; return v != null && ${text.neg ? '!' : ''}like(v, ${v}, '${text.at}', ${text.ci}); }`;
  if (c.part) {
    const op = own(PART_COMPARE, c.test);
    const t = op ? `p != null && p ${op === '==' ? '===' : op === '!=' ? '!==' : op} Number(${v})`
      : `p != null && ${c.test === 'nin' ? '!' : ''}[].concat(${v}).map(Number).includes(p)`;
    return `(x) => { const p = part(${got}, '${c.part}'); return ${t}; }`;
  }
  const many = own(TIME_LISTS, c.test);
  if (many) {
    // (a time one of several instants, none of them, or outside a window: a null time is none of these)
    const t = many === 'out' ? `{ const [lo, hi] = [].concat(${v}).map(instant); return t != null && !(t >= lo && t <= hi); }`
      : `return t != null && ${many === 'nin' ? `![].concat(${v}).includes(null) && !` : ''}[].concat(${v}).some((d) => instant(d) === t);`;
    return `(x) => { const t = ms(${got}); ${t} }`;
  }
  const time = own(COMPARE, c.test);
  // (a null date given: `_neq null` keeps every dated item, any other comparison none — SQL's `= NULL`, `> NULL`)
  const test = time ? `ms(${got}) != null && (${v} == null ? ${c.test === 'tneq'} : ms(${got}) ${time} instant(${v}))`
    : c.test === 'in' ? `${got} != null && ${v}.includes(${got})`
      // (a null among the values: no item — SQL's NOT IN (…, NULL) is never true; the tenth held-out check kept them all)
      : c.test === 'nin' ? `${got} != null && !${v}.includes(null) && !${v}.includes(${got})`
        // (a null is never _neq a value: Directus writes NOT (field = value) — the reference's §4, null semantics — and
        // `_neq: null` is IS NOT NULL; the eighth held-out check: renders with no creator were kept)
        // (nor _eq or _in one: `= NULL` matches nothing — §4 again; the ninth held-out check: `_eq null` kept the null ones)
        : c.test === 'neq' ? `${got} != null && ${got} !== ${v}` : `${got} != null && ${got} === ${v}`;
  return `(x) => ${test}`;
}

export function jsFilter(a: Filter): string {
  if (!a.any) return a.conds.map((c) => `  out = out.filter(${jsCond(c)});`).join('\n');
  const each = branches(a).map((b) => `[${b.map(jsCond).join(', ')}]`).join(',\n    ');
  return `  { // the items one branch keeps (every test of it)\n    const branches = [${each}];\n` +
    '    out = out.filter((x) => branches.some((tests) => tests.every((t) => t(x))));\n  }';
}

/** A condition as a Python expression in `x`. */
function pyCond(c: FilterCond): string {
  const v = `params[${JSON.stringify(c.param)}]`;
  const got = `val(x, ${JSON.stringify(c.field)})`;
  const flag = own(FLAG_TESTS, c.test);
  if (flag) {
    const has = flag === 'absent' || flag === 'present' ? '(v is None)' : '(v is None or v == "")';
    const yes = flag === 'absent' || flag === 'blank';
    return `(lambda v: ${has} == (${yes ? '' : 'not '}${v} in (True, "true")))(${got})`;
  }
  const text = own(TEXT_TESTS, c.test);
  if (text) return `(lambda v: v is not None and ${text.neg ? 'not ' : ''}like(v, ${v}, "${text.at}", ${text.ci ? 'True' : 'False'}))(${got})`;
  if (c.part) {
    const op = own(PART_COMPARE, c.test);
    const t = op ? `p ${op} float(${v})` : `p ${c.test === 'nin' ? 'not in' : 'in'} [float(y) for y in (${v} if isinstance(${v}, list) else [${v}])]`;
    return `(lambda p: p is not None and ${t})(part(${got}, ${JSON.stringify(c.part)}))`;
  }
  const many = own(TIME_LISTS, c.test);
  if (many) {
    const at = `[instant(d) for d in (${v} if isinstance(${v}, list) else [${v}])]`;
    if (many === 'out') return `(lambda t, b: t is not None and not (b[0] <= t <= b[1]))(ms(${got}), ${at})`;
    if (many === 'nin') return `(lambda t, b: t is not None and None not in b and t not in b)(ms(${got}), ${at})`;
    return `(lambda t: t is not None and t in ${at})(ms(${got}))`;
  }
  const time = own(COMPARE, c.test);
  return time ? `ms(${got}) is not None and (${c.test === 'tneq' ? 'True' : 'False'} if ${v} is None else ms(${got}) ${time} instant(${v}))`
    : c.test === 'in' ? `${got} is not None and ${got} in ${v}` : c.test === 'nin' ? `${got} is not None and None not in ${v} and ${got} not in ${v}`
      : c.test === 'neq' ? `${got} is not None and ${got} != ${v}` : `${got} is not None and ${got} == ${v}`;
}

export function pyFilter(a: Filter): string {
  if (!a.any) return a.conds.map((c) => `    out = [x for x in out if ${pyCond(c)}]`).join('\n');
  const any = branches(a).map((b) => `(${b.map((c) => `(${pyCond(c)})`).join(' and ')})`).join('\n                       or ');
  return `    # the items one branch keeps (every test of it)\n    out = [x for x in out if ${any}]`;
}

type TextRule = (typeof TEXT_TESTS)[keyof typeof TEXT_TESTS];
type FlagRule = (typeof FLAG_TESTS)[keyof typeof FLAG_TESTS];
/** A list parameter in jq: a JSON array or comma-separated. */
const jqList = (param: string) => `(${param} | (if startswith("[") then fromjson else split(",") end))`;

/** A condition as a jq boolean of the item (`val`: the item's value; `env`: the parameter, from the environment). */
function jqCond(c: FilterCond, val: (field: string) => string, env: (param: string) => string): string {
  const value = val(c.field);
  const param = env(c.param);
  if (c.part) {
    const op = own(PART_COMPARE, c.test);
    if (op) return `(${value} | part("${c.part}")) as $p | $p != null and $p ${op} (${param} | tonumber)`;
    return `(${value} | part("${c.part}")) as $p | $p != null and (${jqList(param)} | map(tonumber) | index([$p])) ${c.test === 'nin' ? '== null' : '!= null'}`;
  }
  const flag = own(FLAG_TESTS, c.test) as FlagRule | undefined;
  if (flag) {
    // (the parameter "true" or "false", from the environment)
    const has = flag === 'absent' || flag === 'present' ? '$v == null' : '($v == null or $v == "")';
    const yes = flag === 'absent' || flag === 'blank';
    return `${value} as $v | (${has}) == ((${param} | tostring) ${yes ? '==' : '!='} "true")`;
  }
  const text = own(TEXT_TESTS, c.test) as TextRule | undefined;
  if (text) return `${value} as $v | $v != null and (($v | tostring) | like(${param}; "${text.at}"; ${text.ci}))${text.neg ? ' == false' : ''}`;
  const many = own(TIME_LISTS, c.test);
  if (many) {
    // (a time one of several instants, none of them, or outside a window)
    return `(${value} | ms) as $t | ([${jqList(param)} | .[] | instant]) as $b | $t != null and ` +
      (many === 'out' ? '(($t >= $b[0] and $t <= $b[1]) | not)' : many === 'in' ? '($b | index([$t])) != null'
        : '($b | index([null])) == null and ($b | index([$t])) == null');
  }
  const time = own(COMPARE, c.test);
  if (time) {
    return `(${value} | ms) as $t | (${param} | instant) as $i | $t != null and (if $i == null then ${c.test === 'tneq'} else $t ${time} $i end)`;
  }
  // (`index` of a list answers a position, null when absent)
  if (c.test === 'in') return `${value} as $v | $v != null and (${jqList(param)} | index([$v])) != null`;
  if (c.test === 'nin') return `${value} as $v | $v != null and (${jqList(param)} | index([null]) == null and index([$v]) == null)`;
  // (a boolean, download_ready, against the text the environment holds; a null is never _neq a value)
  const shown = `(${value} | if type == "boolean" then tostring else . end)`;
  return `${value} != null and ${shown} ${c.test === 'neq' ? '!=' : '=='} ${param}`;
}

export function jqFilter(a: Filter, val: (field: string) => string, env: (param: string) => string): string {
  if (!a.any) return a.conds.map((c) => `map(select(${jqCond(c, val, env)}))`).join(' | ');
  return `map(select(${branches(a).map((b) => `(${b.map((c) => `(${jqCond(c, val, env)})`).join(' and ')})`).join(' or ')}))`;
}
