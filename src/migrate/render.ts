import type { V1Call } from './equivalent.js';
import { own } from '../lib/own.js';
import { callsChart, deprecationsMd } from './deprecation-progress.js';
import type { ClientReport, MigrationReport, ShapeReport } from './report.js';

/** The migration report as Markdown and as one self-contained HTML file (its style inline, no script, nothing fetched). Pure. */

const callText = (c: V1Call): string => {
  const q = Object.entries(c.query).map(([k, v]) => `${k}=${v}`).join('&');
  return `${c.each ? `for each of ${c.each}: ` : ''}${c.method} ${c.path}${q ? `?${q}` : ''}${c.cursor ? ' (cursor loop)' : ''}` +
    `${c.body ? ` body ${JSON.stringify(c.body)}` : ''}`;
};

/**
 * Text that may hold names a client sent (shape keys, body keys, parameter names, client steps, reasons): on one line,
 * every ASCII punctuation mark escaped, so it is never Markdown or HTML of its own (reportHtml takes the escapes away).
 */
export const mdText = (s: string): string => s.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, ' ').replace(/[!-/:-@[-`{-~]/g, '\\$&');
/** The same as a code span: one line, no backtick of its own (nothing else is read inside a code span). */
export const mdCode = (s: string): string => `\`${s.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, ' ').replace(/`/g, '\u02cb')}\``;

const proofText = (s: ShapeReport): string => {
  const p = s.proof;
  if (!p) return 'not run';
  if (p.result === 'equal') return `equal (${p.v1Calls} v1 calls)`;
  if (p.result === 'differs') return `differs: ${mdText(p.differences.map((d) => `${d.path} (${d.kind})`).join(', ') || (p.reason ?? ''))}`;
  return `not run: ${mdText(p.reason ?? '')}`;
};

const pct = (x: number | null) => (x === null ? '—' : `${(x * 100).toFixed(1)} %`);

function shapeMd(s: ShapeReport): string[] {
  const e = s.equivalent;
  const out = [
    `#### ${mdCode(s.key)}`,
    '',
    `${s.count} requests, ${s.firstSeen} – ${s.lastSeen}; latency ${s.latencyMsMean} ms mean, ${s.latencyMsMax} ms max; ` +
      `errors ${pct(s.errorRate)}; v1 calls per request (gateway, median) ${s.gatewayV1CallsMedian ?? '—'}; ` +
      `diff rate ${s.compared ? `${pct(s.diffRate)} of ${s.compared}` : '—'}`,
    '',
    '**v1 calls**',
    '',
    ...(e.calls.length ? e.calls.map((c, i) => `${i + 1}. \`${callText(c)}\` — ${c.why}`) : ['none']),
    '',
    `**Client steps** (v1 cannot): ${s.clientSteps.length ? s.clientSteps.map(mdText).join('; ') : 'none'}`,
    '',
    `**Parameters**: ${e.params.length ? e.params.map((p) => `\`${p.name}\`: ${p.legacy} → ${p.v1}`).join('; ') : 'none'}`,
    ...(e.statuses ? ['', `**Statuses** (legacy → v1): ${Object.entries(e.statuses).map(([l, v]) => `${l} → ${v.join('|') || 'none'}`).join(', ')}`] : []),
    ...(e.blocked.length ? ['', `**Blocked**: ${e.blocked.map((b) => `\`${b.field}\` (${b.why})`).join('; ')}`] : []),
    ...(e.unverified.length ? ['', `**Reached only through \`*\`** (no v1 source; name the fields you use): ${e.unverified.join(', ')}`] : []),
    ...(e.notes.length ? ['', `**Notes**: ${e.notes.map(mdText).join('; ')}`] : []),
    ...(s.advice.length ? ['', `**Advice**: ${s.advice.join('; ')}`] : []),
    '',
    `**Cost**: ${s.equivalentV1Calls ?? '—'} v1 calls for the proof's question; **Proof**: ${proofText(s)}` +
      `${s.proof?.request ? ` (asked: ${mdCode(s.proof.request)})` : ''}`,
    '',
  ];
  for (const [lang, code] of [['js', s.snippets.node], ['python', s.snippets.python], ['sh', s.snippets.curl]] as const) {
    out.push('<details><summary>' + { js: 'Node', python: 'Python', sh: 'curl' }[lang] + '</summary>', '', '```' + lang, code, '```', '', '</details>', '');
  }
  return out;
}

/** A client as the report names it: its label, else its id (the label is the operator's, escaped all the same). */
const clientName = (c: ClientReport): string => (c.label ? `${mdText(c.label)} (${c.client})` : c.client);

