import type { CallRow, StoredRule } from '../store/deprecations.js';
import { DAY_MS } from '../store/deprecations.js';
import { isoOf, type Rule } from './rules.js';

/** One client's calls under one rule: totals, the last call, and per day (UTC dates). */
export interface ClientProgress {
  readonly client: string;
  readonly calls: number;
  readonly refused: number;
  readonly observed: number;
  readonly last_seen: string;
  readonly days: readonly { readonly day: string; readonly calls: number; readonly refused: number; readonly observed: number }[];
}

/** A rule's progress: when it was set, its deadline, the days left, and each client's calls since it was set. */
export interface RuleProgress {
  readonly rule: string;
  readonly route: string;
  readonly client: string;
  readonly mode: 'enforce' | 'observe';
  readonly set_at: string;
  readonly deprecation: string;
  readonly sunset: string | null;
  readonly link: string | null;
  readonly days_left: number | null;
  readonly clients: readonly ClientProgress[];
}

const dayOf = (day: number) => isoOf(day * DAY_MS).slice(0, 10);

/** Whole days from `now` to the sunset (0 on its day and after). */
export function daysLeft(sunset: string | undefined, now: number): number | null {
  return sunset === undefined ? null : Math.max(0, Math.ceil((Date.parse(sunset) - now) / DAY_MS));
}

/** The counted calls grouped by rule and client (pure). Clients by most calls first. */
export function progressOf(stored: readonly StoredRule[], rows: readonly CallRow[], now: number): RuleProgress[] {
  return stored.map((s) => {
    const rule = s.rule as Rule;
    const byClient = new Map<string, CallRow[]>();
    for (const r of rows) if (r.rule === s.id) byClient.set(r.client, [...(byClient.get(r.client) ?? []), r]);
    const clients = [...byClient].map(([client, list]): ClientProgress => ({
      client,
      calls: list.reduce((n, r) => n + r.calls, 0),
      refused: list.reduce((n, r) => n + r.refused, 0),
      observed: list.reduce((n, r) => n + r.observed, 0),
      last_seen: isoOf(Math.max(...list.map((r) => r.lastSeen))),
      days: [...list].sort((a, b) => a.day - b.day).map((r) => ({ day: dayOf(r.day), calls: r.calls, refused: r.refused, observed: r.observed })),
    })).sort((a, b) => b.calls - a.calls || a.client.localeCompare(b.client));
    return {
      rule: s.id, route: rule.match.route, client: rule.match.client ?? '*', mode: rule.mode ?? 'enforce', set_at: isoOf(s.setAt),
      deprecation: rule.deprecation, sunset: rule.sunset ?? null, link: rule.link ?? null, days_left: daysLeft(rule.sunset, now), clients,
    };
  });
}
