import { z } from 'zod';

/**
 * Deprecation rules (issue 41): which legacy calls are deprecated, for whom, until when, and their brownouts — the
 * rules' shape (zod), their validation with the path of every problem, matching a request to the most specific rule,
 * and what that rule says at a given moment (the RFC 9745 / RFC 8594 headers, a brownout, the sunset). Pure.
 */

/** Bounds on what an operator can set (docs/security.md). */
export const RULE_LIMITS = { rules: 200, idChars: 64, linkBytes: 2048, brownouts: 50, brownoutMinutes: 1440, bodyBytes: 256 * 1024 } as const;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;
const METHODS = ['GET', 'POST', 'PATCH', 'DELETE', 'SEARCH', 'PUT'];
const TEMPLATE = /^\/[A-Za-z0-9_:./-]{0,200}$/;
const CLIENT = /^(user|static):[A-Za-z0-9-]{1,64}(~[a-z0-9-]{1,32})?$/;

/** An ISO 8601 date and time with its zone, written back as `YYYY-MM-DDTHH:MM:SSZ` (milliseconds only when given). */
const isoDate = z.string().max(40).refine((s) => ISO.test(s) && Number.isFinite(Date.parse(s)) && Date.parse(s) >= 0 && Date.parse(s) < 253402300800000, {
  message: 'must be a date and time with its zone, as 2027-06-30T00:00:00Z',
}).transform((s) => isoOf(Date.parse(s)));

const routeMatch = z.string().max(220).refine((s) => {
  if (s === '*') return true;
  const [method, template, ...rest] = s.split(' ');
  return rest.length === 0 && !!method && (method === '*' || METHODS.includes(method)) && !!template && (template === '*' || TEMPLATE.test(template));
}, { message: `must be "*" or a method (${METHODS.join(', ')} or *) and a route template (/renders/:id or *), as "GET /renders"` })
  .transform((s) => (s === '* *' ? '*' : s));

const RuleSchema = z.object({
  id: z.string().min(1).max(RULE_LIMITS.idChars).regex(/^[A-Za-z0-9._-]+$/, 'must be letters, digits, ".", "_" or "-"'),
  match: z.object({
    route: routeMatch,
    client: z.string().max(120).refine((s) => s === '*' || CLIENT.test(s), {
      message: 'must be "*" or a client id as the migration report names it: user:<uuid>, user:<uuid>~<family>, static:<token id>',
    }).optional(),
  }).strict(),
  mode: z.enum(['enforce', 'observe']).optional(),
  deprecation: isoDate,
  sunset: isoDate.optional(),
  link: z.string().max(RULE_LIMITS.linkBytes).refine((s) => linkOf(s) !== undefined, { message: 'must be an absolute http(s) URL' })
    .transform((s) => linkOf(s) as string).optional(),
  brownouts: z.array(z.object({
    start: isoDate,
    minutes: z.number().int().min(1).max(RULE_LIMITS.brownoutMinutes),
  }).strict()).max(RULE_LIMITS.brownouts).optional(),
}).strict();

/** `data` is ignored: the routes' own answer (`{rules, data}`) can be sent back as it is. */
const RulesSchema = z.object({ rules: z.array(RuleSchema).max(RULE_LIMITS.rules), data: z.unknown().optional() }).strict();

export type Rule = z.output<typeof RuleSchema>;

/** The problems of a rules body, each with its path (`rules.0.sunset`); none when it is valid. */
export interface RulesParse { readonly rules?: readonly Rule[]; readonly problems: readonly { path: string; message: string }[] }

