import { errors } from '../errors/catalog.js';

/**
 * Text tests as Directus 10.10 on PostgreSQL makes them (measured on the oracle: test/fixtures/directus/text-answers.json).
 * `_contains`, `_starts_with`, `_ends_with` and their negations are SQL `LIKE '%v%'` with the value as it is: `%` in it
 * is any run of characters, `_` any one character, `\` makes the next one plain. The case-free ones (`_icontains`,
 * `_istarts_with`, `_iends_with`, `search`) are `LOWER(column) LIKE` the value lowered by JavaScript: the column folded
 * by PostgreSQL (each character's own lower case, whatever is around it: `Σ` is `σ` at a word's end too, `İ` is `i`),
 * the value by `toLowerCase` (`İ` is `i̇`, a final `Σ` is `ς`).
 */

/** PostgreSQL's `lower()` of a text: each character's own lower case (as JavaScript's, but for `İ` and a final `Σ`). */
export function pgLower(s: string): string {
  // JavaScript's lower case differs only for these two: İ (two characters) and Σ (ς at a word's end)
  return (/[\u0130\u03a3]/.test(s) ? s.replace(/[\u0130\u03a3]/g, (c) => (c === '\u0130' ? 'i' : '\u03c3')) : s).toLowerCase();
}

/** Whether `v` reads differently as a LIKE pattern than as plain text (it holds `%`, `_` or `\`). */
export const hasWildcards = (v: string): boolean => /[%_\\]/.test(v);

/** Whether a LIKE pattern ends with its escape character (PostgreSQL refuses it: Directus answers 500). */
export function endsWithEscape(pattern: string): boolean {
  let n = 0;
  for (let i = pattern.length - 1; i >= 0 && pattern[i] === '\\'; i--) n++;
  return n % 2 === 1;
}

/** The steps a LIKE test of one request may take past one a character, over all its texts (~50 ms). */
export const LIKE_EXTRA_STEPS = 20_000_000;

/**
 * The characters one request's text tests may walk in all, one step each (~0.2 s): a term that fails at once on every
 * character costs nothing past one a character, and 1 000 such terms over long titles held other users 6.7 s (attack
 * pass 20, N1). A search over 100 000 titles walks about 3 M.
 */
export const TEXT_WALK_STEPS = 100_000_000;

const tooCostly = (pattern: string) => errors.invalidQuery([
  `The pattern "${pattern.length > 60 ? `${pattern.slice(0, 60)}…` : pattern}" is too costly to look for: the question's text tests ` +
    'go back over the texts more than the gateway allows a request (wildcards, long values nearly met along long texts, many ' +
    'terms); use fewer terms, fewer wildcards or shorter values',
]);

/**
 * The bytes of marks one request's whole-column searches may keep (a byte a row of the column searched, for as long as
 * its question runs): past them, a text term is tested row by row — 2 000 terms over 100 000 titles held 206 MB of marks
 * (review of 84e22ce). 4 MiB: four searches of a million-row team, forty of a 100 000-row one.
 */
export const MARKS_KEPT_BYTES = 4 * 1024 * 1024;

/**
 * The work of one request's text tests, whatever the number of terms: the characters every test walks (TEXT_WALK_STEPS),
 * and the steps past one a character that LIKE tests and the title column's byte search take (LIKE_EXTRA_STEPS) —
 * attack pass 19, F1: the budget was a term's, so 1 000 terms of a 150 KB SEARCH took 1 000 budgets and held the
 * instance 68 s. Past either, the question is refused as too costly.
 */
export class TextWork {
  private used = 0;
  private walked = 0;
  private marked = 0;
  /** Whether one more whole-column search may keep the marks of its `rows` (`MARKS_KEPT_BYTES` a request). */
  mayScan(rows: number): boolean {
    if (this.marked + rows > MARKS_KEPT_BYTES) return false;
    this.marked += rows;
    return true;
  }
  spend(steps: number, pattern: string): void {
    if ((this.used += steps) > LIKE_EXTRA_STEPS) throw tooCostly(pattern);
  }
  /** Characters walked (TEXT_WALK_STEPS in all). */
  walk(chars: number, pattern: string): void {
    if ((this.walked += chars) > TEXT_WALK_STEPS) throw tooCostly(pattern);
  }
}

