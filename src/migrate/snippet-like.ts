import type { Equivalent } from './equivalent.js';
import { TEXT_TESTS } from './equivalent-model.js';
import { own } from '../lib/own.js';

/**
 * The legacy API's text tests in each snippet language, as the gateway makes them (`src/query/like.ts`, held to Directus
 * on PostgreSQL): the value is a SQL LIKE pattern (`%` any run, `_` one character, `\` makes the next plain); case-free,
 * the text is lowered as PostgreSQL lowers each character (`Σ` is `σ` wherever it stands, `İ` is `i`) and the value as
 * JavaScript lowers it. `like(text, value, at, ci)`: `at` is `in`, `start` or `end`. Pure text.
 */

/** Whether an equivalent's client steps test text (a text condition or a search): the snippets then carry `like`. */
export function testsText(e: Equivalent): boolean {
  return e.clientSteps.some((s) => s.args?.op === 'search' || (s.args?.op === 'filter' && s.args.conds.some((c) => own(TEXT_TESTS, c.test))));
}

/** Node (inside the snippet's function). */
export const NODE_LIKE = [
  '  // a text test as the legacy API makes it: SQL LIKE (% any run, _ one character, \\ escapes the next); case-free, the',
  '  // text lowered as PostgreSQL lowers each character (Σ is σ wherever it stands, İ is i), the value as JavaScript does',
  "  const fold = (s) => s.replace(/[\\u0130\\u03a3]/g, (c) => (c === '\\u0130' ? 'i' : '\\u03c3')).toLowerCase();",
  '  const like = (text, value, at, ci) => {',
  '    const t = [...(ci ? fold(String(text)) : String(text))];',
  '    const v = ci ? String(value).toLowerCase() : String(value);',
  "    const p = [...`${at === 'start' ? '' : '%'}${v}${at === 'end' ? '' : '%'}`]; // the pattern the legacy API makes",
  '    const steps = [];',
  '    for (let k = 0; k < p.length; k++) {',
  "      if (p[k] === '\\\\') {",
  '        if (k + 1 >= p.length) return false;',
  "        steps.push(['c', p[++k]]);",
  "      } else steps.push(p[k] === '%' ? ['%'] : p[k] === '_' ? ['_'] : ['c', p[k]]);",
  '    }',
  '    // matched without backtracking further than the last % (a cost of at most text × pattern)',
  '    let i = 0;',
  '    let j = 0;',
  '    let run = -1;',
  '    let from = 0;',
  '    while (i < t.length) {',
  '      const s = steps[j];',
  "      if (s && (s[0] === '_' || (s[0] === 'c' && s[1] === t[i]))) { i++; j++; }",
  "      else if (s && s[0] === '%') { run = j++; from = i; }",
  '      else if (run >= 0) { j = run + 1; i = ++from; }',
  '      else return false;',
  '    }',
  "    while (steps[j] && steps[j][0] === '%') j++;",
  '    return j === steps.length;',
  '  };',
];

/** Python (inside the snippet's function). */
export const PY_LIKE = [
  '    def fold(s):',
  '        # the text lowered as PostgreSQL lowers each character (Σ is σ wherever it stands, İ is i)',
  '        return s.replace("\\u0130", "i").replace("\\u03a3", "\\u03c3").lower()',
  '',
  '    def like(text, value, at, ci):',
  '        # a text test as the legacy API makes it: SQL LIKE (% any run, _ one character, \\ escapes the next)',
  '        t = fold(str(text)) if ci else str(text)',
  '        v = str(value).lower() if ci else str(value)',
  '        p = ("" if at == "start" else "%") + v + ("" if at == "end" else "%")  # the pattern the legacy API makes',
  '        steps, k = [], 0',
  '        while k < len(p):',
  '            if p[k] == "\\\\":',
  '                if k + 1 >= len(p):',
  '                    return False',
  '                k += 1',
  '                steps.append(("c", p[k]))',
  '            else:',
  '                steps.append(("%",) if p[k] == "%" else ("_",) if p[k] == "_" else ("c", p[k]))',
  '            k += 1',
  '        # matched without backtracking further than the last % (a cost of at most text × pattern)',
  '        i = j = 0',
  '        run, start = -1, 0',
  '        while i < len(t):',
  '            s = steps[j] if j < len(steps) else None',
  '            if s and (s[0] == "_" or (s[0] == "c" and s[1] == t[i])):',
  '                i, j = i + 1, j + 1',
  '            elif s and s[0] == "%":',
  '                run, start, j = j, i, j + 1',
  '            elif run >= 0:',
  '                start += 1',
  '                i, j = start, run + 1',
  '            else:',
  '                return False',
  '        while j < len(steps) and steps[j][0] == "%":',
  '            j += 1',
  '        return j == len(steps)',
  '',
];

/**
 * jq: `like($v; $at; $ci)` tests the input text. jq has no Unicode case mapping: `lower` (JQ_TEXT) covers Latin, Greek
 * and Cyrillic; `pgfold` adds the letters elsewhere that fold to them (İ, the Kelvin sign, ẞ, the Ǆ/ǅ digraphs) as
 * PostgreSQL folds the text; `jslower` folds the value as JavaScript does (İ is i + U+0307, a word's last Σ is ς).
 * The pattern is a jq regular expression, which backtracks: a value of many `%` against a long title is slow in jq (the
 * node and Python matchers do not backtrack; the proof bounds a snippet's run to 30 s).
 */
export const JQ_LIKE = 'def pgfold: lower | explode | map(if . == 304 then 105 elif . == 8490 then 107 elif . == 7838 then 223 ' +
  'elif . == 452 or . == 453 then 454 elif . == 455 or . == 456 then 457 elif . == 458 or . == 459 then 460 else . end) | implode; ' +
  'def letter: (. >= 65 and . <= 90) or (. >= 97 and . <= 122) or (. >= 192 and . != 215 and . != 247); ' +
  'def jslower: explode as $c | [range(0; $c | length) as $i | $c[$i] | if . == 304 then 105, 775 ' +
  'elif . == 931 and $i > 0 and ($c[$i - 1] | letter) and ($i + 1 >= ($c | length) or ($c[$i + 1] | letter | not)) then 962 ' +
  'else . end] | implode | pgfold; ' +
  'def likere: explode | reduce .[] as $c ({re: "", esc: false}; ' +
  'if .esc then .re += ([$c] | implode | gsub("(?<x>[.*+?^${}()|\\\\[\\\\]\\\\\\\\/])"; "\\\\\\(.x)")) | .esc = false ' +
  'elif $c == 92 then .esc = true elif $c == 37 then .re += "[\\\\s\\\\S]*" elif $c == 95 then .re += "[\\\\s\\\\S]" ' +
  'else .re += ([$c] | implode | gsub("(?<x>[.*+?^${}()|\\\\[\\\\]\\\\\\\\/])"; "\\\\\\(.x)")) end) | if .esc then null else .re end; ' +
  'def like($v; $at; $ci): (if $ci then pgfold else . end) as $t | ($v | tostring | if $ci then jslower else . end | ' +
  '(if $at == "start" then "" else "%" end) + . + (if $at == "end" then "" else "%" end) | likere) as $re | ' +
  'if $re == null then false else ($t | test("^" + $re + "$")) end; ';