/** Validates a rules body (`{"rules":[…]}`): zod's shape, then what relates fields and rules to each other. */
export function parseRules(body: unknown): RulesParse {
  const r = RulesSchema.safeParse(body);
  if (!r.success) return { problems: r.error.issues.map((i) => ({ path: i.path.join('.') || '(body)', message: i.message })) };
  const problems: { path: string; message: string }[] = [];
  const ids = new Set<string>();
  const matches = new Map<string, string>();
  r.data.rules.forEach((rule, i) => {
    const at = (f: string) => `rules.${i}.${f}`;
    if (ids.has(rule.id)) problems.push({ path: at('id'), message: `"${rule.id}" is the id of another rule` });
    ids.add(rule.id);
    const m = `${rule.match.route}\u0000${rule.match.client ?? '*'}`;
    const other = matches.get(m);
    if (other !== undefined) problems.push({ path: at('match'), message: `rule "${other}" has the same match: one of them would never apply` });
    else matches.set(m, rule.id);
    const dep = Date.parse(rule.deprecation);
    const sunset = rule.sunset === undefined ? undefined : Date.parse(rule.sunset);
    if (sunset !== undefined && sunset < dep) problems.push({ path: at('sunset'), message: 'must not be before the deprecation date' });
    (rule.brownouts ?? []).forEach((b, j) => {
      const start = Date.parse(b.start);
      if (sunset !== undefined && start >= sunset) problems.push({ path: at(`brownouts.${j}.start`), message: 'must be before the sunset' });
    });
  });
  return problems.length ? { problems } : { rules: r.data.rules, problems };
}

/** Every rule whose route names neither a route of `known` (`METHOD /template`) nor a method of one. */
export function unknownRoutes(rules: readonly Rule[], known: ReadonlySet<string>): { path: string; message: string }[] {
  const all = [...known];
  return rules.flatMap((rule, i) => {
    const [method, template] = rule.match.route.split(' ');
    if (rule.match.route === '*' || template === '*') return [];
    const ok = all.some((k) => { const [m, t] = k.split(' '); return t === template && (method === '*' || m === method); });
    const message = `"${rule.match.route}" is not a legacy route of the gateway (route templates as /renders/:id)`;
    return ok ? [] : [{ path: `rules.${i}.match.route`, message }];
  });
}

