import type { Difference } from '../compare/diff.js';
import { SNIPPET_LANGUAGES, type SnippetLanguage, type SnippetRunner } from './snippet-run.js';
import type { Snippets } from './snippets.js';

/**
 * The proof of a shape: its v1 equivalent run against v1 (the structured calls, with the client's steps done by the
 * gateway's own evaluator over what those calls returned, translated), compared with the gateway's legacy answer to the
 * same question. The values are the proof's own, drawn from the data the client's key reaches (never the client's).
 */
export interface Proof {
  readonly result: 'equal' | 'differs' | 'not run';
  readonly reason?: string;
  /** The legacy request the proof asked, its values (drawn from the client's data) shown as `?`, its id as `:id`. */
  readonly request?: string;
  /** The differing fields as paths (`data[0].data`), each once, with the kind of difference. */
  readonly differences: readonly { readonly path: string; readonly kind: string }[];
  /** v1 calls the equivalent made (in the first draw). */
  readonly v1Calls: number;
  /** How many draws of values it was asked with, when more than one (each equal, or the first that was not). */
  readonly draws?: number;
  /** Each snippet the report hands out, run against v1 with the client's key and read back: what it gave. */
  readonly snippets?: readonly SnippetProof[];
}

/** One language's snippet, run: its answer equal to the gateway's, different (paths), failed, or not compared (why). */
export interface SnippetProof {
  readonly lang: SnippetLanguage;
  readonly result: 'equal' | 'differs' | 'failed' | 'not run';
  readonly reason?: string;
}

/** The differing paths a proof lists, at most. */
export const PROOF_PATHS = 100;

/** The differing paths, each once (indices dropped), at most PROOF_PATHS and a count of the rest. */
export function listed(diffs: readonly Difference[], prefix = ''): { path: string; kind: string }[] {
  const seen = new Map<string, string>();
  let more = 0;
  for (const x of diffs) {
    const path = `${prefix}${x.path.replace(/\[\d+\]/g, '[]')}`;
    if (seen.has(path)) continue;
    if (seen.size < PROOF_PATHS) seen.set(path, x.kind);
    else more++;
  }
  const out = [...seen].map(([path, kind]) => ({ path, kind }));
  // a report lists at most PROOF_PATHS paths a shape (one answer's keys can be hundreds of thousands)
  if (more > 0) out.push({ path: '…', kind: `${more} more paths` });
  return out;
}

export type Compared = { result: 'equal' } | { result: 'differs'; paths: Difference[] } | { result: 'not run'; reason: string };

/** Each language's snippet run and read back (a partial snippet is run, not compared: its answer is not the whole answer). */
export async function runSnippets(
  runner: SnippetRunner, handed: { readonly snippets: Snippets; readonly fn: string }, key: string, params: Record<string, unknown>,
  compare: (output: unknown) => Compared,
): Promise<(SnippetProof & { paths?: Difference[] })[]> {
  const out: (SnippetProof & { paths?: Difference[] })[] = [];
  for (const lang of SNIPPET_LANGUAGES) {
    const r = await runner.run(lang, handed.snippets, handed.fn, key, params);
    if (!r.ok) {
      // (a program missing here, or the run's calls past their bound: the snippet is not compared, it did not fail)
      out.push(r.notCompared || /is not installed here/.test(r.why) ? { lang, result: 'not run', reason: r.why } : { lang, result: 'failed', reason: r.why });
      continue;
    }
    if (handed.snippets.partial.length > 0) {
      out.push({ lang, result: 'not run', reason: `ran; not compared: the snippet leaves steps to the client (${handed.snippets.partial.join('; ')})` });
      continue;
    }
    let c: Compared;
    try {
      c = compare(r.output);
    } catch (e) {
      // an answer that cannot be read back (not v1 objects): the snippet's answer is not the gateway's
      out.push({ lang, result: 'differs', reason: `the ${lang} snippet's answer cannot be read back: ${(e as Error).message.slice(0, 200)}`, paths: [] });
      continue;
    }
    if (c.result === 'differs') out.push({ lang, result: 'differs', paths: c.paths });
    else if (c.result === 'not run') out.push({ lang, result: 'not run', reason: c.reason });
    else out.push({ lang, result: 'equal' });
  }
  return out;
}

/**
 * The proof's verdict: "equal" only when the evaluator's reading of the calls and every snippet that was compared give
 * the gateway's answer (and at least one was compared); a snippet that failed or differs makes it "differs", with its paths
 * named by language; none compared leaves it unproven ("not run") and says why.
 */
export function combined(evaluated: Proof, ran: readonly (SnippetProof & { paths?: Difference[] })[], s: Snippets): Proof {
  const snippets = ran.map(({ paths: _p, ...x }) => x);
  const failed = ran.filter((x) => x.result === 'failed');
  const differing = ran.filter((x) => x.result === 'differs');
  const differences = [...evaluated.differences, ...differing.flatMap((x) => listed(x.paths ?? [], `${x.lang}: `))].slice(0, PROOF_PATHS + 1);
  if (failed.length > 0 || differing.length > 0 || evaluated.result === 'differs') {
    const why = [...failed.map((x) => x.reason), ...differing.map((x) => `the ${x.lang} snippet's answer differs from the gateway's`)];
    if (evaluated.result === 'differs') why.unshift('the equivalent\'s calls, read by the gateway\'s evaluator, differ from the gateway\'s answer');
    return { ...evaluated, result: 'differs', reason: why.join('; '), differences, snippets };
  }
  // (never "equal" by default: what the snippets leave to the client is not proven — held-out check of issue 39)
  if (s.partial.length > 0) {
    return { ...evaluated, result: 'not run', reason: 'the snippets ran; their answer is partial (steps left to the client): not proven', snippets };
  }
  if (!ran.some((x) => x.result === 'equal')) {
    const why = ran.map((x) => `${x.lang}: ${x.reason ?? x.result}`).join('; ');
    return { ...evaluated, result: 'not run', reason: `no snippet's answer could be compared (${why})`, snippets };
  }
  const skipped = ran.filter((x) => x.result === 'not run');
  return { ...evaluated, snippets, ...(skipped.length ? { reason: skipped.map((x) => `${x.lang}: ${x.reason}`).join('; ') } : {}) };
}
