import { createHash } from 'node:crypto';
import type { CompareReport } from '../store/compare.js';

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (s: unknown) => String(s ?? '').replace(/[&<>"']/g, (c) => ENTITIES[c] as string);
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

const STYLE = [
  'body{font:14px/1.4 system-ui,sans-serif;margin:2rem;color:#222}',
  'table{border-collapse:collapse;width:100%;margin:1rem 0}',
  'th,td{border:1px solid #ddd;padding:.3rem .5rem;vertical-align:top;text-align:left}',
  '.num{text-align:right}.bad{color:#b00;font-weight:600}.ok{color:#070}tr.noise{color:#888}',
  '.tag{background:#eee;border-radius:3px;padding:0 .3rem}pre{margin:0;white-space:pre-wrap;max-width:40rem}',
  '.req{color:#666;font-size:12px}small{font-weight:normal;color:#555}',
].join('\n');

type Route = CompareReport['routes'][number];
type Field = Route['fields'][number];

const routeRow = (x: Route) =>
  `<tr data-route="${esc(x.route)}"><td><a href="#${encodeURIComponent(x.route)}">${esc(x.route)}</a></td>` +
  `<td class="num">${x.total}</td><td class="num">${x.differing}</td>` +
  `<td class="num rate ${x.diffRate > 0.05 ? 'bad' : 'ok'}">${pct(x.diffRate)}</td>` +
  `<td class="num">${x.legacyMsAvg.toFixed(0)} ms</td><td class="num">${x.translatedMsAvg.toFixed(0)} ms</td></tr>`;

const fieldRow = (f: Field) =>
  `<tr class="${f.noise ? 'noise' : ''}"><td><code>${esc(f.path)}</code></td><td>${esc(f.kind)}</td><td class="num">${f.count}</td>` +
  `<td>${f.noise ? '<span class="tag">noise</span>' : ''}</td>\n` +
  `    <td>${f.samples.map((s) => `<pre>${esc(s.legacy)}</pre>`).join('')}</td>` +
  `<td>${f.samples.map((s) => `<pre>${esc(s.translated)}</pre><div class="req">${esc(s.request)}</div>`).join('')}</td></tr>`;

const section = (x: Route) => {
  const head = `<h2>${esc(x.route)} <small>${pct(x.diffRate)} of ${x.total} requests differ</small></h2>`;
  const body = x.fields.length === 0
    ? '<p class="ok">No differences.</p>'
    : '<table><thead><tr><th>field</th><th>kind</th><th>count</th><th>noise</th><th>legacy</th><th>translated</th></tr></thead><tbody>\n  ' +
      `${x.fields.slice(0, 25).map(fieldRow).join('')}\n  </tbody></table>`;
  return `\n  <section id="${encodeURIComponent(x.route)}">${head}\n  ${body}</section>`;
};

/** Refreshes the per-route figures every 10 s from the JSON view, without reloading the page. */
const refresherJs = (url: string) => `
setInterval(async () => {
  const res = await fetch(${JSON.stringify(url)}, { cache: 'no-store' });
  if (!res.ok) return;
  const { data } = await res.json();
  for (const x of data.routes) {
    const row = document.querySelector('#routes tbody tr[data-route="' + CSS.escape(x.route) + '"]');
    if (!row) { location.reload(); return; }
    const cells = row.querySelectorAll('td');
    cells[1].textContent = x.total; cells[2].textContent = x.differing; cells[3].textContent = (x.diffRate * 100).toFixed(1) + ' %';
  }
  document.body.dataset.refreshed = String(Date.now());
}, 10000);
`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * The Content-Security-Policy of the report page: nothing loads but its own style and (on the linked page) its own
 * refresher script, by their hashes; it fetches only from its own origin; no frame, form or base may point elsewhere.
 */
export function reportCsp(refreshUrl?: string): string {
  const script = refreshUrl ? hash(refresherJs(refreshUrl)) : "'none'";
  return `default-src 'none'; style-src ${hash(STYLE)}; script-src ${script}; connect-src 'self'; img-src 'none'; base-uri 'none'; ` +
    "form-action 'none'; frame-ancestors 'none'";
}

/** The page a migration lead reads: per-route diff rate, most frequent differing fields, samples side by side. */
export function reportHtml(r: CompareReport, generatedAt: Date, refreshUrl?: string): string {
  const routes = [...r.routes].sort((a, b) => b.diffRate - a.diffRate);
  const rows = routes.map(routeRow).join('');
  return '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Legacy vs translated — comparison report</title>\n' +
    `<style>${STYLE}</style></head>\n` +
    `<body><h1>Legacy vs translated answers</h1><p>Generated ${esc(generatedAt.toISOString())}. ` +
    'A route is ready to switch to translated mode when its diff rate, noise excluded, is at zero or explained.</p>\n' +
    '<table id="routes"><thead><tr><th>route</th><th>requests</th><th>differing</th><th>diff rate</th><th>legacy latency</th>' +
    `<th>translated latency</th></tr></thead><tbody>${rows || '<tr><td colspan="6">No comparisons yet.</td></tr>'}</tbody></table>\n` +
    `${routes.map(section).join('')}${refreshUrl ? `<script>${refresherJs(refreshUrl)}</script>` : ''}</body></html>`;
}