/** A LIKE pattern read: each step a character to meet, any one character (`_`), or any run (`%`). */
type Step = { readonly kind: 'char'; readonly ch: string } | { readonly kind: 'one' } | { readonly kind: 'run' };

/** The steps of a pattern, by characters (code points); undefined when it ends with its escape character. */
function stepsOf(pattern: string): Step[] | undefined {
  const steps: Step[] = [];
  const chars = [...pattern];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as string;
    if (c === '\\') {
      const next = chars[++i];
      if (next === undefined) return undefined;
      steps.push({ kind: 'char', ch: next });
    } else if (c === '%') {
      if (steps[steps.length - 1]?.kind !== 'run') steps.push({ kind: 'run' }); // (%% is %)
    } else steps.push(c === '_' ? { kind: 'one' } : { kind: 'char', ch: c });
  }
  return steps;
}

/**
 * A LIKE pattern as a test of whole texts (a pattern ending with its escape character matches nothing). Matched
 * without a regular expression: a run goes back only to the last `%` met, so a test costs at most the text's length
 * times the pattern's — `%a%a%a…%b` against a long title is no catastrophic backtracking.
 */
export function likeTest(pattern: string, work = new TextWork()): (s: string) => boolean {
  const steps = stepsOf(pattern);
  if (!steps) return () => false;
  // the work past one step a character, over every text the request's tests meet: a long pattern against long titles
  // goes back often (text × pattern: 10 000 × 10 000 a title) — past LIKE_EXTRA_STEPS, the question is refused
  return (s) => {
    const text = [...s];
    let t = 0;
    let p = 0;
    let run = -1; // the last % met
    let from = 0; // where the text stood when it was met
    let walked = 0;
    while (t < text.length) {
      if (++walked > text.length) work.spend(1, pattern);
      const step = steps[p];
      if (step && (step.kind === 'one' || (step.kind === 'char' && step.ch === text[t]))) {
        t++;
        p++;
      } else if (step?.kind === 'run') {
        run = p++;
        from = t;
      } else if (run >= 0) {
        p = run + 1;
        t = ++from;
      } else return false;
    }
    while (steps[p]?.kind === 'run') p++;
    return p === steps.length;
  };
}

/** Where a text test looks for its value. */
export type TextAt = 'contains' | 'starts' | 'ends';

/** A text operator: where it looks for the value, case-free or not, negated or not (a null text passes none). */
export interface TextOp { readonly at: TextAt; readonly ci: boolean; readonly negate: boolean }

const op = (at: TextAt, ci: boolean, negate: boolean): TextOp => ({ at, ci, negate });
/** The LIKE operators (the record path's `compare.ts` and the title column's `column-text.ts` read them from here). */
export const TEXT_OPS: Readonly<Record<string, TextOp>> = Object.assign(Object.create(null) as Record<string, TextOp>, {
  _contains: op('contains', false, false), _ncontains: op('contains', false, true), _icontains: op('contains', true, false),
  _starts_with: op('starts', false, false), _nstarts_with: op('starts', false, true), _istarts_with: op('starts', true, false),
  _nistarts_with: op('starts', true, true), _ends_with: op('ends', false, false), _nends_with: op('ends', false, true),
  _iends_with: op('ends', true, false), _niends_with: op('ends', true, true),
});

/** A text test of a value with no wildcard: plain JavaScript text, which never goes back over it. */
export function plainMatch(value: string, at: TextAt): (s: string) => boolean {
  return at === 'contains' ? (s) => s.includes(value) : at === 'starts' ? (s) => s.startsWith(value) : (s) => s.endsWith(value);
}

/** The test of a text against `value` as Directus's LIKE makes it: plain text tests when the value has no wildcard. */
export function textMatch(value: string, at: TextAt, work = new TextWork()): (s: string) => boolean {
  const test = hasWildcards(value) ? likeTest(at === 'contains' ? `%${value}%` : at === 'starts' ? `${value}%` : `%${value}`, work)
    : plainMatch(value, at);
  // every text walked is counted, with a wildcard or without (attack pass 20, N1: a term met nowhere cost nothing)
  return (s) => {
    work.walk(s.length, value);
    return test(s);
  };
}
