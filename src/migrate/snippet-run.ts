import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openCallGate } from '../lib/call-gate.js';
import { runSandboxed, withScratch, type SandboxLimits } from '../lib/sandbox.js';
import { envName, type Snippets } from './snippets.js';

export const SNIPPET_LANGUAGES = ['node', 'python', 'curl'] as const;
export type SnippetLanguage = (typeof SNIPPET_LANGUAGES)[number];

/** What one snippet run may spend (a proof runs three a shape). */
export const SNIPPET_LIMITS: SandboxLimits = { timeoutMs: 30_000, outputBytes: 16 * 1_048_576 };

/**
 * The v1 calls one snippet run may make (as many as the proof's own reading of the equivalent, PROOF_BOUNDS.v1Calls):
 * they are the client's key's calls; past them the run is not compared (a proven report of 28 shapes made 5 352 calls).
 */
export const SNIPPET_CALLS = 500;

/**
 * A snippet's answer: what it printed, parsed; or why it did not give one (`notCompared`: the run says nothing of the
 * snippet — a program missing here, the calls' bound passed — rather than that it failed).
 */
export type SnippetOutcome =
  | { readonly ok: true; readonly output: unknown }
  | { readonly ok: false; readonly why: string; readonly notCompared?: boolean };

/** Runs the snippets a report hands out (the proof's I/O beside v1): each in its own sandbox, the key in its environment only. */
export interface SnippetRunner {
  run(lang: SnippetLanguage, snippets: Snippets, fn: string, key: string, params: Readonly<Record<string, unknown>>): Promise<SnippetOutcome>;
}

const PROGRAM: Readonly<Record<SnippetLanguage, { file: string; name: string }>> = {
  node: { file: process.execPath, name: 'snippet.mjs' },
  python: { file: 'python3', name: 'snippet.py' },
  curl: { file: 'sh', name: 'snippet.sh' },
};

/** The text a language's file holds: the snippet as handed out, then a call of it printing its answer as JSON. */
function program(lang: SnippetLanguage, s: Snippets, fn: string): string {
  if (lang === 'node') return `${s.node}\nconsole.log(JSON.stringify(await ${fn}(process.env.V1, process.env.KEY, JSON.parse(process.env.PARAMS))));\n`;
  if (lang === 'python') return `${s.python}\nimport os\nprint(json.dumps(${fn}(os.environ["V1"], os.environ["KEY"], json.loads(os.environ["PARAMS"]))))\n`;
  return s.curl;
}

/** The curl script reads each parameter from its variable (`envName`; a list as a JSON array). */
const shellEnv = (params: Readonly<Record<string, unknown>>): Record<string, string> =>
  Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => [envName(k), typeof v === 'object' ? JSON.stringify(v) : String(v)]));

/**
 * A runner over real programs: node (this one), python3, sh with curl and jq. The key never leaves the child's
 * environment. Each run calls v1 through a gate of its own (`openCallGate`) that forwards at most `calls` requests.
 */
export function snippetRunner(v1BaseUrl: string, limits: SandboxLimits = SNIPPET_LIMITS, calls = SNIPPET_CALLS): SnippetRunner {
  return {
    run: (lang, snippets, fn, key, params) => withScratch(async (dir) => {
      const p = PROGRAM[lang];
      await writeFile(join(dir, p.name), program(lang, snippets, fn), { mode: 0o600 });
      const gate = await openCallGate(v1BaseUrl, calls);
      let ran;
      try {
        const env = { ...(lang === 'curl' ? shellEnv(params) : {}), V1: gate.url, KEY: key, PARAMS: JSON.stringify(params) };
        ran = await runSandboxed(p.file, [p.name], dir, env, limits);
      } finally {
        await gate.close();
      }
      if (gate.refused > 0) {
        return { ok: false, notCompared: true, why: `the ${lang} snippet needs more than ${calls} v1 calls (the proof's bound for one run): not compared` };
      }
      const scrub = (t: string) => (key ? t.split(key).join('***') : t).slice(0, 300);
      if (!ran.ok) return { ok: false, notCompared: / is not installed here$/.test(ran.why), why: `the ${lang} snippet failed: ${scrub(ran.why)}` };
      try {
        return { ok: true, output: JSON.parse(ran.stdout) as unknown };
      } catch {
        return { ok: false, why: `the ${lang} snippet printed no JSON: ${scrub(ran.stdout.trim().slice(0, 120))}` };
      }
    }),
  };
}