function clientMd(c: ClientReport, now: number): string[] {
  return [
    `### ${clientName(c)} — ${c.verdict}`,
    '',
    ...(c.owner ? [`Acts as ${mdText(c.owner)}; User-Agent family ${c.userAgentFamily}.`, ''] : []),
    ...(c.agents?.length ? [`User-Agents of this client no family names (a pattern in mappings/clients.json tells them apart): ${
      c.agents.map((a) => `${mdCode(a.agent)} (${a.count})`).join(', ')}.`, ''] : []),
    `${c.requests} requests, errors ${pct(c.errorRate)}, diff rate ${pct(c.diffRate)}; ${c.shapes.length} shapes.`,
    '',
    `**Ready**: ${c.readiness.ready === null ? 'proofs not run' : `${pct(c.readiness.ready)} of its calls`} — shapes exact ${c.readiness.exact}, ` +
      `partial ${c.readiness.partial}, differs ${c.readiness.differs}, unproven ${c.readiness.unproven}.`,
    '',
    ...(c.blocked.length ? [`Blocked fields: ${c.blocked.map((b) => `\`${b.field}\``).join(', ')}`, ''] : []),
    ...(c.reasons.length ? ['Why:', '', ...c.reasons.map((r) => `- ${mdText(r)}`), ''] : []),
    ...deprecationsMd(c, now),
    ...c.shapes.flatMap(shapeMd),
  ];
}

export function reportMarkdown(r: MigrationReport): string {
  return [
    '# Migration report',
    '',
    `Generated ${r.generatedAt}. Client profiles keep ${r.shapesPerClient} shapes a client for ${r.retentionDays} days; a shape holds no value ` +
      'of any request (no id, filter value, search string or token).',
    '',
    '## What every migration needs',
    '',
    ...r.facts.map((f) => `- **${f.title}.** ${f.text}`),
    '',
    '## Clients',
    '',
    '| Client | Acts as | Verdict | Ready (calls) | Requests | Shapes | Errors | Diff rate | Blocked fields |',
    '|---|---|---|---|---|---|---|---|---|',
    ...r.clients.map((c) => `| ${clientName(c)} | ${c.owner ? mdText(c.owner) : '—'} | ${c.verdict} | ${pct(c.readiness.ready)} | ` +
      `${c.requests} | ${c.shapes.length} | ${pct(c.errorRate)} | ` +
      `${pct(c.diffRate)} | ` +
      `${c.blocked.map((b) => b.field).join(', ') || '—'} |`),
    '',
    ...r.clients.flatMap((c) => clientMd(c, Date.parse(r.generatedAt))),
  ].join('\n');
}

const esc = (s: string) => s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] as string);
/** Markdown's `code` and **bold** as HTML, everything else escaped; a backslash escape (mdText) is its character again, outside code. */
const inline = (s: string) => esc(s).split(/((?<!\\)`[^`]+`)/).map((part, i) => (i % 2 ? `<code>${part.slice(1, -1)}</code>`
  : part.replace(/\*\*([^*]+)\*\*/g, '<b>$1</b>').replace(/\\(&(?:amp|lt|gt|quot|#39);|[!-/:-@[-`{-~])/g, '$1'))).join('');
/** The only raw HTML lines of the Markdown: a snippet's details. */
const DETAILS = /^<details><summary>(Node|Python|curl)<\/summary>$|^<\/details>$/;

const VERDICT_CLASS: Readonly<Record<string, string>> = { ready: 'ready', 'needs work': 'needs', blocked: 'blocked' };

const STYLE = 'body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;color:#222}' +
  'table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .5em;text-align:left;vertical-align:top}' +
  'pre{background:#f5f5f5;padding:.7em;overflow:auto;font-size:12px}code{font-size:12px}' +
  '.ready{color:#176f2c}.needs{color:#8a5a00}.blocked{color:#a4161a}h4{margin-bottom:.3em}';

/** One self-contained HTML file: the Markdown report's content, its code blocks as <pre>, its details kept. */
export function reportHtml(r: MigrationReport): string {
  const md = reportMarkdown(r).split('\n');
  const out: string[] = [];
  let inCode = false;
  let table: string[] | null = null;
  const flushTable = () => {
    if (!table) return;
    const [head, , ...rows] = table;
    const cells = (l: string) => l.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim()); // (an escaped \| is in a cell)
    const cell = (c: string) => { const cls = own(VERDICT_CLASS, c); return `<td${cls ? ` class="${cls}"` : ''}>${inline(c)}</td>`; };
    out.push('<table><tr>' + cells(head ?? '').map((c) => `<th>${inline(c)}</th>`).join('') + '</tr>' +
      rows.map((l) => '<tr>' + cells(l).map(cell).join('') + '</tr>')
        .join('') +
      '</table>');
    table = null;
  };
  for (const line of md) {
    if (line.startsWith('```')) { out.push(inCode ? '</code></pre>' : '<pre><code>'); inCode = !inCode; continue; }
    if (inCode) { out.push(esc(line)); continue; }
    const chart = callsChart(r.clients, line, Date.parse(r.generatedAt)); // a client's deprecated calls per day, inline SVG
    if (chart !== undefined) { out.push(chart); continue; }
    if (line.startsWith('|')) { (table ??= []).push(line); continue; }
    flushTable();
    const h = /^(#{1,4}) (.*)$/.exec(line);
    if (h) out.push(`<h${h[1]?.length}>${inline(h[2] ?? '')}</h${h[1]?.length}>`);
    else if (DETAILS.test(line)) out.push(line);
    else if (line.startsWith('- ')) out.push(`<li>${inline(line.slice(2))}</li>`);
    else if (/^\d+\. /.test(line)) out.push(`<div>${inline(line)}</div>`);
    else if (line.trim()) out.push(`<p>${inline(line)}</p>`);
  }
  flushTable();
  return '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Migration report</title>' +
    `<style>${STYLE}</style></head><body>\n${out.join('\n')}\n</body></html>\n`;
}
