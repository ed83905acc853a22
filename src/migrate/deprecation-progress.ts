import type { RuleProgress } from '../deprecate/progress.js';
import type { Rule } from '../deprecate/rules.js';
import { DAY_MS } from '../store/deprecations.js';

/**
 * The migration report's view of the deprecation rules (issue 41): for each client, the rules its calls fall under, the
 * deadline and days left, its calls to deprecated routes per day since each rule was set, the last time it called, and
 * whether it still calls ("moved": not for MOVED_AFTER_DAYS). Markdown lines and, for the HTML report, a small inline
 * SVG chart (no script). Pure.
 */
export const MOVED_AFTER_DAYS = 7;
/** Days the chart shows, ending today. */
export const CHART_DAYS = 60;

export interface ClientDeprecation {
  readonly rule: string;
  readonly route: string;
  readonly mode: 'enforce' | 'observe';
  readonly deprecation: string;
  readonly sunset: string | null;
  readonly days_left: number | null;
  readonly link: string | null;
  readonly set_at: string;
  /** Calls since the rule was set: all, refused (410), observed (would have been refused). */
  readonly calls: number;
  readonly refused: number;
  readonly observed: number;
  /** The client's last call to a route the rule covers (its counts, or its profile's shapes), null when none is known. */
  readonly last_call: string | null;
  /** `calling`: a call within MOVED_AFTER_DAYS; `moved`: none since (or none since the rule was set, that long ago); `quiet`: too early to say. */
  readonly status: 'calling' | 'moved' | 'quiet';
  readonly days: readonly { readonly day: string; readonly calls: number; readonly refused: number; readonly observed: number }[];
}

/** What the report knows of a client: its id and the routes of its shapes, with when each was last asked. */
export interface ClientCalls {
  readonly client: string;
  readonly shapes: readonly { readonly shape: { readonly method: string; readonly route: string }; readonly lastSeen: string }[];
}

export type RuleLookup = (method: string, route: string, principal: string, family: string) => Rule | undefined;

/** The rules of one client: those its shapes' routes fall under, and those that counted its calls. */
export function clientDeprecations(c: ClientCalls, ruleFor: RuleLookup, progress: readonly RuleProgress[], now: number): ClientDeprecation[] {
  const [principal = c.client, family = 'none'] = c.client.split('~');
  const lastByRule = new Map<string, number>();
  for (const s of c.shapes) {
    const rule = ruleFor(s.shape.method, s.shape.route, principal, family);
    if (rule) lastByRule.set(rule.id, Math.max(lastByRule.get(rule.id) ?? 0, Date.parse(s.lastSeen)));
  }
  const out: ClientDeprecation[] = [];
  for (const p of progress) {
    const mine = p.clients.find((x) => x.client === c.client);
    if (!mine && !lastByRule.has(p.rule)) continue;
    const lastMs = Math.max(lastByRule.get(p.rule) ?? 0, mine ? Date.parse(mine.last_seen) : 0);
    const since = Math.max(lastMs, Date.parse(p.set_at));
    const status = lastMs > Date.parse(p.set_at) && now - lastMs < MOVED_AFTER_DAYS * DAY_MS ? 'calling'
      : now - since >= MOVED_AFTER_DAYS * DAY_MS ? 'moved' : 'quiet';
    out.push({
      rule: p.rule, route: p.route, mode: p.mode, deprecation: p.deprecation, sunset: p.sunset, days_left: p.days_left,
      link: p.link, set_at: p.set_at, calls: mine?.calls ?? 0, refused: mine?.refused ?? 0, observed: mine?.observed ?? 0,
      last_call: lastMs > 0 ? new Date(lastMs).toISOString() : null, status, days: mine?.days ?? [],
    });
  }
  return out;
}

/** Eight levels of a text sparkline. */
const BARS = '▁▂▃▄▅▆▇█';
const dayKey = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The calls of the last CHART_DAYS days, one number a day, oldest first. */
export function dailySeries(d: Pick<ClientDeprecation, 'days'>, now: number): { day: string; calls: number; refused: number }[] {
  const byDay = new Map(d.days.map((x) => [x.day, x]));
  const today = Math.floor(now / DAY_MS);
  return Array.from({ length: CHART_DAYS }, (_, i) => {
    const day = dayKey((today - CHART_DAYS + 1 + i) * DAY_MS);
    const x = byDay.get(day);
    return { day, calls: x?.calls ?? 0, refused: x?.refused ?? 0 };
  });
}

/** The Markdown lines of a client's deprecations (none when no rule concerns it). */
export function deprecationsMd(c: { readonly client: string; readonly deprecations?: readonly ClientDeprecation[] }, now: number): string[] {
  const list = c.deprecations ?? [];
  if (!list.length) return [];
  const lines = [
    '**Deprecated calls**',
    '',
    '| Rule | Route | Mode | Sunset | Days left | Calls since set | Refused | Last call | Status |',
    '|---|---|---|---|---|---|---|---|---|',
    ...list.map((d) => `| ${d.rule} | \`${d.route}\` | ${d.mode} | ${d.sunset ?? '—'} | ${d.days_left ?? '—'} | ${d.calls} | ${d.refused} | ` +
      `${d.last_call ?? '—'} | ${d.status} |`),
    '',
  ];
  for (const d of list) {
    const series = dailySeries(d, now);
    const max = Math.max(1, ...series.map((x) => x.calls));
    const spark = series.map((x) => (x.calls === 0 ? '·' : BARS[Math.min(7, Math.floor((x.calls / max) * 7.999))])).join('');
    lines.push(`Calls per day to \`${d.route}\` (${d.rule}), ${series[0]?.day} – ${series.at(-1)?.day}, at most ${max}: ${spark}`, '',
      `<!-- deprecated-calls ${c.client} ${d.rule} -->`, '');
  }
  return lines;
}

/** The inline SVG chart for a `<!-- deprecated-calls CLIENT RULE -->` line of the Markdown, or undefined for any other line. */
export function callsChart(
  clients: readonly { readonly client: string; readonly deprecations?: readonly ClientDeprecation[] }[], line: string, now: number,
): string | undefined {
  const m = /^<!-- deprecated-calls (\S+) (\S+) -->$/.exec(line);
  if (!m) return undefined;
  const d = clients.find((c) => c.client === m[1])?.deprecations?.find((x) => x.rule === m[2]);
  if (!d) return '';
  const series = dailySeries(d, now);
  const max = Math.max(1, ...series.map((x) => x.calls));
  const w = 4;
  const h = 40;
  const bars = series.map((x, i) => {
    const all = Math.round((x.calls / max) * h);
    const refused = Math.round((x.refused / max) * h);
    return (all ? `<rect x="${i * w}" y="${h - all}" width="${w - 1}" height="${all}" fill="#888"><title>${x.day}: ${x.calls} calls</title></rect>` : '') +
      (refused ? `<rect x="${i * w}" y="${h - refused}" width="${w - 1}" height="${refused}" fill="#a4161a"/>` : '');
  }).join('');
  const label = `calls per day to ${d.route} (${d.rule}), ${series[0]?.day} to ${series.at(-1)?.day}, at most ${max}; refused in red`;
  return `<svg xmlns="http://www.w3.org/2000/svg" role="img" width="${series.length * w}" height="${h + 1}" ` +
    `viewBox="0 0 ${series.length * w} ${h + 1}" aria-label="${esc(label)}"><line x1="0" y1="${h + 0.5}" x2="${series.length * w}" ` +
    `y2="${h + 0.5}" stroke="#ccc"/>${bars}</svg>`;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] as string);