export function isoOf(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

function linkOf(s: string): string | undefined {
  try {
    const u = new URL(s);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
    return u.href.length <= RULE_LIMITS.linkBytes && !/[\s<>"]/.test(u.href) ? u.href : undefined;
  } catch {
    return undefined;
  }
}

/** A rule ready to match: its match split, its score, its times in milliseconds, its headers written once. */
export interface CompiledRule {
  readonly rule: Rule;
  readonly method: string | null;
  readonly template: string | null;
  readonly principal: string | null;
  readonly family: string | null;
  /** Higher is more specific: the client first (family > principal > any), then the route (both > template > method). */
  readonly score: number;
  readonly sunsetMs: number | null;
  /** Brownout windows [start, end) in milliseconds, by start. */
  readonly windows: readonly (readonly [number, number])[];
  readonly headers: Readonly<Record<string, string>>;
}

export function compileRule(rule: Rule): CompiledRule {
  const [m, t] = rule.match.route === '*' ? ['*', '*'] : rule.match.route.split(' ');
  const method = m === '*' || !m ? null : m;
  const template = t === '*' || !t ? null : t;
  const client = rule.match.client ?? '*';
  const [principal, family] = client === '*' ? [null, null] : [client.split('~')[0] ?? null, client.split('~')[1] ?? null];
  const clientScore = principal === null ? 0 : family === null ? 1 : 2;
  const routeScore = (template === null ? 0 : 2) + (method === null ? 0 : 1);
  const sunsetMs = rule.sunset === undefined ? null : Date.parse(rule.sunset);
  const windows = (rule.brownouts ?? []).map((b) => [Date.parse(b.start), Date.parse(b.start) + b.minutes * 60_000] as const)
    .sort((a, b) => a[0] - b[0]);
  return { rule, method, template, principal, family, score: clientScore * 4 + routeScore, sunsetMs, windows, headers: headersOf(rule) };
}

/** The in-band headers of a rule: RFC 9745 `Deprecation: @<epoch seconds>`, RFC 8594 `Sunset: <HTTP-date>`, `Link`. */
export function headersOf(rule: Rule): Record<string, string> {
  const h: Record<string, string> = { deprecation: `@${Math.floor(Date.parse(rule.deprecation) / 1000)}` };
  if (rule.sunset !== undefined) h.sunset = new Date(Date.parse(rule.sunset)).toUTCString();
  if (rule.link !== undefined) {
    h.link = `<${rule.link}>; rel="deprecation"; type="text/html"` + (rule.sunset !== undefined ? `, <${rule.link}>; rel="sunset"; type="text/html"` : '');
  }
  return h;
}

/** What applies to one request: the rule, and whether it is inside a brownout or past the sunset at that moment. */
export interface Verdict {
  readonly rule: CompiledRule;
  /** `announced`: headers only; `brownout`/`sunset`: refused (or, in observe mode, counted as refused). */
  readonly state: 'announced' | 'brownout' | 'sunset';
  /** The end of the brownout the request falls in. */
  readonly until?: number;
  readonly refuse: boolean;
}

export function verdictAt(c: CompiledRule, now: number): Verdict {
  const observe = c.rule.mode === 'observe';
  if (c.sunsetMs !== null && now >= c.sunsetMs) return { rule: c, state: 'sunset', refuse: !observe };
  for (const [start, end] of c.windows) {
    if (start > now) break;
    if (now < end) return { rule: c, state: 'brownout', until: end, refuse: !observe };
  }
  return { rule: c, state: 'announced', refuse: false };
}

/** The rules, matched per request: for each route the rules that may apply, most specific first (kept per route). */
export class RuleSet {
  readonly compiled: readonly CompiledRule[];
  private readonly byRoute = new Map<string, readonly CompiledRule[]>();

  constructor(readonly rules: readonly Rule[]) {
    this.compiled = rules.map(compileRule).sort((a, b) => b.score - a.score);
  }

  get empty(): boolean {
    return this.compiled.length === 0;
  }

  /** The rules whose route matches `method template`, most specific first. */
  forRoute(method: string, template: string): readonly CompiledRule[] {
    const key = `${method} ${template}`;
    let list = this.byRoute.get(key);
    if (!list) {
      list = this.compiled.filter((c) => (c.method === null || c.method === method) && (c.template === null || c.template === template));
      if (this.byRoute.size >= 1000) this.byRoute.clear();
      this.byRoute.set(key, list);
    }
    return list;
  }

  /** The most specific rule for a request: its route, its principal (`user:<uuid>`, `static:<id>`) and User-Agent family. */
  pick(method: string, template: string, principal: string, family: string): CompiledRule | undefined {
    for (const c of this.forRoute(method, template)) {
      if (c.principal !== null && c.principal !== principal) continue;
      if (c.family !== null && c.family !== family) continue;
      return c;
    }
    return undefined;
  }
}

/** The 410 of a refused request: its message (naming the sunset and the guide), extensions and headers. */
export function refusalOf(v: Verdict, route: string, now: number): { message: string; extensions: Record<string, unknown>; headers: Record<string, string> } {
  const r = v.rule.rule;
  const guide = r.link ? ` The migration guide: ${r.link}` : '';
  const sunset = r.sunset ? ` on ${r.sunset}` : '';
  const headers: Record<string, string> = { ...v.rule.headers };
  let message: string;
  if (v.state === 'sunset') message = `${route} was retired${sunset} (deprecated since ${r.deprecation}).${guide}`;
  else {
    const until = v.until ?? now;
    headers['retry-after'] = String(Math.max(1, Math.ceil((until - now) / 1000)));
    message = `${route} is deprecated and refused during a scheduled brownout until ${isoOf(until)}; it will be retired${sunset || ' soon'}.${guide}`;
  }
  const extensions: Record<string, unknown> = { rule: r.id, deprecation: r.deprecation, ...(r.sunset ? { sunset: r.sunset } : {}),
    ...(r.link ? { link: r.link } : {}), ...(v.state === 'brownout' ? { brownout_until: isoOf(v.until ?? now) } : {}) };
  return { message, extensions, headers };
}
